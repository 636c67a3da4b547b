package selector_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/selector"
	"github.com/resgraph/resgraph/pkg/resource"
)

func labels(kv ...string) resource.Labels {
	var l resource.Labels
	for i := 0; i < len(kv); i += 2 {
		l.Set(kv[i], kv[i+1])
	}
	return l
}

func TestCT1_SelectorsMeanWhatTheySay(t *testing.T) {
	web := labels("app", "web", "tier", "front", "rank", "10")
	db := labels("app", "db", "rank", "9")
	bare := labels()
	for _, c := range []struct {
		sel  string
		want [3]bool // web, db, bare
	}{
		{"app", [3]bool{true, true, false}},
		{"!app", [3]bool{false, false, true}},
		{"app=web", [3]bool{true, false, false}},
		{"app==web", [3]bool{true, false, false}},
		{"app!=web", [3]bool{false, true, true}},
		{"app in (web, db)", [3]bool{true, true, false}},
		{"app notin (web)", [3]bool{false, true, true}},
		{"app=web,tier=front", [3]bool{true, false, false}},
		{"app in (web,db),rank>9", [3]bool{true, false, false}},
		{"rank<10", [3]bool{false, true, false}}, // numeric: 9 < 10
		{"rank<=10", [3]bool{true, true, false}},
		{"rank>=10", [3]bool{true, false, false}},
		{"app<e", [3]bool{false, true, false}}, // strings: "db" < "e"
		{"app>d", [3]bool{true, true, false}},
	} {
		opts, err := selector.Parse(c.sel)
		require.NoError(t, err, c.sel)
		q := resource.NewLabelQuery(opts...)
		require.NoError(t, q.Validate(), c.sel)
		got := [3]bool{q.Matches(web), q.Matches(db), q.Matches(bare)}
		assert.Equal(t, c.want, got, "%s (%s)", c.sel, q)
	}
}

func TestCT1_BadSelectorsAreRefusedNamingTheTerm(t *testing.T) {
	for sel, want := range map[string]string{
		"":              "empty",
		"app=web,,x":    `"app=web,,x": empty term`,
		"app in (web":   "'(' is not closed",
		"app)":          "')' closes nothing",
		"=web":          "no label key",
		"a b=c":         `label key "a b"`,
		"app in (web,)": "value \"\" in the set",
		"rank<":         "< needs a value",
		"app=we b":      `value "we b"`,
		"app notin ()":  "value \"\" in the set",
		"!":             "no label key",
		"app=web,=x":    `term "=x": no label key`,
	} {
		_, err := selector.Parse(sel)
		require.Error(t, err, sel)
		assert.Contains(t, err.Error(), want, sel)
		assert.Contains(t, err.Error(), "label selector", sel)
	}
}
