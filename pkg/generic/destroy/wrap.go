package destroy

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// validate checks that kinds are outputs of the controller named name and
// not already among its inputs.
func validate(name string, inputs []controller.Input, outputs []controller.Output, kinds []resource.Kind) error {
	if len(kinds) == 0 {
		return state.NewInvalidError(nil, "destroy: controller %q: no kinds to destroy", name)
	}
	for i, k := range kinds {
		if err := resource.ValidateKind(k); err != nil {
			return state.NewInvalidError(nil, "destroy: controller %q: %w", name, err)
		}
		if !slices.ContainsFunc(outputs, func(o controller.Output) bool { return o.Type == k.Type() }) {
			return state.NewInvalidError(nil, "destroy: controller %q: %s is not one of its outputs", name, resource.KindString(k))
		}
		if slices.ContainsFunc(inputs, func(in controller.Input) bool { return in.Namespace == k.Namespace() && in.Type == k.Type() }) {
			return state.NewInvalidError(nil, "destroy: controller %q: %s is already one of its inputs", name, resource.KindString(k))
		}
		if slices.ContainsFunc(kinds[:i], func(o resource.Kind) bool { return resource.KindOf(o) == resource.KindOf(k) }) {
			return state.NewInvalidError(nil, "destroy: controller %q: %s given twice", name, resource.KindString(k))
		}
	}
	return nil
}

// declarations calls inner's declaration methods, turning a panic (user
// code) into an error of the invalid class.
func declarations(what string, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = state.NewInvalidError(nil, "destroy: %s: its declaration panicked: %v", what, p)
		}
	}()
	fn()
	return nil
}

// Wrap returns a Controller that is inner plus the destruction of inner's
// outputs of the kinds once they are tearing down with no finalizers: it
// declares them as destroy-ready inputs, and on every wake-up destroys the
// ready ones (with [Ready]) before passing the wake-up on to inner. Each kind
// must be one of inner's outputs and not one of its inputs; otherwise (and
// for a nil inner, or declarations of inner that panic) Wrap returns an
// error of the invalid class. The wrapped controller forwards Validate
// (controller.Validator) to inner when inner implements it.
func Wrap(inner controller.Controller, kinds ...resource.Kind) (controller.Controller, error) {
	if usercode.IsNil(inner) {
		return nil, state.NewInvalidError(nil, "destroy: Wrap: nil controller")
	}
	var (
		name    string
		inputs  []controller.Input
		outputs []controller.Output
	)
	if err := declarations("Wrap", func() { name, inputs, outputs = inner.Name(), inner.Inputs(), inner.Outputs() }); err != nil {
		return nil, err
	}
	if err := validate(name, inputs, outputs, kinds); err != nil {
		return nil, err
	}
	return &wrapped{inner: inner, kinds: slices.Clone(kinds)}, nil
}

// wrapped is the Controller built by [Wrap].
type wrapped struct {
	inner controller.Controller
	kinds []resource.Kind
}

func (w *wrapped) Name() string { return w.inner.Name() }

func (w *wrapped) Inputs() []controller.Input {
	inputs := slices.Clone(w.inner.Inputs())
	for _, k := range w.kinds {
		inputs = append(inputs, Input(k))
	}
	return inputs
}

func (w *wrapped) Outputs() []controller.Output { return w.inner.Outputs() }

// Validate forwards to inner's Validate, if it has one.
func (w *wrapped) Validate() error { return validateInner(w.inner) }

// validateInner returns the result of inner's Validate, or nil when inner
// does not implement controller.Validator.
func validateInner(inner any) error {
	if v, ok := inner.(controller.Validator); ok {
		return v.Validate()
	}
	return nil
}

// Run runs inner with a runtime whose events pass through the destruction
// of ready outputs. It returns after inner's Run and the forwarding
// goroutine have both returned: inner's error first, else the forwarder's
// (a failed destruction, which also stops inner).
func (w *wrapped) Run(ctx context.Context, r controller.Runtime, logger *zap.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	proxy := &proxyRuntime{Runtime: r, back: make(chan struct{}, 1)}
	if f, ok := r.(passForwarder); ok {
		proxy.start = f.ForwardPasses()
	}
	done := make(chan struct{})
	var fwdErr error
	go func() {
		defer close(done)
		if fwdErr = w.forward(ctx, r, proxy); fwdErr != nil {
			cancel()
		}
	}()
	defer func() {
		cancel()
		<-done
	}()
	err := w.inner.Run(ctx, proxy, logger)
	cancel()
	<-done
	if err != nil {
		return err
	}
	return fwdErr
}

// forward destroys the ready outputs on every event of r, then passes the
// event on to inner. The pass the event started is inner's: r.EventCh,
// which ends the pass for the Runtime (its quiescence check), is called
// again only once inner took the event and called EventCh again.
func (w *wrapped) forward(ctx context.Context, r controller.Runtime, p *proxyRuntime) error {
	ch := r.EventCh()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		}
		if back, err := w.handOver(ctx, r, p, ch); !back || err != nil {
			return err
		}
		ch = r.EventCh()
	}
}

