package typed

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource/internal/speceq"
)

// copyMode is how a plan copies a spec.
type copyMode uint8

const (
	copyAssign  copyMode = iota // plain value: assignment is a deep copy
	copyMethod                  // func (S) DeepCopy() S
	copyInto                    // func (*S) DeepCopyInto(*S), as deepcopy-gen writes
	copyPtr                     // func (*S) DeepCopy() *S, as deepcopy-gen writes
	copyDeep                    // assignment, then the deep plan
	copyRefused                 // S cannot be copied: panic with err
	copyFunc                    // copyFn: CloneVT, or a SpecMethods hook
)

// eqMode is how a plan compares two specs (rule R1).
type eqMode uint8

const (
	eqDeep      eqMode = iota // speceq: deep, nil == empty, times by instant
	eqOperator                // ==, which is deep equality for S
	eqMethod                  // func (S) Equal(any) bool
	eqPtrMethod               // func (*S) Equal(any) bool
	eqFunc                    // eqFn: EqualVT, or a SpecMethods hook
)

// plan is how specs of type S are copied and compared. It is computed
// once per type (see planOf), by reflection; copying and comparing with it
// inspects no type.
type plan[S any] struct {
	copyMode   copyMode
	eqMode     eqMode
	method     func(S) S
	into       func(*S, *S)
	ptr        func(*S) *S
	equalFn    func(S, any) bool
	ptrEqualFn func(*S, any) bool
	copyFn     func(S) S
	eqFn       func(S, S) bool
	sizeFn     func(S) int
	deep       *deepPlan
	spec       reflect.Type
	err        *CopyError
	// fixedSize: S holds no strings nor references, so its memory is its
	// size (see ApproxSize).
	fixedSize bool
	// userFree: copying and sizing S run no user code (see
	// Resource.CopiesWithoutUserCode).
	userFree bool
	// samePlan is how specs are compared by their memory (see
	// Identical), built on first use.
	sameOnce sync.Once
	samePlan *samePlan
}

// plans caches the plan of every spec type: reflect.Type → *plan[S].
var plans sync.Map

// planOf returns the plan of S, computing it on first use. A resource
// carries no pointer to its plan (it would take a resource of a
// 16-byte spec from 80 bytes to 96): the plan is found by S, in
// planTable. A hot path asks cachedPlan first, which the compiler
// inlines, and planOf only when that finds nothing.
func planOf[S any]() *plan[S] {
	if p := cachedPlan[S](); p != nil {
		return p
	}
	key := any((*plan[S])(nil))
	for i, n := planSlot(key), 0; n < planProbes; i, n = (i+1)&(planTableSize-1), n+1 {
		e := planTable[i].Load()
		if e == nil {
			break
		}
		if p, ok := e.plan.(*plan[S]); ok {
			return p
		}
	}
	return planOfSlow[S]()
}

// cachedPlan returns the plan of S when the first slot S probes in
// planTable holds it, nil otherwise (S's first use, or a slot taken by
// another type: see planOf). It is small enough to be inlined.
func cachedPlan[S any]() *plan[S] {
	if e := planTable[planSlot(any((*plan[S])(nil)))].Load(); e != nil {
		p, _ := e.plan.(*plan[S])
		return p
	}
	return nil
}

// planOfSlow returns the plan of S from plans (computing it on first
// use) and enters it in planTable.
func planOfSlow[S any]() *plan[S] {
	t := reflect.TypeFor[S]()
	v, ok := plans.Load(t)
	if !ok {
		v, _ = plans.LoadOrStore(t, newPlan[S](t))
	}
	p := v.(*plan[S])
	enterPlan(any((*plan[S])(nil)), p)
	return p
}

// planTable finds the plan of a spec type without hashing the type: an
// open-addressed table indexed by the address of the type of *plan[S]
// (see planSlot), probed linearly, whose slots are written once (nil to
// an entry) and never cleared, so that readers need no lock. Each entry
// names its type by what it holds: the plan, an interface value whose
// dynamic type is *plan[S], so that finding S's plan is a type assertion.
// A spec type that finds no free slot within planProbes of its own is
// found in plans, as every one was before its first use.
var planTable [planTableSize]atomic.Pointer[planEntry]

const (
	planTableBits = 10
	planTableSize = 1 << planTableBits
	planProbes    = 8
)

// planEntry is a slot of planTable: the plan of one spec type, as a
// *plan[S] in an interface.
type planEntry struct{ plan any }

// planSlot returns the first slot of planTable to probe for the plan
// whose type is key's dynamic type: Fibonacci hashing of the type
// descriptor's address (an interface value's first word, which no
// collection moves).
func planSlot(key any) int {
	typ := uint64((*eface)(unsafe.Pointer(&key)).typ)
	return int(typ * 0x9e3779b97f4a7c15 >> (64 - planTableBits))
}

// eface is how Go lays out an interface value of type any: its dynamic
// type's descriptor, then its data.
type eface struct{ typ, data uintptr }

// planTableMu serializes enterPlan's writes of planTable.
var planTableMu sync.Mutex

