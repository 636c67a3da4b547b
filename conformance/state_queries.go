package conformance

import (
	"regexp"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// labelled creates the IntResources of ids, each with the labels of the
// same index in labels ("k=v" pairs).
func (s *StateSuite) labelled(ids []string, labels []map[string]string) {
	for i, id := range ids {
		r := s.intRes(id, i)
		for k, v := range labels[i] {
			r.Metadata().Labels().Set(k, v)
		}
		s.Require().NoError(s.State.Create(s.ctx, r))
	}
}

// listIDs lists the IntResource kind with opts and returns the IDs.
func (s *StateSuite) listIDs(opts ...state.ListOption) []string {
	s.T().Helper()
	list, err := s.State.List(s.ctx, s.kind(), opts...)
	s.Require().NoError(err)
	out := make([]string, 0, len(list.Items))
	for _, r := range list.Items {
		out = append(out, r.Metadata().ID())
	}
	return out
}

// bootstrapIDs starts a WatchKind with bootstrap contents and opts and
// returns the IDs it bootstraps.
func (s *StateSuite) bootstrapIDs(opts ...state.WatchKindOption) []string {
	s.T().Helper()
	ch := s.watchKind(eventBuffer, append(opts, state.WithBootstrapContents(true))...)
	var out []string
	for {
		ev := s.next(ch)
		if ev.Type == state.Bootstrapped {
			return out
		}
		s.Require().Equalf(state.Created, ev.Type, "event %s", eventString(ev))
		out = append(out, ev.Resource.Metadata().ID())
	}
}

// TestS15_SeveralLabelQueriesSelectTheirUnion: two WithLabelQuery options
// on one List select the resources that match either query (within a
// query every term holds), and WatchKind's bootstrap with two
// WatchWithLabelQuery options sends the same union; an empty query in a
// union selects everything, and the ID query still applies to the union.
func (s *StateSuite) TestS15_SeveralLabelQueriesSelectTheirUnion() {
	s.labelled([]string{"a", "b", "c", "d", "e"}, []map[string]string{
		{"app": "web", "tier": "front"},
		{"app": "db"},
		{"app": "web"},
		{"tier": "front"},
		{},
	})
	web := []resource.LabelQueryOption{resource.LabelEqual("app", "web"), resource.LabelExists("tier")}
	db := []resource.LabelQueryOption{resource.LabelEqual("app", "db")}

	s.Equal([]string{"a"}, s.listIDs(state.WithLabelQuery(web...)), "one query: all its terms hold")
	s.Equal([]string{"a", "b"}, s.listIDs(state.WithLabelQuery(web...), state.WithLabelQuery(db...)), "two queries: their union")
	s.Equal([]string{"a", "b", "d"}, s.listIDs(
		state.WithLabelQuery(db...),
		state.WithLabelQuery(resource.LabelEqual("tier", "front")),
	), "two queries: their union, sorted by ID")
	s.Equal([]string{"a", "b", "c", "d", "e"}, s.listIDs(state.WithLabelQuery(db...), state.WithLabelQuery()), "an empty query selects everything")
	s.Equal([]string{"b"}, s.listIDs(
		state.WithLabelQuery(web...), state.WithLabelQuery(db...),
		state.WithIDQuery(resource.IDRegexpMatch(regexp.MustCompile("^[bcd]"))),
	), "the ID query applies to the union")

	s.Equal([]string{"a", "b"}, s.bootstrapIDs(state.WatchWithLabelQuery(web...), state.WatchWithLabelQuery(db...)))
	s.Equal([]string{"a", "b", "d"}, s.bootstrapIDs(state.WatchWithLabelQuery(db...), state.WatchWithLabelQuery(resource.LabelEqual("tier", "front"))))
}

// TestS15_OrderingOperators: LabelLT and LabelLTE compare label values as
// strings, LabelLTNumeric and LabelLTENumeric as integers; a resource
// without the key (or, numeric, whose value is not an integer) matches
// neither a term nor its inversion.
func (s *StateSuite) TestS15_OrderingOperators() {
	s.labelled([]string{"n1", "n2", "n10", "nx", "none"}, []map[string]string{
		{"n": "1"}, {"n": "2"}, {"n": "10"}, {"n": "x"}, {},
	})
	s.Equal([]string{"n1", "n10"}, s.listIDs(state.WithLabelQuery(resource.LabelLT("n", "2"))), "strings: \"10\" < \"2\"")
	s.Equal([]string{"n1", "n10", "n2"}, s.listIDs(state.WithLabelQuery(resource.LabelLTE("n", "2"))))
	s.Equal([]string{"nx"}, s.listIDs(state.WithLabelQuery(resource.LabelLTE("n", "2", resource.NotMatches))), "inverted: key set, after \"2\"")
	s.Equal([]string{"n1"}, s.listIDs(state.WithLabelQuery(resource.LabelLTNumeric("n", "2"))))
	s.Equal([]string{"n1", "n2"}, s.listIDs(state.WithLabelQuery(resource.LabelLTENumeric("n", "2"))))
	s.Equal([]string{"n10", "n2"}, s.listIDs(state.WithLabelQuery(resource.LabelLTNumeric("n", "2", resource.NotMatches))), "inverted: an integer >= 2")
	s.Equal([]string{"n10"}, s.listIDs(state.WithLabelQuery(resource.LabelLTENumeric("n", "2", resource.NotMatches), resource.LabelLTNumeric("n", "100"))),
		"a range: 2 < n < 100")
	s.Equal([]string{"n1", "n10"}, s.bootstrapIDs(state.WatchWithLabelQuery(resource.LabelLTNumeric("n", "2")), state.WatchWithLabelQuery(resource.LabelLTNumeric("n", "5", resource.NotMatches))),
		"a union of numeric ranges")
}

// TestS15_UnusableTermIsRefused: a label term with an empty key, or a
// numeric operation with a value that is not an integer, is refused by
// List and WatchKind with an invalid-class error naming the option and
// the fix; nothing is listed and no watch starts.
func (s *StateSuite) TestS15_UnusableTermIsRefused() {
	s.create("a", 1)
	for name, q := range map[string]resource.LabelQueryOption{
		"empty key":           resource.LabelEqual("", "v"),
		"empty key, ordering": resource.LabelLT("", "v"),
		"not an integer":      resource.LabelLTNumeric("n", "ten"),
		"not an integer, LTE": resource.LabelLTENumeric("n", "1.5"),
	} {
		list, err := s.State.List(s.ctx, s.kind(), state.WithLabelQuery(resource.LabelExists("ok")), state.WithLabelQuery(q))
		s.Truef(state.IsInvalidError(err), "%s: List: %v", name, err)
		s.Containsf(err.Error(), "WithLabelQuery", "%s: the error names the option", name)
		s.Emptyf(list.Items, "%s: nothing listed", name)

		ch := make(chan state.Event, 1)
		err = s.State.WatchKind(s.ctx, s.kind(), ch, state.WithBootstrapContents(true), state.WatchWithLabelQuery(q))
		s.Truef(state.IsInvalidError(err), "%s: WatchKind: %v", name, err)
		s.Containsf(err.Error(), "WatchWithLabelQuery", "%s: the error names the option", name)
		s.expectEmpty(ch)
	}
}

// TestS10_UnionWatcherSeesDestroyedWhenNoQueryMatches: under several
// label queries (rule S15), a resource that moves from one query of the
// union to another stays Updated; one that stops matching every query is
// reported as Destroyed, and one that starts matching any as Created.
func (s *StateSuite) TestS10_UnionWatcherSeesDestroyedWhenNoQueryMatches() {
	relabel := func(id, k, v string) {
		r := s.get(id)
		if v == "" {
			r.Metadata().Labels().Delete(k)
		} else {
			r.Metadata().Labels().Set(k, v)
		}
		s.Require().NoError(s.State.Update(s.ctx, r))
	}
	s.labelled([]string{"a"}, []map[string]string{{"app": "web"}})
	ch := s.watchKind(eventBuffer, state.WithBootstrapContents(true),
		state.WatchWithLabelQuery(resource.LabelEqual("app", "web")),
		state.WatchWithLabelQuery(resource.LabelEqual("app", "db")))
	s.expectEvent(ch, state.Created, "a", 1)
	s.Require().Equal(state.Bootstrapped, s.next(ch).Type)

	relabel("a", "app", "db")    // v2: from one query to the other
	relabel("a", "app", "cache") // v3: no query matches
	relabel("a", "app", "web")   // v4: matches again
	relabel("a", "app", "")      // v5: no label at all

	ev := s.expectEvent(ch, state.Updated, "a", 2)
	s.Equal(uint64(1), version(ev.Old))
	s.expectEvent(ch, state.Destroyed, "a", 0)
	s.expectEvent(ch, state.Created, "a", 4)
	s.expectEvent(ch, state.Destroyed, "a", 0)
	s.expectEmpty(ch)
}
