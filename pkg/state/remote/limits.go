package remote

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// connTagger is the stats handler that gives each connection a counter of
// its open watches, in the connection's context (which every call's
// context of that connection derives from).
type connTagger struct{}

type connKey struct{}

// connCount counts one connection's open watches.
type connCount struct{ watches atomic.Int64 }

func (connTagger) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, &connCount{})
}

func (connTagger) HandleConn(context.Context, stats.ConnStats) {}

func (connTagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (connTagger) HandleRPC(context.Context, stats.RPCStats) {}

// watchLimits enforces the bound of open watches per connection.
type watchLimits struct {
	max int64
	mu  sync.Mutex
	// byAddr counts the watches of connections the stats handler did
	// not tag, by peer address (guarded by mu); an address is removed
	// when its count drops to zero.
	byAddr map[string]*connCount
}

func newWatchLimits(max int) *watchLimits {
	return &watchLimits{max: int64(max), byAddr: map[string]*connCount{}}
}

// acquire counts one more watch of the call's connection and returns the
// function that uncounts it, or a ResourceExhausted status when the
// connection has its bound of watches open.
func (l *watchLimits) acquire(ctx context.Context) (release func(), err error) {
	if c, ok := ctx.Value(connKey{}).(*connCount); ok {
		if c.watches.Add(1) > l.max {
			c.watches.Add(-1)
			return nil, l.exhausted()
		}
		return func() { c.watches.Add(-1) }, nil
	}
	addr := "?"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		addr = p.Addr.Network() + ":" + p.Addr.String()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.byAddr[addr]
	if c == nil {
		c = &connCount{}
		l.byAddr[addr] = c
	}
	if c.watches.Load() >= l.max {
		return nil, l.exhausted()
	}
	c.watches.Add(1)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if c.watches.Add(-1) == 0 {
			delete(l.byAddr, addr)
		}
	}, nil
}

func (l *watchLimits) exhausted() error {
	return status.Errorf(codes.ResourceExhausted,
		"remote: this connection has %d watches open, the server's bound (remote.WithMaxWatchesPerConnection); end one first", l.max)
}
