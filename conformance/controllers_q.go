package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// QIntToStrController is a QController that, for each [IntResource] in
// InputNamespace, keeps a [StrResource] with the same ID in
// OutputNamespace whose value is the int formatted in decimal, and destroys
// that StrResource when the IntResource is gone. It records how often each
// ID was reconciled and how many reconciles ran at once, overall and per
// pointer (rules Q1, Q2).
//
// Inputs: IntResources in InputNamespace (primary). Outputs: StrResources
// (exclusive).
type QIntToStrController struct {
	// ControllerName is the controller's name (default
	// "QIntToStrController").
	ControllerName string
	// InputNamespace holds the IntResources (default [DefaultNamespace]).
	InputNamespace resource.Namespace
	// OutputNamespace holds the StrResources (default [DefaultNamespace]).
	OutputNamespace resource.Namespace
	// Concurrency is passed in the settings (None: the Runtime's default).
	Concurrency optional.Optional[uint]
	// Gate, when set, is received from at the start of every Reconcile:
	// the reconcile stays in flight until something is sent on Gate (or
	// its context ends, which fails the reconcile).
	Gate <-chan struct{}

	mu          sync.Mutex
	reconciles  map[resource.ID]int // guarded by mu: Reconcile calls per ID
	inFlight    map[resource.ID]int // guarded by mu: Reconcile calls in progress per ID
	current     int                 // guarded by mu: Reconcile calls in progress
	maxCurrent  int                 // guarded by mu: the most Reconcile calls ever in progress at once
	overlapping int                 // guarded by mu: Reconcile calls that started while one for the same ID was in progress
}

// Name implements controller.QController.
func (c *QIntToStrController) Name() string {
	return orDefault(c.ControllerName, "QIntToStrController")
}

func (c *QIntToStrController) inNS() resource.Namespace {
	return orDefault(c.InputNamespace, DefaultNamespace)
}

func (c *QIntToStrController) outNS() resource.Namespace {
	return orDefault(c.OutputNamespace, DefaultNamespace)
}

// Settings implements controller.QController.
func (c *QIntToStrController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:      []controller.Input{{Namespace: c.inNS(), Type: IntResourceType, Kind: controller.InputQPrimary}},
		Outputs:     []controller.Output{{Type: StrResourceType, Kind: controller.OutputExclusive}},
		Concurrency: c.Concurrency,
	}
}

// Reconcile writes or destroys the StrResource of ptr's ID.
func (c *QIntToStrController) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	id := ptr.ID()
	c.enter(id)
	defer c.exit(id)
	if c.Gate != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Gate:
		}
	}

	out := resource.NewPointer(c.outNS(), StrResourceType, id)
	res, err := r.Get(ctx, ptr)
	if state.IsNotFoundError(err) {
		if err := r.Destroy(ctx, out); err != nil && !state.IsNotFoundError(err) {
			return fmt.Errorf("destroy %s: %w", resource.PointerString(out), err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	in, err := as[*IntResource](res)
	if err != nil {
		return err
	}
	value := strconv.Itoa(in.TypedSpec().Value)
	return r.Modify(ctx, NewStrResource(c.outNS(), id, ""), func(res resource.Resource) error {
		s, err := as[*StrResource](res)
		if err != nil {
			return err
		}
		s.TypedSpec().Value = value
		return nil
	})
}

func (c *QIntToStrController) enter(id resource.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reconciles == nil {
		c.reconciles, c.inFlight = map[resource.ID]int{}, map[resource.ID]int{}
	}
	c.reconciles[id]++
	if c.inFlight[id] > 0 {
		c.overlapping++
	}
	c.inFlight[id]++
	c.current++
	c.maxCurrent = max(c.maxCurrent, c.current)
}

func (c *QIntToStrController) exit(id resource.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight[id]--
	c.current--
}

// MapInput maps nothing (the controller has no mapped inputs).
func (c *QIntToStrController) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// Reconciles returns how many times Reconcile was called for id.
func (c *QIntToStrController) Reconciles(id resource.ID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles[id]
}

// InFlight returns the IDs being reconciled now, sorted.
func (c *QIntToStrController) InFlight() []resource.ID {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []resource.ID
	for id, n := range c.inFlight {
		if n > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// MaxConcurrent returns the most Reconcile calls that were ever in
// progress at once.
func (c *QIntToStrController) MaxConcurrent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxCurrent
}

// Overlapping returns how many Reconcile calls started while another one
// for the same ID was in progress (rule Q2 says none).
func (c *QIntToStrController) Overlapping() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.overlapping
}

var _ controller.QController = (*QIntToStrController)(nil)
