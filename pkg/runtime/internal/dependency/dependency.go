// Package dependency is the Runtime's dependency database: which controller
// declared which inputs (static and dynamic) and outputs, validated when they
// are added (rule C1), plus an immutable per-kind subscription snapshot that
// the event router reads without locking or allocating.
//
// The database is safe for concurrent use. Writers (registration,
// UpdateInputs) serialize on a mutex and publish a fresh [Snapshot] with an
// atomic pointer swap; readers (the router, once per event batch) load the
// current snapshot and never see a partially built one.
package dependency

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Family tells Controllers and QControllers apart: the input kinds each may
// declare differ. Its String form ("controller", "qcontroller") names a
// controller in errors; the Runtime reports it as an observe.Family.
type Family uint8

// The families.
const (
	FamilyController Family = iota
	FamilyQController
)

// String returns "controller" or "qcontroller".
func (f Family) String() string {
	if f == FamilyQController {
		return "qcontroller"
	}
	return "controller"
}

// Record is what one controller declared. H is the Runtime's handle for the
// controller, carried into subscriptions so that the router reaches the
// controller without a lookup.
type Record[H any] struct {
	Handle  H
	Name    string
	Static  []controller.Input
	Dynamic []controller.Input
	Outputs []controller.Output
	Family  Family
}

// Subscription is one declared input of one controller, as the router sees
// it.
type Subscription[H any] struct {
	Handle H
	// Name is the controller's name (the owner of its outputs).
	Name string
	// ID is the one ID the input fires for when HasID is set.
	ID    resource.ID
	HasID bool
	// Kind is the input kind (controller.InputWeak ...).
	Kind controller.InputKind
	// Routed counts what the router delivered through this input (see
	// [DB.InputCounts]); it is the same counter in every snapshot.
	Routed *atomic.Uint64
}

// Snapshot is an immutable view of every subscription, by kind.
type Snapshot[H any] struct {
	byKey map[resource.KindKey][]Subscription[H]
}

// For returns the subscriptions to a kind. The slice is shared and must not
// be modified.
func (s *Snapshot[H]) For(k resource.KindKey) []Subscription[H] {
	if s == nil {
		return nil
	}
	return s.byKey[k]
}

// Keys returns every kind that has at least one subscription, sorted.
func (s *Snapshot[H]) Keys() []resource.KindKey {
	if s == nil {
		return nil
	}
	return slices.SortedFunc(maps.Keys(s.byKey), resource.KindKey.Compare)
}

// outputOwners records who writes an output type.
type outputOwners struct {
	exclusive string   // the exclusive owner, "" when none
	shared    []string // controllers declaring it shared
}

// DB is the dependency database. The zero value is not usable; use [New].
type DB[H any] struct {
	snapshot atomic.Pointer[Snapshot[H]]

	mu sync.Mutex
	// records by controller name; protected by mu.
	records map[string]*Record[H]
	// outputs by type; protected by mu.
	outputs map[resource.Type]*outputOwners
	// routed are the inputs' delivery counters, by controller name and
	// input; protected by mu (the counters themselves are atomic).
	routed map[string]map[controller.Input]*atomic.Uint64
}

// New returns an empty database.
func New[H any]() *DB[H] {
	db := &DB[H]{
		records: map[string]*Record[H]{},
		outputs: map[resource.Type]*outputOwners{},
		routed:  map[string]map[controller.Input]*atomic.Uint64{},
	}
	db.snapshot.Store(&Snapshot[H]{byKey: map[resource.KindKey][]Subscription[H]{}})
	return db
}

// Snapshot returns the current subscription snapshot. It never allocates.
func (db *DB[H]) Snapshot() *Snapshot[H] { return db.snapshot.Load() }

