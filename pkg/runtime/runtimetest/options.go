package runtimetest

import (
	"sync"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// DefaultTimeout is how long every wait of this package waits before it
// fails the test (in virtual time inside a synctest bubble), unless
// [SetTimeout] or [Within] says otherwise.
const DefaultTimeout = 30 * time.Second

// WaitOption configures one call: its timeout ([Within]), its namespace
// ([InNamespace]), the owner it acts as or selects ([AsOwner]), the
// controllers [Settle] lets be ([Except]). A call ignores the options
// that do not concern it.
type WaitOption func(*waitConfig)

type waitConfig struct {
	timeout   time.Duration
	namespace resource.Namespace
	owner     *resource.Owner
	except    []string
}

// Within sets how long the call waits before it fails the test: the
// per-call override of the test's timeout ([SetTimeout], else
// [DefaultTimeout]). Ported tests that waited 5 s per assertion say
// Within(5 * time.Second).
func Within(d time.Duration) WaitOption {
	return func(c *waitConfig) { c.timeout = d }
}

// InNamespace makes the call address resources in ns instead of the
// resource type's default namespace.
func InNamespace(ns resource.Namespace) WaitOption {
	return func(c *waitConfig) { c.namespace = ns }
}

// AsOwner makes [Destroy], [Teardown] and [DestroyAll] act as owner (for
// resources a controller owns; by default the test acts as no owner), and
// [ResourceIDs] and [DestroyAll] select only the resources owner owns.
func AsOwner(owner resource.Owner) WaitOption {
	return func(c *waitConfig) { c.owner = &owner }
}

// Except makes [Settle] count the named controllers as idle whatever they
// do: for a test that holds them on purpose (a pass or a reconcile blocked
// until the test lets it go) while it waits for the rest. Before Run has
// started, the Runtime is not idle whatever Except names: the held
// controllers' input kinds are not watched yet.
func Except(controllers ...string) WaitOption {
	return func(c *waitConfig) { c.except = append(c.except, controllers...) }
}

// timeouts holds the timeouts set by SetTimeout: testing.TB → time.Duration.
var timeouts sync.Map

// SetTimeout sets how long every wait of this package waits in the test
// tb (and not in others) from now on: the assertions, Settle, and the
// stop of Start's Runtime. It is the one timeout knob; a [Within] option
// still decides for its call. The setting ends with the test.
func SetTimeout(tb testing.TB, d time.Duration) {
	if _, loaded := timeouts.Swap(tb, d); !loaded {
		tb.Cleanup(func() { timeouts.Delete(tb) })
	}
}

// timeoutOf returns the wait timeout of tb: SetTimeout's, else
// DefaultTimeout.
func timeoutOf(tb testing.TB) time.Duration {
	if d, ok := timeouts.Load(tb); ok {
		return d.(time.Duration)
	}
	return DefaultTimeout
}

// waitOptions applies opts over tb's defaults (ns: the namespace of the
// call's resource type).
func waitOptions(tb testing.TB, ns resource.Namespace, opts []WaitOption) waitConfig {
	c := waitConfig{timeout: timeoutOf(tb), namespace: ns}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// kindOptions applies opts over tb's defaults for a call on the resources
// of type R, and returns the kind the call addresses (R's type, in R's
// default namespace or InNamespace's).
func kindOptions[R typed.ResourceWithDefinition](tb testing.TB, opts []WaitOption) (resource.Kind, waitConfig) {
	def := (*new(R)).Definition()
	c := waitOptions(tb, def.DefaultNamespace, opts)
	return resource.NewKind(c.namespace, def.Type), c
}

// ownerOf is the owner the call acts as: AsOwner's, else none.
func (c waitConfig) ownerOf() resource.Owner {
	if c.owner == nil {
		return ""
	}
	return *c.owner
}
