package remote

import (
	"reflect"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// encodeSlots is the size of the server's table of encoded snapshots.
const encodeSlots = 1024

// encodings remembers the wire form of the snapshots the server encoded
// last, so that a change delivered to many watchers (rule S7: they all
// receive the same snapshot object) is encoded once, not once per watcher.
// It is a table of encodeSlots slots indexed by the snapshot's address: a
// slot holds the last snapshot encoded there, and an entry is used only
// for the very object it was made from (and the same encoding options).
// Encoded messages are shared read-only between the calls that send
// them. Memory: at most encodeSlots snapshots and their messages are
// kept alive by the table.
type encodings struct {
	slots [encodeSlots]atomic.Pointer[encoded]
}

type encoded struct {
	res              resource.Resource
	inKind, withJSON bool
	msg              *pb.Resource
}

// get returns the message of r made with the same options, or makes it
// with encode and remembers it.
func (e *encodings) get(r resource.Resource, inKind, withJSON bool, encode func() (*pb.Resource, error)) (*pb.Resource, error) {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer {
		return encode()
	}
	slot := &e.slots[(v.Pointer()>>4)%encodeSlots]
	if c := slot.Load(); c != nil && c.inKind == inKind && c.withJSON == withJSON && sameObject(c.res, r) {
		return c.msg, nil
	}
	msg, err := encode()
	if err == nil {
		slot.Store(&encoded{res: r, inKind: inKind, withJSON: withJSON, msg: msg})
	}
	return msg, err
}
