package resource_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

func labelsOf(kv ...string) resource.Labels {
	var l resource.Labels
	for i := 0; i+1 < len(kv); i += 2 {
		l.Set(kv[i], kv[i+1])
	}
	return l
}

// TestS15_UnionOfQueries: LabelQueries matches when one of its queries
// does; none, or an empty query among them, matches everything.
func TestS15_UnionOfQueries(t *testing.T) {
	web := resource.NewLabelQuery(resource.LabelEqual("app", "web"))
	db := resource.NewLabelQuery(resource.LabelEqual("app", "db"))
	union := resource.LabelQueries{web, db}
	assert.True(t, union.Matches(labelsOf("app", "web")))
	assert.True(t, union.Matches(labelsOf("app", "db")))
	assert.False(t, union.Matches(labelsOf("app", "cache")))
	assert.True(t, resource.LabelQueries(nil).Matches(labelsOf()))
	assert.True(t, resource.LabelQueries{web, {}}.Matches(labelsOf("app", "cache")))
	assert.Equal(t, "{app=web} | {app=db}", union.String())
}

// TestS15_OrderingTerms: string and numeric order, and an ordering term
// that holds neither way for a missing key or a value that is not an
// integer.
func TestS15_OrderingTerms(t *testing.T) {
	for _, c := range []struct {
		q        resource.LabelQueryOption
		labels   resource.Labels
		want     bool
		inverted bool
	}{
		{resource.LabelLT("v", "b"), labelsOf("v", "a"), true, false},
		{resource.LabelLT("v", "b"), labelsOf("v", "b"), false, true},
		{resource.LabelLTE("v", "b"), labelsOf("v", "b"), true, false},
		{resource.LabelLT("v", "2"), labelsOf("v", "10"), true, false},
		{resource.LabelLTNumeric("v", "2"), labelsOf("v", "10"), false, true},
		{resource.LabelLTNumeric("v", "-1"), labelsOf("v", "-2"), true, false},
		{resource.LabelLTENumeric("v", "10"), labelsOf("v", "10"), true, false},
		{resource.LabelLTNumeric("v", "2"), labelsOf("v", "x"), false, false},
		{resource.LabelLT("v", "2"), labelsOf(), false, false},
	} {
		q := resource.NewLabelQuery(c.q)
		term := q.Terms[0]
		assert.Equal(t, c.want, term.Matches(c.labels), "%s on %v", term, c.labels.Raw())
		term.Invert = true
		assert.Equal(t, c.inverted, term.Matches(c.labels), "%s on %v", term, c.labels.Raw())
		assert.Equal(t, c.want, c.labels.Matches(q.Terms[0]), "Labels.Matches agrees")
	}
}

// TestS15_UnusableTermsAreInvalid: an empty key, a numeric value that is
// not an integer, a comparison without one value and an unknown operation
// are invalid-class errors naming the term and the fix.
func TestS15_UnusableTermsAreInvalid(t *testing.T) {
	for _, c := range []struct {
		q    resource.LabelQueries
		want string
	}{
		{resource.LabelQueries{resource.NewLabelQuery(resource.LabelEqual("", "v"))}, "empty key; give LabelEqual the label's key"},
		{resource.LabelQueries{resource.NewLabelQuery(resource.LabelLTNumeric("n", "ten"))}, `LabelLTNumeric compares integers and "ten" is not one; give it a base-10 integer, or compare as strings with LabelLT`},
		{resource.LabelQueries{{}, resource.NewLabelQuery(resource.LabelLTENumeric("n", "1.5"))}, `label query 2 of 2: label term n<=#1.5: LabelLTENumeric compares integers`},
		{resource.LabelQueries{{Terms: []resource.LabelTerm{{Key: "k", Op: resource.LabelOpLT}}}}, "0 values, the operation compares with one; build it with LabelLT"},
		{resource.LabelQueries{{Terms: []resource.LabelTerm{{Key: "k", Op: 42}}}}, "unknown operation 42"},
	} {
		err := c.q.Validate()
		require.Error(t, err, "%s", c.q)
		assert.Contains(t, err.Error(), c.want)
		assert.ErrorIs(t, err, resource.ErrBadLabelQuery)
		var invalid interface{ InvalidError() }
		assert.True(t, errors.As(err, &invalid), "invalid class")
	}
	assert.NoError(t, resource.LabelQueries{resource.NewLabelQuery(resource.LabelLTNumeric("n", "-7"), resource.LabelIn("k", nil))}.Validate())
}
