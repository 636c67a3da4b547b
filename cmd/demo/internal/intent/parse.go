package intent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// Defaults applied to fields the file leaves out.
const (
	DefaultMTU         = 1500
	DefaultRouteMetric = 100
)

// Intent is a validated intent file.
type Intent struct {
	// File is the name the intent was read from.
	File string
	// Links are the links in file order.
	Links []Link
}

// Link is one link of an intent.
type Link struct {
	Name string
	Spec netres.LinkSpecSpec
}

// rawFile, rawLink and rawRoute mirror the JSON document.
type rawFile struct {
	Links []rawLink `json:"links"`
}

type rawLink struct {
	MTU       *int       `json:"mtu"`
	Name      string     `json:"name"`
	Gateway   string     `json:"gateway"`
	Addresses []string   `json:"addresses"`
	Routes    []rawRoute `json:"routes"`
	DNS       []string   `json:"dns"`
}

type rawRoute struct {
	Metric      *int   `json:"metric"`
	Destination string `json:"destination"`
	Gateway     string `json:"gateway"`
}

// Load reads and parses the intent file at path (see [Parse]).
func Load(path string) (*Intent, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("intent file %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates data, read from file, and returns the intent it
// describes, or an [*Error] listing every problem.
func Parse(file string, data []byte) (*Intent, error) {
	if off, msg, ok := checkSyntax(data); !ok {
		line, col := lineCol(data, off)
		return nil, &Error{File: file, Problems: []Problem{{Line: line, Col: col, Message: msg}}}
	}

	w := newWalker(data)
	if err := w.value("", fileSchema); err != nil {
		// Unreachable for data that json.Unmarshal accepted.
		return nil, &Error{File: file, Problems: []Problem{{Line: 1, Col: 1, Message: "invalid JSON: " + err.Error()}}}
	}
	if len(w.problems) > 0 {
		return nil, w.errorFor(file)
	}

	var raw rawFile
	if err := json.Unmarshal(data, &raw); err != nil {
		// Unreachable: the walker checked every type.
		return nil, &Error{File: file, Problems: []Problem{{Line: 1, Col: 1, Message: err.Error()}}}
	}
	v := validator{walker: w}
	in := &Intent{File: file, Links: v.links(raw.Links)}
	if len(w.problems) > 0 {
		return nil, w.errorFor(file)
	}
	return in, nil
}

// checkSyntax reports whether data is exactly one JSON value and, if not,
// the offset of the first problem and a message.
func checkSyntax(data []byte) (off int, msg string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc any
	err := dec.Decode(&doc)
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return len(data), "the file is empty; expected a JSON object", false
	case errors.Is(err, io.ErrUnexpectedEOF):
		return len(data), "invalid JSON: unexpected end of file", false
	case errors.As(err, &se):
		return int(se.Offset) - 1, "invalid JSON: " + se.Error(), false // Offset is just past the bad byte
	case err != nil:
		return 0, "invalid JSON: " + err.Error(), false
	}
	end := int(dec.InputOffset())
	if err := dec.Decode(&doc); !errors.Is(err, io.EOF) {
		for end < len(data) && strings.IndexByte(" \t\r\n", data[end]) >= 0 {
			end++
		}
		return end, "invalid JSON: unexpected data after the top-level value", false
	}
	return 0, "", true
}

func (w *walker) errorFor(file string) *Error {
	slices.SortStableFunc(w.problems, func(a, b located) int { return cmp.Compare(a.off, b.off) })
	e := &Error{File: file}
	for _, p := range w.problems {
		line, col := lineCol(w.data, p.off)
		e.Problems = append(e.Problems, Problem{Field: p.field, Message: p.msg, Line: line, Col: col})
	}
	return e
}

// validator checks the values of a document whose shape is valid.
type validator struct {
	*walker
	addrOwner map[netip.Addr]string // address -> field path that declared it
}

// at reports a problem at the value of field.
func (v *validator) at(field, format string, args ...any) {
	v.problem(v.pos[field], field, format, args...)
}

var linkNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,14}$`)

func (v *validator) links(raw []rawLink) []Link {
	v.addrOwner = make(map[netip.Addr]string)
	names := make(map[string]string) // name -> field that declared it
	out := make([]Link, 0, len(raw))
	for i, rl := range raw {
		p := "links[" + strconv.Itoa(i) + "]"
		nameField := p + ".name"
		switch {
		case rl.Name == "":
			v.at(nameField, "must not be empty")
		case !linkNameRE.MatchString(rl.Name):
			v.at(nameField, "%q is not a link name: 1 to 15 characters, a letter then letters, digits, '.', '_' or '-'", rl.Name)
		case names[rl.Name] != "":
			v.at(nameField, "duplicate link name %q (first declared at %s)", rl.Name, names[rl.Name])
		default:
			names[rl.Name] = nameField
		}
		out = append(out, Link{Name: rl.Name, Spec: v.link(p, rl)})
	}
	return out
}

func (v *validator) link(p string, rl rawLink) netres.LinkSpecSpec {
	spec := netres.LinkSpecSpec{MTU: DefaultMTU}

	hasV6 := false
	for j, s := range rl.Addresses {
		f := p + ".addresses[" + strconv.Itoa(j) + "]"
		pfx, err := netip.ParsePrefix(s)
		switch {
		case err != nil:
			v.at(f, "%q is not an address with a prefix length, such as 10.0.0.2/24", s)
			continue
		case pfx.Addr().Zone() != "" || !pfx.Addr().IsGlobalUnicast():
			v.at(f, "%s is not a global or private unicast address", pfx.Addr())
			continue
		case slices.Contains(spec.Addresses, pfx):
			v.at(f, "duplicate address %s", pfx)
			continue
		case v.addrOwner[pfx.Addr()] != "":
			v.at(f, "address %s is already declared at %s", pfx.Addr(), v.addrOwner[pfx.Addr()])
			continue
		}
		v.addrOwner[pfx.Addr()] = f
		hasV6 = hasV6 || pfx.Addr().Is6()
		spec.Addresses = append(spec.Addresses, pfx)
	}

	if rl.MTU != nil {
		spec.MTU = *rl.MTU
		switch {
		case spec.MTU < 68 || spec.MTU > 65535:
			v.at(p+".mtu", "must be between 68 and 65535, got %d", spec.MTU)
		case hasV6 && spec.MTU < 1280:
			v.at(p+".mtu", "must be at least 1280 on a link with IPv6 addresses, got %d", spec.MTU)
		}
	}

	if rl.Gateway != "" {
		if gw, ok := v.onLinkAddr(p+".gateway", rl.Gateway, spec.Addresses); ok {
			spec.Gateway = gw
		}
	}

	var dsts []netip.Prefix
	for j, rr := range rl.Routes {
		f := p + ".routes[" + strconv.Itoa(j) + "]"
		r := netres.RouteIntent{Metric: DefaultRouteMetric}
		dst, err := netip.ParsePrefix(rr.Destination)
		switch {
		case err != nil:
			v.at(f+".destination", "%q is not a network with a prefix length, such as 192.168.10.0/24", rr.Destination)
		case dst.Masked() != dst:
			v.at(f+".destination", "%s has host bits set; the network is %s", dst, dst.Masked())
		case dst.Bits() == 0:
			v.at(f+".destination", "a default route comes from the link's \"gateway\" field, not from routes")
		case slices.Contains(dsts, dst):
			v.at(f+".destination", "duplicate route to %s", dst)
		default:
			dsts = append(dsts, dst)
			r.Destination = dst
		}
		if gw, ok := v.onLinkAddr(f+".gateway", rr.Gateway, spec.Addresses); ok {
			r.Gateway = gw
			if r.Destination.IsValid() && gw.Is4() != r.Destination.Addr().Is4() {
				v.at(f+".gateway", "gateway %s and destination %s are of different address families", gw, r.Destination)
			}
		}
		if rr.Metric != nil {
			if *rr.Metric < 1 || *rr.Metric > 65535 {
				v.at(f+".metric", "must be between 1 and 65535, got %d", *rr.Metric)
			} else {
				r.Metric = uint32(*rr.Metric)
			}
		}
		spec.Routes = append(spec.Routes, r)
	}

	for j, s := range rl.DNS {
		f := p + ".dns[" + strconv.Itoa(j) + "]"
		a, err := netip.ParseAddr(s)
		switch {
		case err != nil:
			v.at(f, "%q is not an IP address", s)
		case a.Zone() != "" || a.IsUnspecified() || a.IsMulticast():
			v.at(f, "%s cannot be a DNS server", a)
		case slices.Contains(spec.DNSServers, a):
			v.at(f, "duplicate DNS server %s", a)
		default:
			spec.DNSServers = append(spec.DNSServers, a)
		}
	}
	return spec
}

// onLinkAddr parses a gateway at field and checks that one of addrs
// contains it.
func (v *validator) onLinkAddr(field, s string, addrs []netip.Prefix) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		v.at(field, "%q is not an IP address", s)
		return netip.Addr{}, false
	}
	if slices.ContainsFunc(addrs, func(p netip.Prefix) bool { return p.Addr() == a }) {
		v.at(field, "gateway %s is one of the link's own addresses", a)
		return netip.Addr{}, false
	}
	if !slices.ContainsFunc(addrs, func(p netip.Prefix) bool { return p.Contains(a) }) {
		v.at(field, "gateway %s is not on-link: no address of this link contains it (addresses: %v)", a, addrs)
		return netip.Addr{}, false
	}
	return a, true
}
