// Package selector parses the label selectors of resgraphctl's -l flag
// into label queries of package resource.
//
// One selector is one query: its comma-separated terms must all hold.
// Several selectors (several -l flags) select the union of their queries,
// as several label-query options do (rule S15). The terms:
//
//	key              the label is set
//	!key             the label is not set
//	key=value        the label is set to value (also key==value)
//	key!=value       the label is not set to value (or not set at all)
//	key in (a,b)     the label is set to one of the values
//	key notin (a,b)  the label is not set to any of the values (or not set)
//	key<value        the label is set to a value below value; also <=, >, >=
//
// The ordering terms compare integers when value is an integer (-12, 7)
// and strings byte by byte otherwise; they never select a resource
// without the label, nor, for an integer value, one whose label is not an
// integer.
package selector

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Error is a selector that does not parse: it names the selector and the
// term.
type Error struct {
	Selector, Term, Problem string
}

func (e *Error) Error() string {
	if e.Term == "" {
		return fmt.Sprintf("label selector %q: %s", e.Selector, e.Problem)
	}
	return fmt.Sprintf("label selector %q: term %q: %s", e.Selector, e.Term, e.Problem)
}

// Parse parses one selector into the options of one label query.
func Parse(sel string) ([]resource.LabelQueryOption, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, &Error{Selector: sel, Problem: "empty (want terms such as app=web,tier!=db)"}
	}
	terms, err := split(sel)
	if err != nil {
		return nil, err
	}
	opts := make([]resource.LabelQueryOption, 0, len(terms))
	for _, t := range terms {
		o, problem := term(strings.TrimSpace(t))
		if problem != "" {
			return nil, &Error{Selector: sel, Term: strings.TrimSpace(t), Problem: problem}
		}
		opts = append(opts, o)
	}
	return opts, nil
}

// split cuts sel at the commas outside parentheses.
func split(sel string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i, r := range sel {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, &Error{Selector: sel, Problem: "a ')' closes nothing"}
			}
		case ',':
			if depth == 0 {
				out = append(out, sel[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, &Error{Selector: sel, Problem: "a '(' is not closed"}
	}
	return append(out, sel[start:]), nil
}

// operators are the binary operators, longest first so that "<=" is not
// read as "<".
var operators = []string{"!=", "==", "<=", ">=", "=", "<", ">"}

// term parses one term; problem says why it does not parse.
func term(t string) (resource.LabelQueryOption, string) {
	if t == "" {
		return nil, "empty term (two commas in a row, or a comma at an end)"
	}
	if key, values, neg, ok := setTerm(t); ok {
		if err := checkKey(key); err != "" {
			return nil, err
		}
		vs, problem := setValues(values)
		if problem != "" {
			return nil, problem
		}
		if neg {
			return resource.LabelIn(key, vs, resource.NotMatches), ""
		}
		return resource.LabelIn(key, vs), ""
	}
	for _, op := range operators {
		if key, value, ok := strings.Cut(t, op); ok {
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if err := checkKey(key); err != "" {
				return nil, err
			}
			if strings.ContainsAny(value, " ()!=<>") {
				return nil, fmt.Sprintf("value %q: a value has no spaces, parentheses or operators", value)
			}
			return binary(key, op, value)
		}
	}
	if key, ok := strings.CutPrefix(t, "!"); ok {
		key = strings.TrimSpace(key)
		if err := checkKey(key); err != "" {
			return nil, err
		}
		return resource.LabelExists(key, resource.NotMatches), ""
	}
	if err := checkKey(t); err != "" {
		return nil, err
	}
	return resource.LabelExists(t), ""
}

// setTerm recognizes "key in (...)" and "key notin (...)".
func setTerm(t string) (key, values string, neg, ok bool) {
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return "", "", false, false
	}
	head := strings.Fields(t[:open])
	if len(head) != 2 || (head[1] != "in" && head[1] != "notin") {
		return "", "", false, false
	}
	return head[0], t[open+1 : len(t)-1], head[1] == "notin", true
}

func setValues(s string) ([]string, string) {
	var vs []string
	for v := range strings.SplitSeq(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" || strings.ContainsAny(v, " ()!=<>") {
			return nil, fmt.Sprintf("value %q in the set: want values separated by commas, such as (a,b)", v)
		}
		vs = append(vs, v)
	}
	return vs, ""
}

func checkKey(key string) string {
	switch {
	case key == "":
		return "no label key"
	case strings.ContainsAny(key, " ()!=<>,"):
		return fmt.Sprintf("label key %q has a space, a parenthesis or an operator in it", key)
	}
	return ""
}

// binary returns the term of "key op value".
func binary(key, op, value string) (resource.LabelQueryOption, string) {
	switch op {
	case "=", "==":
		return resource.LabelEqual(key, value), ""
	case "!=":
		return resource.LabelEqual(key, value, resource.NotMatches), ""
	}
	if value == "" {
		return nil, fmt.Sprintf("%s needs a value to compare with", op)
	}
	_, err := strconv.ParseInt(value, 10, 64)
	numeric := err == nil
	lt, lte := resource.LabelLT, resource.LabelLTE
	if numeric {
		lt, lte = resource.LabelLTNumeric, resource.LabelLTENumeric
	}
	switch op {
	case "<":
		return lt(key, value), ""
	case "<=":
		return lte(key, value), ""
	case ">": // set, and not <= value
		return lte(key, value, resource.NotMatches), ""
	default: // ">=": set, and not < value
		return lt(key, value, resource.NotMatches), ""
	}
}