// Add validates rec (rule C1) and adds it. A refused record leaves the
// database unchanged; the error is of the invalid class
// ([state.IsInvalidError]) and names the controller.
func (db *DB[H]) Add(rec Record[H]) error {
	if err := validateRecord(&rec); err != nil {
		return err
	}

	db.mu.Lock()
	defer db.mu.Unlock()

	if _, dup := db.records[rec.Name]; dup {
		return state.NewInvalidError(nil, "register %s %q: a controller with this name is already registered", rec.Family, rec.Name)
	}

	for _, out := range rec.Outputs {
		owners := db.outputs[out.Type]
		if owners == nil {
			continue
		}
		switch {
		case out.Kind == controller.OutputExclusive && owners.exclusive != "":
			return state.NewInvalidError(nil, "register %s %q: output %q is already exclusively owned by %q", rec.Family, rec.Name, out.Type, owners.exclusive)
		case out.Kind == controller.OutputExclusive && len(owners.shared) > 0:
			return state.NewInvalidError(nil, "register %s %q: exclusive output %q is declared shared by %q", rec.Family, rec.Name, out.Type, owners.shared[0])
		case out.Kind == controller.OutputShared && owners.exclusive != "":
			return state.NewInvalidError(nil, "register %s %q: shared output %q is exclusively owned by %q", rec.Family, rec.Name, out.Type, owners.exclusive)
		}
	}

	stored := rec
	stored.Static = slices.Clone(rec.Static)
	stored.Dynamic = inputSet(rec.Dynamic)
	stored.Outputs = slices.Clone(rec.Outputs)
	db.records[rec.Name] = &stored

	for _, out := range rec.Outputs {
		owners := db.outputs[out.Type]
		if owners == nil {
			owners = &outputOwners{}
			db.outputs[out.Type] = owners
		}
		if out.Kind == controller.OutputExclusive {
			owners.exclusive = rec.Name
		} else {
			owners.shared = append(owners.shared, rec.Name)
		}
	}

	db.rebuildLocked()
	return nil
}

// SetDynamic replaces the dynamic inputs of the named controller after
// validating them, and reports whether they changed. Inputs are a set:
// order and duplicates do not matter, and replacing the inputs with an
// equal set changes nothing (no new snapshot is published). The error is of
// the invalid class.
func (db *DB[H]) SetDynamic(name string, inputs []controller.Input) (changed bool, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()

	rec := db.records[name]
	if rec == nil {
		return false, state.NewInvalidError(nil, "update inputs of %q: no such controller", name)
	}
	if err := validateDynamic(rec, inputs); err != nil {
		return false, err
	}
	set := inputSet(inputs)
	if slices.EqualFunc(set, rec.Dynamic, func(a, b controller.Input) bool { return a.Compare(b) == 0 }) {
		return false, nil
	}
	rec.Dynamic = set
	db.rebuildLocked()
	return true, nil
}

// ChangesDynamic reports whether SetDynamic(name, inputs) would change the
// dynamic inputs of the named controller (false for an unknown name).
func (db *DB[H]) ChangesDynamic(name string, inputs []controller.Input) bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	rec := db.records[name]
	return rec != nil && !slices.EqualFunc(inputSet(inputs), rec.Dynamic, func(a, b controller.Input) bool { return a.Compare(b) == 0 })
}

// inputSet returns a sorted copy of inputs without duplicates (nil when
// empty), the form in which dynamic inputs are stored and compared.
func inputSet(inputs []controller.Input) []controller.Input {
	if len(inputs) == 0 {
		return nil
	}
	set := slices.Clone(inputs)
	slices.SortFunc(set, controller.Input.Compare)
	return slices.CompactFunc(set, func(a, b controller.Input) bool { return a.Compare(b) == 0 })
}

// Inputs returns the static and dynamic inputs of the named controller.
func (db *DB[H]) Inputs(name string) (static, dynamic []controller.Input) {
	db.mu.Lock()
	defer db.mu.Unlock()

	rec := db.records[name]
	if rec == nil {
		return nil, nil
	}
	return slices.Clone(rec.Static), slices.Clone(rec.Dynamic)
}

// Records returns a copy of every record, sorted by name.
func (db *DB[H]) Records() []Record[H] {
	db.mu.Lock()
	defer db.mu.Unlock()

	out := make([]Record[H], 0, len(db.records))
	for _, rec := range db.records {
		c := *rec
		c.Static = slices.Clone(rec.Static)
		c.Dynamic = slices.Clone(rec.Dynamic)
		c.Outputs = slices.Clone(rec.Outputs)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Record[H]) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// rebuildLocked publishes a new snapshot built from every record. The caller
// holds mu.
func (db *DB[H]) rebuildLocked() {
	byKey := map[resource.KindKey][]Subscription[H]{}
	names := make([]string, 0, len(db.records))
	for name := range db.records {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic routing order
	for _, name := range names {
		rec := db.records[name]
		for _, list := range [][]controller.Input{rec.Static, rec.Dynamic} {
			for _, in := range list {
				k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
				id, hasID := in.ID.Get()
				byKey[k] = append(byKey[k], Subscription[H]{
					Handle: rec.Handle,
					Name:   rec.Name,
					ID:     id,
					HasID:  hasID,
					Kind:   in.Kind,
					Routed: db.counterLocked(rec.Name, in),
				})
			}
		}
	}
	for k, subs := range byKey {
		byKey[k] = slices.Clip(subs)
	}
	db.snapshot.Store(&Snapshot[H]{byKey: byKey})
}
