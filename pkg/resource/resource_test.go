package resource_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// plain is a resource without SpecEqual, so Equal falls back to the
// spec's own Equal method or deep equality.
type plain struct {
	md   resource.Metadata
	spec any
}

func (p *plain) Metadata() *resource.Metadata { return &p.md }
func (p *plain) Spec() any                    { return p.spec }
func (p *plain) DeepCopy() resource.Resource  { return &plain{md: p.md.Copy(), spec: p.spec} }

// caseless is a spec that decides its own equality: case-insensitive on
// ASCII letters.
type caseless string

func (c caseless) Equal(other any) bool {
	o, ok := other.(caseless)
	if !ok || len(o) != len(c) {
		return false
	}
	for i := range len(c) {
		a, b := c[i]|0x20, o[i]|0x20
		if a != b {
			return false
		}
	}
	return true
}

func newPlain(spec any) *plain {
	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(3))
	md.Labels().Set("l", "1")
	md.Annotations().Set("a", "1")
	md.Finalizers().Add("f1")
	md.Finalizers().Add("f2")
	_ = md.SetOwner("ctrl")
	md.SetCreated(time.Unix(100, 0))
	md.SetUpdated(time.Unix(200, 0))
	return &plain{md: md, spec: spec}
}

func TestR1_Equal(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*plain)
		equal  bool
	}{
		"identical":            {func(*plain) {}, true},
		"created timestamp":    {func(p *plain) { p.md.SetCreated(time.Unix(1, 0)) }, true},
		"updated timestamp":    {func(p *plain) { p.md.SetUpdated(time.Unix(1, 0)) }, true},
		"namespace":            {func(p *plain) { p.md = resource.NewMetadata("other", "T", "id", p.md.Version()) }, false},
		"version":              {func(p *plain) { p.md.SetVersion(p.md.Version().Next()) }, false},
		"phase":                {func(p *plain) { p.md.SetPhase(resource.PhaseTearingDown) }, false},
		"owner":                {func(p *plain) { _ = p.md.SetOwner(""); _ = p.md.SetOwner("other") }, false},
		"no owner":             {func(p *plain) { _ = p.md.SetOwner("") }, false},
		"label value":          {func(p *plain) { p.md.Labels().Set("l", "2") }, false},
		"extra label":          {func(p *plain) { p.md.Labels().Set("m", "1") }, false},
		"label deleted":        {func(p *plain) { p.md.Labels().Delete("l") }, false},
		"annotation":           {func(p *plain) { p.md.Annotations().Set("a", "2") }, false},
		"annotation deleted":   {func(p *plain) { p.md.Annotations().Delete("a") }, false},
		"finalizer removed":    {func(p *plain) { p.md.Finalizers().Remove("f1") }, false},
		"finalizer added":      {func(p *plain) { p.md.Finalizers().Add("f3") }, false},
		"finalizer order":      {func(p *plain) { *p.md.Finalizers() = resource.Finalizers{"f2", "f1"} }, false},
		"deep-equal spec":      {func(p *plain) { p.spec = []int{1, 2} }, true},
		"deep-different spec":  {func(p *plain) { p.spec = []int{1, 3} }, false},
		"spec of another type": {func(p *plain) { p.spec = [2]int{1, 2} }, false},
		"nil spec":             {func(p *plain) { p.spec = nil }, false},
	} {
		t.Run(name, func(t *testing.T) {
			a := newPlain([]int{1, 2})
			b := newPlain([]int{1, 2})
			tc.mutate(b)
			assert.Equal(t, tc.equal, resource.Equal(a, b), "a vs b")
			assert.Equal(t, tc.equal, resource.Equal(b, a), "b vs a")
			assert.Equal(t, tc.equal, a.md.Equal(b.md) && resource.SpecEqual(a.spec, b.spec))
		})
	}
}

func TestR1_SpecEqualMethodDecides(t *testing.T) {
	a, b := newPlain(caseless("Hello")), newPlain(caseless("hELLO"))
	assert.True(t, resource.Equal(a, b), "the spec's Equal says equal although deep equality does not")
	b.spec = caseless("world")
	assert.False(t, resource.Equal(a, b))
	assert.True(t, resource.SpecEqual(caseless("A"), caseless("a")))
	assert.False(t, resource.SpecEqual(caseless("A"), "a"))
}

