package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// A daemon of the tests' own (a real state served by the real server on a
// real socket) for what the demo does not have: a sensitive type, items
// with labels, a finalizer nobody releases.

type (
	secretSpec struct {
		Holder string `json:"holder"`
		Key    string `json:"key"`
	}
	secretDef struct{}

	itemSpec struct {
		Size int `json:"size"`
	}
	itemDef struct{}
	item    = typed.Resource[itemSpec, itemDef]
)

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.test.resgraph.dev", DefaultNamespace: "vault"}
}

func (secretDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"secret", "secrets"}, Columns: []definition.Column{{Name: "Holder", Path: ".holder"}}, Sensitive: true}
}

func (itemDef) Definition() typed.Definition {
	return typed.Definition{Type: "Items.test.resgraph.dev", DefaultNamespace: "shop"}
}

func (itemDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"item", "items"}, Columns: []definition.Column{{Name: "Size", Path: ".size"}}}
}

// testDaemon is a state served on a unix socket and on loopback TCP.
type testDaemon struct {
	st     state.State
	socket string
	tcp    string
}

func serveTestDaemon(t *testing.T) *testDaemon {
	t.Helper()
	return serveTestDaemonOf(t, nil)
}

// testRegistry knows the test daemon's types.
func testRegistry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[secretSpec, secretDef](reg)
	codec.MustRegister[itemSpec, itemDef](reg)
	return reg
}

// serveTestDaemonOf is serveTestDaemon serving wrap(its state) (nil: the
// state itself); d.st is the state.
func serveTestDaemonOf(t *testing.T, wrap func(state.State) state.State) *testDaemon {
	t.Helper()
	reg := testRegistry()
	d := &testDaemon{st: inmem.NewState(), socket: filepath.Join(t.TempDir(), "api.sock")}
	served := d.st
	if wrap != nil {
		served = wrap(d.st)
	}
	srv := remote.NewServer(served, reg)
	gs := grpc.NewServer(srv.GRPCServerOptions()...)
	srv.Register(gs)
	unix, err := net.Listen("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.tcp = tcp.Addr().String()
	done := make(chan struct{}, 2)
	for _, l := range []net.Listener{unix, tcp} {
		go func() {
			_ = gs.Serve(l)
			done <- struct{}{}
		}()
	}
	t.Cleanup(func() {
		gs.Stop()
		<-done
		<-done
	})
	return d
}

func (d *testDaemon) create(t *testing.T, r resource.Resource) {
	t.Helper()
	if err := d.st.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func newItem(id string, size int, labels ...string) *item {
	it := typed.NewDefault[itemSpec, itemDef](id, itemSpec{Size: size})
	for i := 0; i+1 < len(labels); i += 2 {
		it.Metadata().Labels().Set(labels[i], labels[i+1])
	}
	return it
}
