package access

import "context"

type subjectKey struct{}

// NewContext returns ctx carrying the subject of the caller: a door puts
// it there for the handlers of its calls.
func NewContext(ctx context.Context, s *Subject) context.Context {
	return context.WithValue(ctx, subjectKey{}, s)
}

// FromContext returns the subject ctx carries, or nil.
func FromContext(ctx context.Context) *Subject {
	s, _ := ctx.Value(subjectKey{}).(*Subject)
	return s
}