func TestR1_EqualNil(t *testing.T) {
	assert.True(t, resource.Equal(nil, nil))
	assert.False(t, resource.Equal(newPlain(nil), nil))
	assert.False(t, resource.Equal(nil, newPlain(nil)))
}

func TestR2_MetadataCopySharesNothing(t *testing.T) {
	orig := newPlain(nil).md
	c := orig.Copy()
	require.True(t, orig.Equal(c))
	assert.Equal(t, orig.Created(), c.Created())
	assert.Equal(t, orig.Updated(), c.Updated())

	c.Labels().Set("l", "changed")
	c.Labels().Set("new", "x")
	c.Annotations().Set("a", "changed")
	c.Finalizers().Add("f3")
	(*c.Finalizers())[0] = "overwritten"
	c.SetPhase(resource.PhaseTearingDown)

	v, _ := orig.Labels().Get("l")
	assert.Equal(t, "1", v)
	assert.Equal(t, 1, orig.Labels().Len())
	v, _ = orig.Annotations().Get("a")
	assert.Equal(t, "1", v)
	assert.Equal(t, resource.Finalizers{"f1", "f2"}, *orig.Finalizers())
	assert.Equal(t, resource.PhaseRunning, orig.Phase())

	// And the other way round.
	c2 := orig.Copy()
	orig.Labels().Set("l", "orig-changed")
	(*orig.Finalizers())[1] = "orig-changed"
	v, _ = c2.Labels().Get("l")
	assert.Equal(t, "1", v)
	assert.Equal(t, resource.Finalizers{"f1", "f2"}, *c2.Finalizers())
}

func TestR2_FinalizersAppendDoesNotAlias(t *testing.T) {
	// A copy made while the slice has spare capacity must not see appends
	// to the original, nor the original appends to the copy.
	md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	fins := make(resource.Finalizers, 1, 8)
	fins[0] = "a"
	*md.Finalizers() = fins
	c := md.Copy()
	md.Finalizers().Add("from-orig")
	c.Finalizers().Add("from-copy")
	assert.Equal(t, resource.Finalizers{"a", "from-orig"}, *md.Finalizers())
	assert.Equal(t, resource.Finalizers{"a", "from-copy"}, *c.Finalizers())
}

func TestR3_ValidatePointer(t *testing.T) {
	var nilMD *resource.Metadata
	md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	for name, tc := range map[string]struct {
		p  resource.Pointer
		ok bool
	}{
		"valid":           {resource.NewPointer("ns", "T", "id"), true},
		"valid metadata":  {&md, true},
		"nil":             {nil, false},
		"nil metadata":    {nilMD, false},
		"typed nil":       {(*otherPointer)(nil), false},
		"empty namespace": {resource.NewPointer("", "T", "id"), false},
		"empty type":      {resource.NewPointer("ns", "", "id"), false},
		"empty ID":        {resource.NewPointer("ns", "T", ""), false},
		"all empty":       {resource.NewPointer("", "", ""), false},
	} {
		t.Run(name, func(t *testing.T) {
			err := resource.ValidatePointer(tc.p)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, resource.ErrEmptyIdentity)
		})
	}
	err := resource.ValidatePointer(resource.NewPointer("ns", "T", ""))
	assert.ErrorContains(t, err, "T(ns/)", "the error names the resource")

	assert.NoError(t, resource.ValidateKind(resource.NewKind("ns", "T")))
	assert.ErrorIs(t, resource.ValidateKind(nil), resource.ErrEmptyIdentity)
	assert.ErrorIs(t, resource.ValidateKind(nilMD), resource.ErrEmptyIdentity)
	assert.ErrorIs(t, resource.ValidateKind(resource.NewKind("", "T")), resource.ErrEmptyIdentity)
	assert.ErrorIs(t, resource.ValidateKind(resource.NewKind("ns", "")), resource.ErrEmptyIdentity)
}

