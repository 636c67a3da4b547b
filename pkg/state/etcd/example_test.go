package etcd_test

import (
	"context"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

type (
	HostnameSpec struct{ Name string }
	HostnameDef  struct{}
)

func (HostnameDef) Definition() typed.Definition {
	return typed.Definition{Type: "Hostnames.example.resgraph.dev", DefaultNamespace: "system"}
}

// termTeller is a Controller that tells, once, the term it runs under.
type termTeller struct{ told chan leadership.TermInfo }

func (termTeller) Name() string                 { return "termTeller" }
func (termTeller) Inputs() []controller.Input   { return nil }
func (termTeller) Outputs() []controller.Output { return nil }

func (c termTeller) Run(ctx context.Context, _ controller.Runtime, _ *zap.Logger) error {
	if term, ok := leadership.FromContext(ctx); ok {
		c.told <- term
	}
	<-ctx.Done()
	return nil
}

// A daemon's state on an etcd cluster, shared by its replicas, which elect
// the one that runs the controllers (LeadPerRuntime; LeadPerController
// elects per controller). A controller reads its term from its context.
// The endpoints are your cluster's, e.g. []string{"127.0.0.1:2379"}; here
// they are those of the etcd server this package's tests start (an
// example needs a server to run).
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: client.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close() // after the state's last use

	reg := codec.NewRegistry()
	codec.MustRegister[HostnameSpec, HostnameDef](reg)
	st, err := etcd.New(ctx, cli, reg, etcd.WithPrefix("/example-daemon/"))
	if err != nil {
		log.Fatal(err)
	}
	el, err := etcd.NewElector(ctx, cli, etcd.WithElectionPrefix("/example-daemon/"), // the state's prefix
		etcd.WithLeaseTTL(10*time.Second)) // how long a silent leader keeps its controllers
	if err != nil {
		log.Fatal(err)
	}
	defer el.Close() // after Run returned: revokes the lease
	rt, err := runtime.New(st, zap.NewNop(), runtime.WithLeadership(el, runtime.LeadPerRuntime))
	if err != nil {
		log.Fatal(err)
	}
	teller := termTeller{told: make(chan leadership.TermInfo, 1)}
	if err := rt.RegisterController(teller); err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	select {
	case term := <-teller.told:
		fmt.Printf("termTeller runs under a term of the election %q\n", term.Election)
	case <-time.After(30 * time.Second):
		log.Fatal("this replica did not lead within 30 s")
	}
	cancel()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// termTeller runs under a term of the election "runtime"
}
