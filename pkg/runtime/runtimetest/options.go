package runtimetest

import (
	"sync"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// AwaitOption configures one call of the assertion-style helpers
// ([AssertResource], [AssertResources], [AssertNoResource], [Destroy],
// [Teardown]).
type AwaitOption func(*awaitConfig)

type awaitConfig struct {
	timeout   time.Duration
	namespace resource.Namespace
	owner     resource.Owner
}

// Within sets how long the call waits before it fails the test (default:
// the test's timeout, see [SetTimeout], else [DefaultTimeout]). Ported
// tests that waited 5 s per assertion say Within(5 * time.Second).
func Within(d time.Duration) AwaitOption {
	return func(c *awaitConfig) { c.timeout = d }
}

// InNamespace makes the call address resources in ns instead of the
// resource type's default namespace.
func InNamespace(ns resource.Namespace) AwaitOption {
	return func(c *awaitConfig) { c.namespace = ns }
}

// AsOwner makes [Destroy] and [Teardown] act as owner (for resources a
// controller owns; by default the test acts as no owner).
func AsOwner(owner resource.Owner) AwaitOption {
	return func(c *awaitConfig) { c.owner = owner }
}

// timeouts holds the timeouts set by SetTimeout: testing.TB → time.Duration.
var timeouts sync.Map

// SetTimeout sets how long every wait of this package waits in the test
// tb (and not in others) from now on: Await, AwaitGone, AwaitAll,
// AwaitMetadata, AwaitState and the assertion-style helpers (a [Within]
// option still decides for its call). Start's Runtime keeps the timeout of
// its [WithTimeout] for Settle and stop. The setting ends with the test.
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

// awaitOptions applies opts over tb's defaults.
func awaitOptions(tb testing.TB, ns resource.Namespace, opts []AwaitOption) awaitConfig {
	c := awaitConfig{timeout: timeoutOf(tb), namespace: ns}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}