func TestPointersAndKinds(t *testing.T) {
	p := resource.NewPointer("ns", "T", "id")
	assert.True(t, p == resource.NewPointer("ns", "T", "id"), "comparable")
	assert.False(t, p == resource.NewPointer("ns", "T", "other"))
	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(2))
	assert.True(t, resource.PointerOf(&md) == p, "PointerOf any implementation")
	assert.True(t, resource.KindOf(p) == resource.NewKind("ns", "T"))
	assert.Equal(t, "T(ns/id)", resource.PointerString(p))
	assert.Equal(t, "T(ns)", resource.KindString(p))
	assert.Equal(t, "T(ns/id)", resource.String(&plain{md: md}))
	assert.Equal(t, "<nil resource>", resource.String(nil))
	assert.Equal(t, "ns", p.Namespace())
	assert.Equal(t, "T", p.Type())
	assert.Equal(t, "id", p.ID())
}

// otherPointer is a Pointer implemented outside the resource package.
type otherPointer struct{ ns, typ, id string }

func (p *otherPointer) Namespace() string { return p.ns }
func (p *otherPointer) Type() string      { return p.typ }
func (p *otherPointer) ID() string        { return p.id }

// TestKindKeyAndPointerKey: the comparable keys are what NewKind and
// NewPointer return, whatever implementation they are made from.
func TestKindKeyAndPointerKey(t *testing.T) {
	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(2))
	other := &otherPointer{"ns", "T", "id"}
	k := resource.KindOf(resource.NewKind("ns", "T"))
	for name, from := range map[string]resource.Kind{
		"NewKind": resource.NewKind("ns", "T"), "KindKey": k, "NewPointer": resource.NewPointer("ns", "T", "x"),
		"PointerKey": resource.PointerOf(resource.NewPointer("ns", "T", "x")), "metadata": &md, "other": other,
	} {
		assert.Equal(t, k, resource.KindOf(from), name)
		assert.True(t, resource.KindOf(from) == resource.NewKind("ns", "T"), name)
	}
	p := resource.PointerOf(resource.NewPointer("ns", "T", "id"))
	for name, from := range map[string]resource.Pointer{"NewPointer": resource.NewPointer("ns", "T", "id"), "metadata": &md, "other": other} {
		assert.Equal(t, p, resource.PointerOf(from), name)
		assert.True(t, resource.PointerOf(from) == resource.Pointer(p), name)
	}
	assert.Equal(t, k, p.Kind())
	assert.Equal(t, "T(ns)", k.String())
	assert.Equal(t, "T(ns/id)", p.String())
	assert.Equal(t, resource.KindString(k), k.String())
	assert.Equal(t, resource.PointerString(p), p.String())
	assert.Equal(t, 0, k.Compare(resource.KindOf(resource.NewKind("ns", "T"))))
	assert.Equal(t, -1, k.Compare(resource.KindOf(resource.NewKind("ns", "U"))))
	assert.Equal(t, 1, k.Compare(resource.KindOf(resource.NewKind("a", "Z"))), "namespace first")
	assert.NotEqual(t, k, resource.KindOf(resource.NewKind("ns", "U")))
	assert.NotEqual(t, p, resource.PointerOf(resource.NewPointer("ns", "T", "other")))
}

func TestMetadata(t *testing.T) {
	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(2))
	assert.Equal(t, "ns", md.Namespace())
	assert.Equal(t, "T", md.Type())
	assert.Equal(t, "id", md.ID())
	assert.Equal(t, uint64(2), md.Version().Value())
	assert.Equal(t, resource.PhaseRunning, md.Phase())
	assert.Equal(t, "", md.Owner())
	assert.True(t, md.Created().IsZero())
	assert.True(t, md.Updated().IsZero())
	assert.Equal(t, "T(ns/id)@2", md.String())

	require.NoError(t, md.SetOwner("a"))
	require.NoError(t, md.SetOwner("a"), "same owner again")
	assert.Error(t, md.SetOwner("b"), "changing hands is refused")
	assert.Equal(t, "a", md.Owner())
	require.NoError(t, md.SetOwner(""))
	require.NoError(t, md.SetOwner("b"), "after clearing")
	assert.Equal(t, "b", md.Owner())
	md.ReplaceOwner("c")
	assert.Equal(t, "c", md.Owner(), "ReplaceOwner hands over without clearing first")
	md.ReplaceOwner("")
	assert.Equal(t, "", md.Owner())
	require.NoError(t, md.SetOwner("b"))

	md.SetPhase(resource.PhaseTearingDown)
	md.Finalizers().Add("f1")
	md.Finalizers().Add("f2")
	assert.Equal(t, "T(ns/id)@2 tearingDown owner=b finalizers=f1,f2", md.String())

	now := time.Now()
	md.SetCreated(now)
	md.SetUpdated(now.Add(time.Second))
	assert.True(t, now.Equal(md.Created()), "created %s, set %s", md.Created(), now)
	assert.True(t, now.Add(time.Second).Equal(md.Updated()), "updated %s, set %s", md.Updated(), now.Add(time.Second))
}

