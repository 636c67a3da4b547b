package debughttp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/observe"
)

// leadObserver reports two controllers of a Runtime with leadership: one
// it leads, one another replica leads.
type leadObserver struct{ fakeObserver }

func (leadObserver) Controllers() []observe.ControllerStatus {
	since := time.Date(2025, 1, 2, 15, 4, 0, 0, time.UTC)
	return []observe.ControllerStatus{
		{Name: "led", Family: observe.FamilyController, Lifecycle: observe.LifecycleRunning,
			Leadership: &observe.Leadership{Election: "controller/led", Role: observe.RoleLeader, Since: since, Term: 42}},
		{Name: "waiting", Family: observe.FamilyQController, Lifecycle: observe.LifecycleStarting,
			Leadership: &observe.Leadership{Election: "controller/waiting", Role: observe.RoleStandby, Since: since}},
	}
}

func (o leadObserver) Metrics() observe.Metrics {
	return observe.Metrics{Controllers: o.Controllers(), Kinds: []observe.KindMetrics{}, HotLoops: []observe.HotLoop{}}
}

// TestPagesShowLeadership: with leadership, the controllers page says of
// each controller whether this replica leads it or is a standby, since
// when and the term, in HTML and JSON; the live document marks a standby
// as such, carries the leadership of each controller and marks each node
// with its role.
func TestPagesShowLeadership(t *testing.T) {
	obs := leadObserver{}
	srv := httptest.NewServer(New(obs, WithClock(func() time.Time { return tNow })))
	defer srv.Close()
	_, body := fetch(t, srv.URL+"/debug/controllers")
	assert.Contains(t, body, "leader in election controller/led since 15:04:00.000 (term 42)")
	assert.Contains(t, body, "standby in election controller/waiting since 15:04:00.000")
	_, js := fetch(t, srv.URL+"/debug/controllers?format=json")
	assert.Contains(t, js, `"role": "leader"`)
	assert.Contains(t, js, `"term": 42`)
	assert.Contains(t, js, `"role": "standby"`)

	doc := newLivePage(obs, func() time.Time { return tNow }).document(context.Background())
	require.Len(t, doc.Controllers, 2)
	assert.Equal(t, LiveStandby, doc.Controllers[1].State)
	require.Len(t, doc.Nodes, 2)
	assert.Equal(t, []LiveMark{{Text: "leader", Class: MarkLeader, Title: "leader of election controller/led since 2025-01-02T15:04:00Z (term 42)"}}, doc.Nodes[0].Marks, "a badge on the node")
	assert.Equal(t, []LiveMark{{Text: "standby", Class: MarkStandby, Title: "standby in election controller/waiting since 2025-01-02T15:04:00Z"}}, doc.Nodes[1].Marks)
	b, err := json.Marshal(doc.Controllers[0])
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(b), `"leadership":{"election":"controller/led","role":"leader"`), "%s", b)
}
