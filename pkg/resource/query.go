package resource

import (
	"regexp"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/opt"
)

// LabelOp is the operation of a [LabelTerm].
type LabelOp int

const (
	// LabelOpExists matches when the key is set.
	LabelOpExists LabelOp = iota
	// LabelOpEqual matches when the key is set to Value[0].
	LabelOpEqual
	// LabelOpIn matches when the key is set to one of Value.
	LabelOpIn
)

// LabelTerm is one term of a [LabelQuery].
type LabelTerm struct {
	Key    string
	Value  []string
	Op     LabelOp
	Invert bool // the term matches when the operation does not
}

// Matches reports whether labels satisfy the term.
func (t LabelTerm) Matches(labels Labels) bool {
	v, ok := labels.Get(t.Key)
	var m bool
	switch t.Op {
	case LabelOpExists:
		m = ok
	case LabelOpEqual:
		m = ok && len(t.Value) > 0 && v == t.Value[0]
	case LabelOpIn:
		m = ok && slices.Contains(t.Value, v)
	}
	return m != t.Invert
}

// String formats the term, e.g. "k=v", "!k", "k in (a,b)".
func (t LabelTerm) String() string {
	var s string
	switch t.Op {
	case LabelOpExists:
		s = t.Key
	case LabelOpEqual:
		s = t.Key + "=" + strings.Join(t.Value, "")
	case LabelOpIn:
		s = t.Key + " in (" + strings.Join(t.Value, ",") + ")"
	}
	if t.Invert {
		s = "!(" + s + ")"
	}
	return s
}

// LabelQuery selects resources by labels: all terms must match. The empty
// query matches everything.
type LabelQuery struct {
	Terms []LabelTerm
}

// Matches reports whether labels satisfy every term.
func (q LabelQuery) Matches(labels Labels) bool {
	for _, t := range q.Terms {
		if !t.Matches(labels) {
			return false
		}
	}
	return true
}

// LabelQueryOption adds a term to a [LabelQuery].
type LabelQueryOption func(*LabelQuery)

// TermOption modifies a [LabelTerm] as it is built.
type TermOption func(*LabelTerm)

// NotMatches is a [TermOption] that inverts a term: the term matches when
// its operation does not.
func NotMatches(t *LabelTerm) { t.Invert = !t.Invert }

func addTerm(t LabelTerm, opts []TermOption) LabelQueryOption {
	opt.Apply(&t, opts)
	return func(q *LabelQuery) { q.Terms = append(q.Terms, t) }
}

// LabelExists selects resources that have the label key.
func LabelExists(key string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpExists}, opts)
}

// LabelEqual selects resources whose label key equals value.
func LabelEqual(key, value string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpEqual, Value: []string{value}}, opts)
}

// LabelIn selects resources whose label key is one of values.
func LabelIn(key string, values []string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpIn, Value: slices.Clone(values)}, opts)
}

// NewLabelQuery builds a query from options.
func NewLabelQuery(opts ...LabelQueryOption) LabelQuery {
	var q LabelQuery
	opt.Apply(&q, opts)
	return q
}

// IDQuery selects resources by ID. The zero value matches every ID.
type IDQuery struct {
	Regexp *regexp.Regexp
}

// Matches reports whether id satisfies the query.
func (q IDQuery) Matches(id ID) bool { return q.Regexp == nil || q.Regexp.MatchString(id) }

// IDQueryOption configures an [IDQuery].
type IDQueryOption func(*IDQuery)

// IDRegexpMatch selects resources whose ID matches re.
func IDRegexpMatch(re *regexp.Regexp) IDQueryOption {
	return func(q *IDQuery) { q.Regexp = re }
}

// NewIDQuery builds a query from options.
func NewIDQuery(opts ...IDQueryOption) IDQuery {
	var q IDQuery
	opt.Apply(&q, opts)
	return q
}
