package etcd

import (
	"encoding/binary"
	"math"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// position is where a change sits in the history of the cluster: the
// etcd revision that made it and its index among the changes of its kind
// in that revision (one transaction may change several keys). Positions of
// one kind strictly increase with its changes.
type position struct {
	rev int64
	sub uint32
}

// revOf is the state's revision of the change at p (see
// state.RevisionReporter): its etcd revision.
func revOf(p position) uint64 { return uint64(max(p.rev, 0)) }

// endOf is the position after every change of revision rev.
func endOf(rev int64) position { return position{rev: rev, sub: math.MaxUint32} }

func (p position) less(q position) bool {
	return p.rev < q.rev || (p.rev == q.rev && p.sub < q.sub)
}

// A bookmark is bookmarkLen bytes: a format tag, the etcd cluster's ID,
// and the position of the change (revision and index, big-endian). A
// watch resumes after the position, from any state on the same cluster
// (another process too, or after a restart); a bookmark of another
// cluster is refused as invalid.
const (
	bookmarkTag = 'E'
	bookmarkLen = 1 + 8 + 8 + 4
)

func (c *core) bookmark(p position) state.Bookmark {
	b := make([]byte, bookmarkLen)
	b[0] = bookmarkTag
	binary.BigEndian.PutUint64(b[1:], c.clusterID)
	binary.BigEndian.PutUint64(b[9:], uint64(p.rev))
	binary.BigEndian.PutUint32(b[17:], p.sub)
	return b
}

// decodeBookmark returns the position in b, or an invalid error.
func (c *core) decodeBookmark(ptr resource.Pointer, b state.Bookmark) (position, error) {
	if len(b) != bookmarkLen || b[0] != bookmarkTag {
		return position{}, state.NewInvalidError(ptr, "watch: malformed bookmark")
	}
	if binary.BigEndian.Uint64(b[1:]) != c.clusterID {
		return position{}, state.NewInvalidError(ptr, "watch: bookmark of another etcd cluster")
	}
	rev := binary.BigEndian.Uint64(b[9:])
	if rev > math.MaxInt64 {
		return position{}, state.NewInvalidError(ptr, "watch: malformed bookmark")
	}
	return position{rev: int64(rev), sub: binary.BigEndian.Uint32(b[17:])}, nil
}