// enterPlan enters p, whose type is key's dynamic type, in planTable: in
// the first free slot of the probe sequence, unless an entry of the same
// type is there already (another goroutine entered it) or none is free.
func enterPlan(key, p any) {
	planTableMu.Lock()
	defer planTableMu.Unlock()
	for i, n := planSlot(key), 0; n < planProbes; i, n = (i+1)&(planTableSize-1), n+1 {
		e := planTable[i].Load()
		if e == nil {
			planTable[i].Store(&planEntry{plan: p})
			return
		}
		if reflect.TypeOf(e.plan) == reflect.TypeOf(key) {
			return
		}
	}
}

// newPlan computes the plan of S (whose type is t). A DeepCopy method is
// preferred to the deep plan: the spec's author knows best; except for a
// plain-value spec without a SpecMethods hook, whose one deep copy is
// assignment, whatever its methods.
func newPlan[S any](t reflect.Type) *plan[S] {
	p := &plan[S]{spec: t, fixedSize: !hasDynamicSize(t)}
	pt := reflect.PointerTo(t)
	hook, hooked := hookedMethods(t)
	var ok bool
	if !hooked && isPlain(t) {
		p.copyMode, p.userFree = copyAssign, true
	} else if p.method, ok = methodFunc[func(S) S](t, "DeepCopy"); ok {
		p.copyMode = copyMethod
	} else if p.copyFn, ok = methodFunc[func(S) S](t, "CloneVT"); ok {
		p.copyMode = copyFunc
	} else if hooked {
		p.copyMode, p.copyFn = copyFunc, func(s S) S { return hook.Copy(s).(S) }
	} else if p.into, ok = methodFunc[func(*S, *S)](pt, "DeepCopyInto"); ok {
		p.copyMode = copyInto
	} else if p.ptr, ok = methodFunc[func(*S) *S](pt, "DeepCopy"); ok {
		p.copyMode = copyPtr
	} else {
		dp := buildDeepPlan(t)
		switch {
		case dp.err != nil:
			p.copyMode, p.err = copyRefused, dp.err.(*CopyError)
		case dp.root.kind == nodePlain:
			p.copyMode = copyAssign
		default:
			p.copyMode, p.deep = copyDeep, dp
		}
	}
	if p.equalFn, ok = methodFunc[func(S, any) bool](t, "Equal"); ok {
		p.eqMode = eqMethod
	} else if p.ptrEqualFn, ok = methodFunc[func(*S, any) bool](pt, "Equal"); ok {
		p.eqMode = eqPtrMethod
	} else if p.eqFn, ok = methodFunc[func(S, S) bool](t, "EqualVT"); ok {
		p.eqMode = eqFunc
	} else if hooked {
		p.eqMode, p.eqFn = eqFunc, func(a, b S) bool { return hook.Equal(a, b) }
	} else if operatorIsDeep(t) {
		p.eqMode = eqOperator
	}
	if hooked && hook.Size != nil {
		p.sizeFn = func(s S) int { return hook.Size(s) }
	}
	return p
}

// isPlain reports whether t is a plain value: it holds no references
// (numbers, strings, booleans, arrays and structs of them, and the values
// the copy plan shares as they are), so that assignment is a deep copy.
func isPlain(t reflect.Type) bool {
	dp := buildDeepPlan(t)
	return dp.err == nil && dp.root.kind == nodePlain
}

// methodFunc returns the method name of t as a function taking the
// receiver first, when t has it with the signature F.
func methodFunc[F any](t reflect.Type, name string) (F, bool) {
	var zero F
	if t.Kind() == reflect.Interface {
		return zero, false
	}
	m, ok := t.MethodByName(name)
	if !ok {
		return zero, false
	}
	f, ok := m.Func.Interface().(F)
	return f, ok
}

// operatorIsDeep reports whether == on values of t is deep equality: t
// holds only numbers, booleans and strings.
func operatorIsDeep(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return operatorIsDeep(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !operatorIsDeep(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// copy sets *dst to a deep copy of *src. Assignment is inlined into the
// caller; every other mode is copyOther.
func (p *plan[S]) copy(dst, src *S) {
	if p.copyMode == copyAssign {
		*dst = *src
		return
	}
	p.copyOther(dst, src)
}

// copyOther is copy for the modes other than copyAssign.
func (p *plan[S]) copyOther(dst, src *S) {
	switch p.copyMode {
	case copyAssign:
		*dst = *src
	case copyMethod:
		*dst = p.method(*src)
	case copyInto:
		p.into(src, dst)
	case copyPtr:
		if c := p.ptr(src); c != nil {
			*dst = *c
		}
	case copyDeep:
		*dst = *src
		p.deep.fixInPlace(unsafe.Pointer(dst), p.spec)
	case copyFunc:
		*dst = p.copyFn(*src)
	case copyRefused:
		panic(p.err)
	}
}

// equal compares two specs (rule R1).
func (p *plan[S]) equal(a, b *S) bool {
	switch p.eqMode {
	case eqOperator:
		return any(*a) == any(*b)
	case eqMethod:
		return p.equalFn(*a, any(*b))
	case eqPtrMethod:
		return p.ptrEqualFn(a, any(*b))
	case eqFunc:
		return p.eqFn(*a, *b)
	}
	return speceq.EqualPointed(a, b)
}
