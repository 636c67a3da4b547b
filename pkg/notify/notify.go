// Package notify speaks systemd's service notification protocol
// (sd_notify(3)) for a daemon built on a Runtime, with no dependency: a
// datagram to the unix socket $NOTIFY_SOCKET names (a path, or an
// abstract socket when it starts with "@").
//
// [Serve] follows the Runtime's health (observe.Health): it sends READY=1
// once the Runtime is ready (every controller started and caught up with
// the first listing of its inputs, knowing its leadership role), then, when
// the service manager asks for a watchdog ($WATCHDOG_USEC, for this
// process when $WATCHDOG_PID says so), WATCHDOG=1 at half that interval
// only while the Runtime is live, and STOPPING=1 when its context is done
// (the daemon begins its shutdown); STATUS= lines say what it waits for
// or what is not live. Without $NOTIFY_SOCKET (not started by systemd,
// or Type= is not notify) it sends nothing.
//
// A daemon's whole life, as docs/daemons.md's skeleton shows it:
//
//	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
//	defer stop()
//	... open the state, build the Runtime, register the controllers ...
//	var g errgroup.Group
//	g.Go(func() error { return rt.Run(ctx) })                   // returns once every controller stopped
//	g.Go(func() error { return notify.Serve(ctx, rt.Observe()) }) // READY=1, WATCHDOG=1, STOPPING=1
//	err := g.Wait()
//	... close the state ...
package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
)

// Environment variables of the protocol.
const (
	SocketEnv      = "NOTIFY_SOCKET"
	WatchdogEnv    = "WATCHDOG_USEC"
	WatchdogPIDEnv = "WATCHDOG_PID"
)

// Socket returns the socket $NOTIFY_SOCKET names, "" when it is unset.
func Socket() string { return os.Getenv(SocketEnv) }

// Send sends one notification (newline-separated assignments such as
// "READY=1" or "STATUS=...") to the socket $NOTIFY_SOCKET names, and
// nothing when it is unset (nil). An error says the socket could not be
// reached or the datagram not sent.
func Send(state string) error { return SendTo(Socket(), state) }

// SendTo sends one notification to socket (a path, or an abstract socket
// when it starts with "@"); nothing when socket is "".
func SendTo(socket, state string) error {
	if socket == "" {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify: %s: %w", socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("notify: %s: %w", socket, err)
	}
	return nil
}

// WatchdogInterval returns the interval at which the service manager
// expects WATCHDOG=1 ($WATCHDOG_USEC), and false when it expects none from
// this process ($WATCHDOG_USEC unset, or $WATCHDOG_PID another process's).
// An unusable value is an error.
func WatchdogInterval() (time.Duration, bool, error) {
	v := os.Getenv(WatchdogEnv)
	if v == "" {
		return 0, false, nil
	}
	if pid := os.Getenv(WatchdogPIDEnv); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0, false, nil
	}
	usec, err := strconv.ParseUint(v, 10, 63)
	if err != nil || usec == 0 {
		return 0, false, fmt.Errorf("notify: %s=%q: not a positive number of microseconds", WatchdogEnv, v)
	}
	return time.Duration(usec) * time.Microsecond, true, nil
}

// pollInterval is how often Serve asks the Runtime's health until it is
// ready (and between watchdog notifications when there is no watchdog).
const pollInterval = 100 * time.Millisecond

// Serve speaks the protocol for the Runtime o observes until ctx is done
// (see the package documentation): READY=1 once it is ready, WATCHDOG=1
// while it is live, STOPPING=1 at the end. It returns nil once ctx is done
// (without $NOTIFY_SOCKET it sends nothing and only waits for that), and
// an error, at once, when o tells no health (observe.HealthReporter), when
// $WATCHDOG_USEC is unusable, or when the socket cannot be reached.
func Serve(ctx context.Context, o observe.Observer) error {
	socket := Socket()
	if socket == "" {
		<-ctx.Done()
		return nil
	}
	if _, ok := observe.HealthOf(o); !ok {
		return errors.New("notify: the Observer tells no health (observe.HealthReporter)")
	}
	interval, watchdog, err := WatchdogInterval()
	if err != nil {
		return err
	}
	s := server{socket: socket, o: o}
	if err := s.untilReady(ctx); err != nil {
		return err
	}
	if watchdog && ctx.Err() == nil {
		s.watch(ctx, interval/2)
	}
	<-ctx.Done()
	return SendTo(socket, "STOPPING=1\nSTATUS=stopping")
}

// server is one Serve.
type server struct {
	socket string
	o      observe.Observer
	status string // the last STATUS sent
}

// untilReady sends READY=1 once the Runtime is ready, with STATUS= saying
// what it waits for meanwhile, or returns when ctx is done first.
func (s *server) untilReady(ctx context.Context) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		h, _ := observe.HealthOf(s.o)
		if h.Ready {
			return SendTo(s.socket, "READY=1\nSTATUS=ready")
		}
		if err := s.sendStatus("starting: " + firstCheck(h.NotReady)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// watch sends WATCHDOG=1 every period while the Runtime is live, and a
// STATUS= saying what is not live when it is not, until ctx is done.
func (s *server) watch(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		h, _ := observe.HealthOf(s.o)
		switch {
		case h.Live:
			_ = s.sendStatus("ready")
			_ = SendTo(s.socket, "WATCHDOG=1")
		default:
			_ = s.sendStatus("not live: " + firstCheck(h.NotLive))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sendStatus sends STATUS=status when it changed.
func (s *server) sendStatus(status string) error {
	if status == s.status {
		return nil
	}
	s.status = status
	return SendTo(s.socket, "STATUS="+status)
}

// firstCheck says the first failing check, and how many more there are.
func firstCheck(cs []observe.HealthCheck) string {
	if len(cs) == 0 {
		return "checking"
	}
	s := cs[0].String()
	if n := len(cs) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return strings.ReplaceAll(s, "\n", " ")
}
