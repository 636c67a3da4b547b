package route

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// watchFailure is why a kind watch failed, as plain data: the text of the
// state's error (rendered once, inside usercode.ErrorText) or what was
// wrong with the stream; overrun tells that the state's error was a
// buffer-overrun error (a bookmark it no longer resumes from).
type watchFailure struct {
	msg     string
	overrun bool
}

func (f watchFailure) Error() string { return f.msg }

// failureText returns the message of a watchOnce error.
func failureText(err error) string {
	if f, ok := err.(watchFailure); ok {
		return f.msg
	}
	return usercode.ErrorText(err)
}

// erroredFailure is the failure of an Errored event carrying err.
func erroredFailure(err error) watchFailure {
	if err == nil {
		return watchFailure{msg: "errored event without an error"}
	}
	return watchFailure{msg: "errored event: " + usercode.ErrorText(err), overrun: isOverrun(err)}
}

// metadataOf returns the metadata of every change event of batch (nil for
// the others), read once: the events come from the state, which may be a
// foreign implementation, so their resources' Metadata methods are user
// code. They are called here, before anything of the batch is applied, and
// the results used from then on. An event that cannot be routed — a change
// without a resource (or with a typed-nil one), a resource without metadata
// or of another kind, an empty ID, a panicking Metadata — fails the watch,
// which is then re-established with a re-list (see run): routing around it
// could lose the change it stood for.
//
// A panic is recovered by watchOnce (one deferred recover per watch rather
// than per batch: this is the hot path), which reads w.inspect to tell that
// it was Metadata's (see metadataPanic). The result is stored in w.metas
// for reuse.
func (w *kindWatcher) metadataOf(batch []state.Event) ([]*resource.Metadata, error) {
	w.metas = w.metas[:0]
	for i := range batch {
		ev := &batch[i]
		switch ev.Type {
		case state.Created, state.Updated, state.Destroyed:
		default:
			w.metas = append(w.metas, nil)
			continue
		}
		if ev.Resource == nil {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s without a resource", ev.Type)}
		}
		w.inspect = ev
		md := ev.Resource.Metadata()
		w.inspect = nil
		if md == nil {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s whose resource (%T) has no metadata", ev.Type, ev.Resource)}
		}
		if ns, typ, id := md.Identity(); ns != w.key.Namespace() || typ != w.key.Type() || id == "" {
			return w.metas, watchFailure{msg: fmt.Sprintf("the state sent an event of type %s for %s on the watch of %s", ev.Type, resource.PointerString(md), w.key)}
		}
		md.Freeze() // a shared snapshot (the states of this module froze it already)
		w.metas = append(w.metas, md)
	}
	return w.metas, nil
}

// metadataPanic is the failure of the Metadata method of w.inspect's
// resource panicking with p; any other panic is re-raised (it is not user
// code's).
func (w *kindWatcher) metadataPanic(p any) error {
	ev := w.inspect
	if ev == nil {
		panic(p)
	}
	w.inspect = nil
	if usercode.IsNil(ev.Resource) {
		return watchFailure{msg: fmt.Sprintf("the state sent an event of type %s with a typed-nil resource (%T)", ev.Type, ev.Resource)}
	}
	return watchFailure{msg: fmt.Sprintf("the state sent an event of type %s whose resource's Metadata panicked: %s", ev.Type, usercode.Sprint(p))}
}