func TestVersion(t *testing.T) {
	u := resource.VersionUndefined
	assert.Equal(t, uint64(0), u.Value())
	assert.Equal(t, "undefined", u.String())
	assert.Equal(t, uint64(1), u.Next().Value())
	assert.True(t, u.Equal(resource.NewVersion(0)))
	assert.False(t, u.Equal(u.Next()))
	assert.Equal(t, resource.NewVersion(8), resource.NewVersion(7).Next())

	for _, v := range []resource.Version{u, resource.NewVersion(1), resource.NewVersion(42), resource.NewVersion(^uint64(0))} {
		parsed, err := resource.ParseVersion(v.String())
		require.NoError(t, err, v.String())
		assert.True(t, v.Equal(parsed), "round trip of %s", v)
	}
	for _, bad := range []string{"", "0", "-1", "+1", "abc", "1.5", " 1", "18446744073709551616"} {
		_, err := resource.ParseVersion(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestPhaseString(t *testing.T) {
	assert.Equal(t, "running", resource.PhaseRunning.String())
	assert.Equal(t, "tearingDown", resource.PhaseTearingDown.String())
	assert.Equal(t, "Phase(7)", resource.Phase(7).String())
}

func TestFinalizers(t *testing.T) {
	var f resource.Finalizers
	assert.True(t, f.Empty())
	assert.False(t, f.Has("a"))
	assert.True(t, f.Add("a"))
	assert.True(t, f.Add("b"))
	assert.False(t, f.Add("a"), "already there")
	assert.Equal(t, resource.Finalizers{"a", "b"}, f)
	assert.True(t, f.Has("a"))
	assert.False(t, f.Empty())
	assert.False(t, f.Remove("c"), "absent")
	assert.True(t, f.Remove("a"))
	assert.False(t, f.Has("a"))
	assert.Equal(t, resource.Finalizers{"b"}, f)
	assert.True(t, f.Remove("b"))
	assert.True(t, f.Empty())
	assert.Nil(t, f, "empty finalizers are nil")
}

func TestLabelsAndAnnotations(t *testing.T) {
	var l resource.Labels
	assert.Equal(t, 0, l.Len())
	assert.Nil(t, l.Raw())
	_, ok := l.Get("k")
	assert.False(t, ok)
	l.Delete("absent") // no panic on the zero value

	l.Set("k", "v")
	l.Set("e", "")
	v, ok := l.Get("k")
	assert.True(t, ok)
	assert.Equal(t, "v", v)
	v, ok = l.Get("e")
	assert.True(t, ok, "an empty value is set")
	assert.Equal(t, "", v)
	assert.Equal(t, 2, l.Len())

	raw := l.Raw()
	assert.Equal(t, map[string]string{"k": "v", "e": ""}, raw)
	raw["k"] = "mutated"
	v, _ = l.Get("k")
	assert.Equal(t, "v", v, "Raw returns a copy")

	var o resource.Labels
	assert.False(t, l.Equal(o))
	o.Set("e", "")
	o.Set("k", "v")
	assert.True(t, l.Equal(o))
	l.Delete("k")
	l.Delete("e")
	assert.Equal(t, 0, l.Len())
	assert.True(t, l.Equal(resource.Labels{}), "emptied equals zero")

	var a, b resource.Annotations
	a.Set("x", "1")
	assert.False(t, a.Equal(b))
	b.Set("x", "1")
	assert.True(t, a.Equal(b))
	a.Delete("x")
	assert.Equal(t, 0, a.Len())
}

func labels(kv ...string) resource.Labels {
	var l resource.Labels
	for i := 0; i+1 < len(kv); i += 2 {
		l.Set(kv[i], kv[i+1])
	}
	return l
}

func TestLabelQuery(t *testing.T) {
	l := labels("app", "web", "tier", "front", "empty", "")
	for name, tc := range map[string]struct {
		opts []resource.LabelQueryOption
		want bool
	}{
		"empty query":               {nil, true},
		"exists":                    {[]resource.LabelQueryOption{resource.LabelExists("app")}, true},
		"exists, empty value":       {[]resource.LabelQueryOption{resource.LabelExists("empty")}, true},
		"exists, absent":            {[]resource.LabelQueryOption{resource.LabelExists("nope")}, false},
		"not exists":                {[]resource.LabelQueryOption{resource.LabelExists("nope", resource.NotMatches)}, true},
		"not exists, present":       {[]resource.LabelQueryOption{resource.LabelExists("app", resource.NotMatches)}, false},
		"equal":                     {[]resource.LabelQueryOption{resource.LabelEqual("app", "web")}, true},
		"equal, other value":        {[]resource.LabelQueryOption{resource.LabelEqual("app", "db")}, false},
		"equal, absent":             {[]resource.LabelQueryOption{resource.LabelEqual("nope", "")}, false},
		"equal empty value":         {[]resource.LabelQueryOption{resource.LabelEqual("empty", "")}, true},
		"not equal":                 {[]resource.LabelQueryOption{resource.LabelEqual("app", "db", resource.NotMatches)}, true},
		"not equal, absent matches": {[]resource.LabelQueryOption{resource.LabelEqual("nope", "x", resource.NotMatches)}, true},
		"not equal, same":           {[]resource.LabelQueryOption{resource.LabelEqual("app", "web", resource.NotMatches)}, false},
		"in":                        {[]resource.LabelQueryOption{resource.LabelIn("app", []string{"db", "web"})}, true},
		"in, none":                  {[]resource.LabelQueryOption{resource.LabelIn("app", []string{"db"})}, false},
		"in, empty list":            {[]resource.LabelQueryOption{resource.LabelIn("app", nil)}, false},
		"in, absent":                {[]resource.LabelQueryOption{resource.LabelIn("nope", []string{""})}, false},
		"not in":                    {[]resource.LabelQueryOption{resource.LabelIn("app", []string{"db"}, resource.NotMatches)}, true},
		"not in, member":            {[]resource.LabelQueryOption{resource.LabelIn("app", []string{"web"}, resource.NotMatches)}, false},
		"double negation":           {[]resource.LabelQueryOption{resource.LabelExists("app", resource.NotMatches, resource.NotMatches)}, true},
		"all terms must match":      {[]resource.LabelQueryOption{resource.LabelEqual("app", "web"), resource.LabelEqual("tier", "back")}, false},
		"all terms match":           {[]resource.LabelQueryOption{resource.LabelEqual("app", "web"), resource.LabelExists("tier")}, true},
	} {
		t.Run(name, func(t *testing.T) {
			q := resource.NewLabelQuery(tc.opts...)
			assert.Equal(t, tc.want, q.Matches(l))
		})
	}
}

func TestLabelQueryOwnsItsValues(t *testing.T) {
	values := []string{"a", "b"}
	q := resource.NewLabelQuery(resource.LabelIn("k", values))
	values[0] = "changed"
	assert.True(t, q.Matches(labels("k", "a")), "LabelIn copies its values")
}

func TestLabelTermString(t *testing.T) {
	q := resource.NewLabelQuery(
		resource.LabelExists("k"),
		resource.LabelEqual("k", "v"),
		resource.LabelIn("k", []string{"a", "b"}),
		resource.LabelExists("k", resource.NotMatches),
	)
	var got []string
	for _, term := range q.Terms {
		got = append(got, term.String())
	}
	assert.Equal(t, []string{"k", "k=v", "k in (a,b)", "!(k)"}, got)
}

func TestIDQuery(t *testing.T) {
	assert.True(t, resource.NewIDQuery().Matches("anything"), "the zero query matches every ID")
	q := resource.NewIDQuery(resource.IDRegexpMatch(regexpMust(`^ab+$`)))
	assert.True(t, q.Matches("abb"))
	assert.False(t, q.Matches("ac"))
	assert.True(t, resource.NewIDQuery(resource.IDRegexpMatch(nil)).Matches("x"), "a nil regexp matches every ID")
}
