package runtime

import (
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/state"
)

// IndexFunc returns the keys under which a custom index lists a resource:
// none, one or several (a key returned twice counts once). It is handed the
// state's shared, read-only snapshot, which it must never change, and must
// depend on nothing but the resource. safe.IndexFunc adapts a typed one.
type IndexFunc func(resource.Resource) []string

// index is a custom index of a cached kind (see [WithIndex]).
type index struct {
	namespace resource.Namespace
	typ       resource.Type
	name      string
	fn        IndexFunc
}

// WithIndex registers the custom index name, computed by fn, on the kind
// ns/typ, which must be cached ([WithCachedResource]). Controllers list
// by it with [controller.IndexReader] (safe.ReaderListByIndex): the
// resources for which fn returned the key, at the cost of reading only
// them. The index follows the cache exactly: every creation, update
// (labels or spec changing the keys), destruction, and the controller's
// own writes at once. fn runs once per change of a resource, on the kind's
// watch or in the writer's call, never under a Runtime lock; a panic in it
// is logged with its stack and lists that resource version under no key of
// that index. An index on a kind that is not cached, an empty name, a nil
// fn or an index registered twice for a kind is an invalid option.
func WithIndex(ns resource.Namespace, typ resource.Type, name string, fn IndexFunc) Option {
	return func(o *options) {
		o.indexes = append(o.indexes, index{namespace: ns, typ: typ, name: name, fn: fn})
	}
}

// validateIndexes reports the first unusable index as an invalid-class
// error.
func (o *options) validateIndexes() error {
	cached := map[resource.KindKey]bool{}
	for _, k := range o.cachedKinds {
		cached[resource.KindOf(k)] = true
	}
	type name struct {
		k    resource.KindKey
		name string
	}
	seen := map[name]bool{}
	for _, ix := range o.indexes {
		k := resource.KindOf(resource.NewKind(ix.namespace, ix.typ))
		switch {
		case ix.name == "":
			return state.NewInvalidError(nil, "runtime options: index on %s: empty name", k)
		case ix.fn == nil:
			return state.NewInvalidError(nil, "runtime options: index %q on %s: nil function", ix.name, k)
		case !cached[k]:
			return state.NewInvalidError(nil, "runtime options: index %q on %s: the kind is not cached (WithCachedResource)", ix.name, k)
		case seen[name{k, ix.name}]:
			return state.NewInvalidError(nil, "runtime options: index %q on %s: registered twice", ix.name, k)
		}
		seen[name{k, ix.name}] = true
	}
	return nil
}

// addIndexes adds the indexes of the options to the caches; a panic of an
// index function is logged at ERROR with its stack.
func (r *Runtime) addIndexes() {
	for _, ix := range r.opts.indexes {
		k := resource.KindOf(resource.NewKind(ix.namespace, ix.typ))
		elog := outcome.EngineLogger(r.logger).With(zap.Stringer("kind", k))
		r.caches.Get(k).AddIndex(ix.name, cache.IndexFunc(ix.fn), func(index string, id resource.ID, p *usercode.Panic) {
			elog.Error("index function panicked; the resource is listed under no key of the index",
				zap.String("index", index), zap.String("id", id), zap.String("panic", usercode.Sprint(p.Value)), outcome.StackField(p))
		})
	}
}
