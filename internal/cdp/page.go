package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Page is a browser tab attached over the pipe.
type Page struct {
	b       *Browser
	session string
}

// NewPage opens a blank tab and attaches to it.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: att.SessionID}
	for _, domain := range []string{"Page.enable", "Runtime.enable"} {
		if err := b.call(ctx, p.session, domain, nil, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Navigate loads url and waits for its load event.
func (p *Page) Navigate(ctx context.Context, url string) error {
	loaded := p.b.waitEvent(p.session, "Page.loadEventFired")
	var res struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("cdp: navigate to %s: %s", url, res.ErrorText)
	}
	return loaded(ctx)
}

// Evaluate runs the JavaScript expression expr in the page, waits for it
// when it is a promise, and decodes its value (as JSON) into out (nil:
// ignored). A thrown exception is an error with its text.
func (p *Page) Evaluate(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	}, &res)
	if err != nil {
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		return fmt.Errorf("cdp: evaluate: %s %s", d.Text, d.Exception.Description)
	}
	if out != nil && len(res.Result.Value) > 0 {
		return json.Unmarshal(res.Result.Value, out)
	}
	return nil
}

// WaitFor waits until the JavaScript expression cond is true in the page,
// re-checking it whenever the DOM changes (a MutationObserver in the
// page: no polling from here), or until ctx is done.
func (p *Page) WaitFor(ctx context.Context, cond string) error {
	expr := `new Promise(resolve => {
	const check = () => { try { return !!(` + cond + `); } catch (e) { return false; } };
	if (check()) { resolve(true); return; }
	const obs = new MutationObserver(() => { if (check()) { obs.disconnect(); resolve(true); } });
	obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})`
	if err := p.Evaluate(ctx, expr, nil); err != nil {
		return fmt.Errorf("cdp: wait for %s: %w", cond, err)
	}
	return nil
}

// Click dispatches a click on the first element matching the CSS
// selector (SVG elements included).
func (p *Page) Click(ctx context.Context, selector string) error {
	sel, _ := json.Marshal(selector)
	expr := `(() => { const e = document.querySelector(` + string(sel) + `);
	if (!e) throw new Error("no element matches " + ` + string(sel) + `);
	e.dispatchEvent(new MouseEvent("click", {bubbles: true})); return true; })()`
	return p.Evaluate(ctx, expr, nil)
}

// Screenshot returns a PNG of the page's viewport.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := p.b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}
