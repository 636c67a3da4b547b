// Package kernel simulates the part of an operating system kernel that a
// network agent talks to: links that are created, reconfigured and deleted
// on request, and whose carrier comes and goes on its own.
//
// Guarantees:
//   - ApplyLink is idempotent once it succeeded; before that it fails with
//     an error wrapping [ErrDeviceBusy] the first Config.FailFirst times it
//     is called for a given link name (a transient failure, so that callers
//     show their retry/backoff path).
//   - A new link is operationally up, unless its cable is unplugged
//     ([Kernel.SetCable]: a port's cable stays plugged or unplugged
//     whether or not its link exists).
//   - Every change (apply, delete, carrier change) is signalled on
//     [Kernel.Notify], a coalescing channel of capacity one: a reader that
//     wakes up reads the current state with [Kernel.Links].
//   - [Kernel.Run] flaps carriers when Config.FlapMin > 0: at pseudo-random
//     intervals in [FlapMin, FlapMax] it takes one random link down, and at
//     the next interval brings it back up. The sequence of choices depends
//     only on Config.Seed and the set of links at each step. Run returns
//     when its context is done.
//   - All methods are safe for concurrent use.
package kernel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ErrDeviceBusy is the transient error of ApplyLink.
var ErrDeviceBusy = errors.New("device or resource busy")

// Config configures a [Kernel]. The zero value is a kernel that never fails
// and never flaps.
type Config struct {
	// Logger receives one line per carrier change made by Run; nil means
	// no logging.
	Logger *zap.Logger
	// FailFirst is how many times ApplyLink fails for each link name
	// before it succeeds.
	FailFirst int
	// Latency is how long ApplyLink takes to create a link (a slow
	// device), without holding the kernel's lock; 0: at once.
	Latency time.Duration
	// FlapMin and FlapMax bound the interval between two carrier changes
	// made by Run; FlapMin == 0 disables flapping. FlapMax < FlapMin is
	// treated as FlapMin.
	FlapMin, FlapMax time.Duration
	// Seed seeds the flapping sequence.
	Seed uint64
	// Links are the links the kernel starts with (a kernel in the
	// condition a recorded or live state describes: see the package
	// netres's KernelLinks); a link's carrier is as its Up says.
	Links []Link
	// OnCarrier, when set, is told of each carrier change Run makes (the
	// world's event, for a flight recorder to note: see CarrierAction),
	// just before it makes it, with the kernel's lock held (so that no
	// reader of the kernel sees the change before it is told): it must
	// return promptly and not call the kernel.
	OnCarrier func(name string, up bool)
	// OnChange, when set, is told of each change asked of the kernel
	// ("create link eth1 (MTU 1500)", "set the MTU of eth0 to 9000",
	// "delete link eth1"), with the kernel's lock held: it must return
	// promptly and not call the kernel.
	OnChange func(what string)
	// OnRead, when set, is told of what each Links call returns (a world
	// read, for a flight recorder to note: see LinksRead, EncodeLinks),
	// with the kernel's lock held (so that no change comes between the
	// read and its note): it must return promptly and not call the
	// kernel.
	OnRead func(links []Link)
}

// LinksRead names the world read of the kernel's links (Kernel.Links) in
// a recording of the agent.
const LinksRead = "kernel links"

// EncodeLinks encodes links as a recording keeps a read of them (JSON).
func EncodeLinks(links []Link) []byte {
	b, err := json.Marshal(links)
	if err != nil {
		panic(err) // Link has only strings, ints and bools
	}
	return b
}

// DecodeLinks decodes what EncodeLinks encoded.
func DecodeLinks(b []byte) ([]Link, error) {
	var out []Link
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("kernel links read: %w", err)
	}
	return out, nil
}

// CarrierAction names the world action of a carrier change of the link
// name: "carrier of eth0 lost" or "carrier of eth0 restored". A
// simulation scenario's action of that name makes the same change.
func CarrierAction(name string, up bool) string {
	if up {
		return "carrier of " + name + " restored"
	}
	return "carrier of " + name + " lost"
}

// Link is a link as the kernel reports it.
type Link struct {
	Name         string
	HardwareAddr string
	Index        int
	MTU          int
	Up           bool
}

// Kernel is a simulated kernel. Build it with [New].
type Kernel struct {
	cfg    Config
	log    *zap.Logger
	notify chan struct{} // capacity 1, coalescing
	// stop is closed by StopFlapping.
	stop     chan struct{}
	stopOnce sync.Once

	mu sync.Mutex
	// links, attempts and nextIndex are protected by mu.
	links     map[string]*Link
	attempts  map[string]int // ApplyLink calls per link name, until the first success
	unplugged map[string]bool
	nextIndex int
}

// New returns a kernel with no links. It starts nothing: flapping happens
// only while [Kernel.Run] runs.
func New(cfg Config) *Kernel {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.FlapMax < cfg.FlapMin {
		cfg.FlapMax = cfg.FlapMin
	}
	k := &Kernel{
		cfg:       cfg,
		log:       log,
		notify:    make(chan struct{}, 1),
		stop:      make(chan struct{}),
		links:     make(map[string]*Link),
		attempts:  make(map[string]int),
		unplugged: make(map[string]bool),
		nextIndex: 2, // 1 is the loopback
	}
	for _, l := range cfg.Links {
		k.links[l.Name] = &l
		k.nextIndex = max(k.nextIndex, l.Index+1)
	}
	return k
}

// Notify returns the channel on which every change is signalled. Changes
// that happen before the reader drains the channel coalesce into one signal.
func (k *Kernel) Notify() <-chan struct{} { return k.notify }

func (k *Kernel) signal() {
	select {
	case k.notify <- struct{}{}:
	default:
	}
}