// handOver destroys the ready outputs and passes an event to inner, and
// waits until inner took it and called EventCh again; events of r (on ch)
// that come meanwhile do the same and coalesce into one more event for
// inner. An inner that keeps the channel of one EventCh call takes events
// from it and never comes back: the Runtime then sees it busy, as it sees a
// Controller that keeps its channel. back is false when ctx is done.
func (w *wrapped) handOver(ctx context.Context, r controller.Runtime, p *proxyRuntime, ch <-chan controller.ReconcileEvent) (back bool, err error) {
	if err := w.ready(ctx, r); err != nil {
		return false, err
	}
	pending, sentOn := true, uint64(0)
	for {
		cur, calls := p.current()
		if !pending && calls > sentOn {
			return true, nil
		}
		var send chan<- controller.ReconcileEvent
		if pending {
			send = cur // nil until inner's first EventCh call
		}
		select {
		case <-ctx.Done():
			return false, nil
		case send <- controller.ReconcileEvent{}:
			pending, sentOn = false, calls
		case <-p.back:
		case <-ch:
			// Another pass starts for the Runtime: one EventCh call per
			// event taken keeps the controller busy until the last call,
			// made once inner is back.
			ch = r.EventCh()
			if err := w.ready(ctx, r); err != nil {
				return false, err
			}
			pending = true
		}
	}
}

// ownPasser is a Runtime whose goroutines other than the one calling
// EventCh can make passes of their own (the Runtime's, while a flight
// recorder notes what each pass read).
type ownPasser interface {
	OwnPass(ctx context.Context) context.Context
}

// passForwarder is a Runtime whose passes, while a flight recorder notes
// what each pass read, can be started where inner calls EventCh rather
// than where the forwarder does (the Runtime's): inner's pass is then
// what inner read and wrote from one of its EventCh calls to the next,
// also when the forwarder takes an event of r in the middle of it.
type passForwarder interface {
	ForwardPasses() (start func())
}

// ready destroys the ready outputs of the kinds, in a pass of its own when
// r makes one: its reads and destroys are not inner's pass's.
func (w *wrapped) ready(ctx context.Context, r controller.Runtime) error {
	if o, ok := r.(ownPasser); ok {
		ctx = o.OwnPass(ctx)
	}
	if _, err := Ready(ctx, r, w.inner.Name(), w.kinds...); err != nil && ctx.Err() == nil {
		return fmt.Errorf("destroy: controller %q: %w", w.inner.Name(), err)
	}
	return nil
}

// proxyRuntime is the runtime inner sees: r with the forwarded events. Each
// EventCh call of inner gets a channel of its own, so that the forwarder
// knows which call an event it passed on answers.
type proxyRuntime struct {
	controller.Runtime
	back chan struct{} // 1-buffered: inner called EventCh
	// start starts inner's pass (passForwarder), nil when r has none.
	start func()

	mu    sync.Mutex
	calls uint64                         // inner's EventCh calls
	cur   chan controller.ReconcileEvent // the channel of the last call
}

func (p *proxyRuntime) EventCh() <-chan controller.ReconcileEvent {
	if p.start != nil {
		p.start()
	}
	p.mu.Lock()
	p.calls++
	p.cur = make(chan controller.ReconcileEvent)
	ch := p.cur
	p.mu.Unlock()
	select {
	case p.back <- struct{}{}:
	default:
	}
	return ch
}

// current returns the channel of inner's last EventCh call and the count
// of calls.
func (p *proxyRuntime) current() (chan controller.ReconcileEvent, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur, p.calls
}

// WrapQ returns a QController that is inner plus the destruction of
// inner's outputs of the kinds once they are tearing down with no
// finalizers: it declares them as mapped destroy-ready inputs, and its
// MapInput destroys such an output (with [IfReady]) and maps it to no item.
// Each kind must be one of inner's outputs and not one of its inputs;
// otherwise (and for a nil inner, or declarations of inner that panic)
// WrapQ returns an error of the invalid class. The wrapped controller
// forwards Validate (controller.Validator) to inner when inner implements
// it.
func WrapQ(inner controller.QController, kinds ...resource.Kind) (controller.QController, error) {
	if usercode.IsNil(inner) {
		return nil, state.NewInvalidError(nil, "destroy: WrapQ: nil controller")
	}
	var (
		name string
		s    controller.QSettings
	)
	if err := declarations("WrapQ", func() { name, s = inner.Name(), inner.Settings() }); err != nil {
		return nil, err
	}
	if err := validate(name, s.Inputs, s.Outputs, kinds); err != nil {
		return nil, err
	}
	return &wrappedQ{QController: inner, kinds: slices.Clone(kinds)}, nil
}

// wrappedQ is the QController built by [WrapQ].
type wrappedQ struct {
	controller.QController
	kinds []resource.Kind
}

func (w *wrappedQ) Settings() controller.QSettings {
	s := w.QController.Settings()
	s.Inputs = slices.Clone(s.Inputs)
	for _, k := range w.kinds {
		s.Inputs = append(s.Inputs, QInput(k))
	}
	return s
}

// Validate forwards to inner's Validate, if it has one.
func (w *wrappedQ) Validate() error { return validateInner(w.QController) }

func (w *wrappedQ) MapInput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if slices.ContainsFunc(w.kinds, func(k resource.Kind) bool { return resource.KindOf(k) == resource.KindOf(ptr) }) {
		if _, err := IfReady(ctx, r, w.Name(), ptr); err != nil {
			return nil, fmt.Errorf("destroy: controller %q: %w", w.Name(), err)
		}
		return nil, nil
	}
	return w.QController.MapInput(ctx, logger, r, ptr)
}
