package resource

import (
	"regexp"
	"slices"
	"strconv"
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
	// LabelOpLT matches when the key is set to a value that sorts before
	// Value[0] (byte-wise string order).
	LabelOpLT
	// LabelOpLTE matches when the key is set to a value that sorts before
	// Value[0] or equals it.
	LabelOpLTE
	// LabelOpLTNumeric matches when the key is set to an integer less than
	// the integer Value[0].
	LabelOpLTNumeric
	// LabelOpLTENumeric matches when the key is set to an integer less than
	// or equal to the integer Value[0].
	LabelOpLTENumeric
)

// ordering reports whether op compares the label's value with an order:
// such a term never matches a resource without the key (or, numeric, with
// a value that is not an integer), inverted or not.
func (op LabelOp) ordering() bool { return op >= LabelOpLT && op <= LabelOpLTENumeric }

// numeric reports whether op compares integers.
func (op LabelOp) numeric() bool { return op == LabelOpLTNumeric || op == LabelOpLTENumeric }

// LabelTerm is one term of a [LabelQuery].
type LabelTerm struct {
	Key    string
	Value  []string
	Op     LabelOp
	Invert bool // the term matches when the operation does not (see Matches)
}

// Matches reports whether labels satisfy the term. An inverted term
// matches when its operation does not, except for the ordering operations
// (LabelOpLT, LabelOpLTE and their numeric forms): they compare a value,
// so a resource without the key — or, for a numeric operation, whose
// value is not an integer — matches neither the term nor its inversion.
// NotMatches of LabelLT("k", "5") thus selects "k is set and k >= 5".
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
	case LabelOpLT, LabelOpLTE, LabelOpLTNumeric, LabelOpLTENumeric:
		c, comparable := t.compare(v, ok)
		if !comparable {
			return false
		}
		m = c < 0 || (c == 0 && (t.Op == LabelOpLTE || t.Op == LabelOpLTENumeric))
	}
	return m != t.Invert
}

// compare compares the label value v (present when ok) with the term's
// value for an ordering operation: comparable is false when there is
// nothing to compare (no key, no term value, a value that is not an
// integer for a numeric operation).
func (t LabelTerm) compare(v string, ok bool) (c int, comparable bool) {
	if !ok || len(t.Value) == 0 {
		return 0, false
	}
	if !t.Op.numeric() {
		return strings.Compare(v, t.Value[0]), true
	}
	a, errA := strconv.ParseInt(v, 10, 64)
	b, errB := strconv.ParseInt(t.Value[0], 10, 64)
	if errA != nil || errB != nil {
		return 0, false
	}
	switch {
	case a < b:
		return -1, true
	case a > b:
		return 1, true
	}
	return 0, true
}

// String formats the term, e.g. "k=v", "!(k)", "k in (a,b)", "k<v",
// "k<=#10" (numeric operations mark their value with #).
func (t LabelTerm) String() string {
	value := strings.Join(t.Value, "")
	var s string
	switch t.Op {
	case LabelOpExists:
		s = t.Key
	case LabelOpEqual:
		s = t.Key + "=" + value
	case LabelOpIn:
		s = t.Key + " in (" + strings.Join(t.Value, ",") + ")"
	case LabelOpLT:
		s = t.Key + "<" + value
	case LabelOpLTE:
		s = t.Key + "<=" + value
	case LabelOpLTNumeric:
		s = t.Key + "<#" + value
	case LabelOpLTENumeric:
		s = t.Key + "<=#" + value
	default:
		s = t.Key + " op" + strconv.Itoa(int(t.Op)) + " (" + strings.Join(t.Value, ",") + ")"
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

// String formats the query as its terms joined by commas ("" for the
// empty query).
func (q LabelQuery) String() string {
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// LabelQueries is the union of label queries (rule S15 of pkg/state):
// several label-query options on one List or WatchKind select the
// resources that match at least one of their queries, and within a query
// every term holds. No query at all selects everything (no filter), and
// so does a union that holds an empty query.
type LabelQueries []LabelQuery

// Matches reports whether labels satisfy at least one query; true when
// there is none.
func (qs LabelQueries) Matches(labels Labels) bool {
	if len(qs) == 0 {
		return true
	}
	for _, q := range qs {
		if q.Matches(labels) {
			return true
		}
	}
	return false
}

// String formats the union as its queries joined by " | ".
func (qs LabelQueries) String() string {
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = "{" + q.String() + "}"
	}
	return strings.Join(parts, " | ")
}

// LabelQueryOption adds a term to a [LabelQuery].
type LabelQueryOption func(*LabelQuery)

// TermOption modifies a [LabelTerm] as it is built.
type TermOption func(*LabelTerm)

// NotMatches is a [TermOption] that inverts a term: the term matches when
// its operation does not (see [LabelTerm.Matches] for the ordering
// operations, which never match a resource without the key).
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

// LabelLT selects resources whose label key is set to a value that sorts
// before value (byte-wise). With [NotMatches]: set, and not before value.
func LabelLT(key, value string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpLT, Value: []string{value}}, opts)
}

// LabelLTE selects resources whose label key is set to a value that sorts
// before value or equals it. With [NotMatches]: set, and after value.
func LabelLTE(key, value string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpLTE, Value: []string{value}}, opts)
}

// LabelLTNumeric selects resources whose label key is set to an integer
// (base 10, 64 bits) less than value, which must be an integer too (a
// List or watch with any other value is refused with an invalid-class
// error). A label value that is not an integer matches neither this term
// nor its inversion: with [NotMatches], an integer >= value.
func LabelLTNumeric(key, value string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpLTNumeric, Value: []string{value}}, opts)
}

// LabelLTENumeric is [LabelLTNumeric] with less than or equal: with
// [NotMatches], an integer > value.
func LabelLTENumeric(key, value string, opts ...TermOption) LabelQueryOption {
	return addTerm(LabelTerm{Key: key, Op: LabelOpLTENumeric, Value: []string{value}}, opts)
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
