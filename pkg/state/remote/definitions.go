package remote

import (
	"context"

	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

func definitionToPB(d definition.Definition) *pb.Definition {
	m := &pb.Definition{
		Type: d.Type, DefaultNamespace: d.DefaultNamespace, Aliases: d.Aliases,
		Encoding: d.Encoding, Sensitive: d.Sensitive,
	}
	for _, c := range d.Columns {
		m.Columns = append(m.Columns, &pb.Column{Name: c.Name, Path: c.Path})
	}
	return m
}

func definitionFromPB(m *pb.Definition) definition.Definition {
	d := definition.Definition{
		Type: m.GetType(), DefaultNamespace: m.GetDefaultNamespace(), Aliases: m.GetAliases(),
		Encoding: m.GetEncoding(), Sensitive: m.GetSensitive(),
	}
	for _, c := range m.GetColumns() {
		d.Columns = append(d.Columns, definition.Column{Name: c.GetName(), Path: c.GetPath()})
	}
	return d
}

// Definitions asks the server on conn for the definitions of the resource
// types it knows, and returns them in a registry of their own — so that a
// tool can resolve names and print tables of types it was never compiled
// with. A definition the registry refuses (a server that sends a bad one)
// fails the call, naming it.
func Definitions(ctx context.Context, conn grpc.ClientConnInterface) (*definition.Registry, error) {
	resp, err := pb.NewStateClient(conn).Definitions(ctx, &pb.DefinitionsRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	reg := definition.NewRegistry()
	for _, m := range resp.GetDefinitions() {
		if err := reg.Add(definitionFromPB(m)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