// ApplyLink creates the link name with the given MTU (up), or sets the MTU
// of the existing link, and returns the link. See the package doc for its
// transient failures. A creation waits for Config.Latency, or until ctx is
// done (then it creates nothing and returns ctx's error).
func (k *Kernel) ApplyLink(ctx context.Context, name string, mtu int) (Link, error) {
	if name == "" {
		return Link{}, errors.New("apply link: empty name")
	}
	if k.cfg.Latency > 0 && !k.exists(name) {
		t := time.NewTimer(k.cfg.Latency) // the simulated device is slow to create it
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Link{}, fmt.Errorf("apply link %s: %w", name, ctx.Err())
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.links[name]
	if !ok {
		if n := k.attempts[name]; n < k.cfg.FailFirst {
			k.attempts[name] = n + 1
			return Link{}, fmt.Errorf("apply link %s (attempt %d): %w", name, n+1, ErrDeviceBusy)
		}
		delete(k.attempts, name)
		l = &Link{Name: name, Index: k.nextIndex, HardwareAddr: k.mac(name), Up: !k.unplugged[name]}
		k.nextIndex++
		k.links[name] = l
		k.changed(fmt.Sprintf("create link %s (MTU %d)", name, mtu))
	} else if l.MTU == mtu {
		return *l, nil
	} else {
		k.changed(fmt.Sprintf("set the MTU of %s to %d", name, mtu))
	}
	l.MTU = mtu
	k.signal()
	return *l, nil
}

// exists reports whether the link name exists.
func (k *Kernel) exists(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.links[name]
	return ok
}

// mac derives a stable, locally administered MAC address from the seed and
// the link name.
func (k *Kernel) mac(name string) string {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d/%s", k.cfg.Seed, name)
	s := h.Sum64()
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", byte(s>>32), byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}

// DeleteLink deletes the link and reports whether it existed. A link
// deleted and created again starts its transient failures anew.
func (k *Kernel) DeleteLink(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.links[name]; !ok {
		return false
	}
	delete(k.links, name)
	k.changed("delete link " + name)
	k.signal()
	return true
}

// changed tells OnChange of a change.
func (k *Kernel) changed(what string) {
	if k.cfg.OnChange != nil {
		k.cfg.OnChange(what)
	}
}

// SetCarrier sets the link's operational state, as a cable plugged in or
// out would. It reports whether the link exists.
func (k *Kernel) SetCarrier(name string, up bool) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.setCarrierLocked(name, up)
}

// SetCable plugs the cable of the port name in or out: the link's carrier
// follows at once if it exists, and a link created later starts with it.
// It reports whether the link exists.
func (k *Kernel) SetCable(name string, plugged bool) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if plugged {
		delete(k.unplugged, name)
	} else {
		k.unplugged[name] = true
	}
	return k.setCarrierLocked(name, plugged)
}

func (k *Kernel) setCarrierLocked(name string, up bool) bool {
	l, ok := k.links[name]
	if !ok {
		return false
	}
	if l.Up != up {
		l.Up = up
		k.signal()
	}
	return true
}

// Links returns every link, sorted by name.
func (k *Kernel) Links() []Link {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]Link, 0, len(k.links))
	for _, l := range k.links {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Link) int { return cmp.Compare(a.Name, b.Name) })
	if k.cfg.OnRead != nil {
		k.cfg.OnRead(out)
	}
	return out
}

// Run flaps carriers until ctx is done or StopFlapping is called (see the
// package doc) and returns nil. With flapping disabled it returns nil at
// once.
func (k *Kernel) Run(ctx context.Context) error {
	if k.cfg.FlapMin <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(k.cfg.Seed, k.cfg.Seed^0x9e3779b97f4a7c15))
	timer := time.NewTimer(k.interval(rng))
	defer timer.Stop()
	var down string // the link this loop took down, "" if none
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-k.stop:
			return nil
		case <-timer.C:
		}
		down = k.flap(rng, down)
		timer.Reset(k.interval(rng))
	}
}

// StopFlapping makes Run return (at once, or as soon as it runs): Run
// makes no carrier change once it returned, and the carriers stay as they
// are. It may be called more than once.
func (k *Kernel) StopFlapping() {
	k.mu.Lock() // a flap under way ends first; flap checks stop under mu
	defer k.mu.Unlock()
	k.stopOnce.Do(func() { close(k.stop) })
}

func (k *Kernel) interval(rng *rand.Rand) time.Duration {
	span := k.cfg.FlapMax - k.cfg.FlapMin
	if span <= 0 {
		return k.cfg.FlapMin
	}
	return k.cfg.FlapMin + time.Duration(rng.Int64N(int64(span)+1))
}

// flap makes one step of the flapping sequence and returns the link it left
// down ("" if none).
func (k *Kernel) flap(rng *rand.Rand, down string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.stop:
		return down
	default:
	}
	if down != "" {
		if l, ok := k.links[down]; ok && !l.Up {
			k.carrier(down, true)
			k.setCarrierLocked(down, true)
			k.log.Info("carrier up", zap.String("link", down))
		}
		return ""
	}
	if len(k.links) == 0 {
		return ""
	}
	names := make([]string, 0, len(k.links))
	for n := range k.links {
		names = append(names, n)
	}
	slices.Sort(names)
	name := names[rng.IntN(len(names))]
	if !k.links[name].Up {
		return "" // already down (set by someone else): leave it alone
	}
	k.carrier(name, false)
	k.setCarrierLocked(name, false)
	k.log.Info("carrier lost", zap.String("link", name))
	return name
}

// carrier tells OnCarrier of a carrier change Run is about to make (with
// the lock held: before anyone can see the change).
func (k *Kernel) carrier(name string, up bool) {
	if k.cfg.OnCarrier != nil {
		k.cfg.OnCarrier(name, up)
	}
}
