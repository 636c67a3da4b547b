package resource

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrBadLabelQuery is wrapped by the errors of [LabelTerm.Validate],
// [LabelQuery.Validate] and [LabelQueries.Validate].
var ErrBadLabelQuery = errors.New("bad label query")

// queryError is an error of a label query's validation. It belongs to the
// invalid class of pkg/state (state.IsInvalidError) by having that
// class's marker method, so that a State refuses a List or a watch with
// it before reading anything.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }
func (e *queryError) Unwrap() error { return ErrBadLabelQuery }

// InvalidError is the marker method of pkg/state's invalid class.
func (e *queryError) InvalidError() {}

// constructorOf names the term constructor of op, for the fix an error
// proposes.
func constructorOf(op LabelOp) string {
	switch op {
	case LabelOpExists:
		return "LabelExists"
	case LabelOpEqual:
		return "LabelEqual"
	case LabelOpIn:
		return "LabelIn"
	case LabelOpLT:
		return "LabelLT"
	case LabelOpLTE:
		return "LabelLTE"
	case LabelOpLTNumeric:
		return "LabelLTNumeric"
	case LabelOpLTENumeric:
		return "LabelLTENumeric"
	}
	return "a term constructor"
}

// Validate reports what makes the term unusable, or nil: an empty key, an
// unknown operation, a comparison without exactly one value, a numeric
// operation whose value is not a base-10 integer. The error names the
// term and the fix, wraps [ErrBadLabelQuery] and is of the invalid class
// (state.IsInvalidError).
func (t LabelTerm) Validate() error {
	ctor := constructorOf(t.Op)
	switch {
	case t.Key == "":
		return &queryError{msg: fmt.Sprintf("label term %s: empty key; give %s the label's key", t, ctor)}
	case t.Op < LabelOpExists || t.Op > LabelOpLTENumeric:
		return &queryError{msg: fmt.Sprintf("label term %s: unknown operation %d; build terms with LabelExists, LabelEqual, LabelIn, LabelLT, LabelLTE, LabelLTNumeric or LabelLTENumeric", t, t.Op)}
	case (t.Op == LabelOpEqual || t.Op.ordering()) && len(t.Value) != 1:
		return &queryError{msg: fmt.Sprintf("label term %s: %d values, the operation compares with one; build it with %s", t, len(t.Value), ctor)}
	}
	if t.Op.numeric() {
		if _, err := strconv.ParseInt(t.Value[0], 10, 64); err != nil {
			return &queryError{msg: fmt.Sprintf("label term %s: %s compares integers and %q is not one; give it a base-10 integer, or compare as strings with %s", t, ctor, t.Value[0], constructorOf(t.Op-2))}
		}
	}
	return nil
}

// Validate reports the first unusable term of the query (see
// [LabelTerm.Validate]), or nil.
func (q LabelQuery) Validate() error {
	for _, t := range q.Terms {
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Validate reports the first unusable term of the union (see
// [LabelTerm.Validate]), naming its query when there are several, or nil.
func (qs LabelQueries) Validate() error {
	for i, q := range qs {
		err := q.Validate()
		if err == nil {
			continue
		}
		if len(qs) > 1 {
			return &queryError{msg: "label query " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(qs)) + ": " + err.Error()}
		}
		return err
	}
	return nil
}
