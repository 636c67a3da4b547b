package netres

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// LinkStatusType is the type of [LinkStatus].
const LinkStatusType resource.Type = "LinkStatuses.net.resgraph.dev"

// LinkStatus is a link the agent configured in the kernel, with its observed
// state; its ID is the link name. It exists from the moment the kernel
// accepted the link's configuration until the LinkSpec is gone.
type LinkStatus = typed.Resource[LinkStatusSpec, LinkStatusDef]

// LinkStatusDef defines [LinkStatus].
type LinkStatusDef struct{}

// Definition implements typed.DefinitionProvider.
func (LinkStatusDef) Definition() typed.Definition {
	return typed.Definition{Type: LinkStatusType, DefaultNamespace: Namespace}
}

// NewLinkStatus returns an empty LinkStatus for the link name.
func NewLinkStatus(name string) *LinkStatus {
	return typed.New[LinkStatusSpec, LinkStatusDef](resource.NewMetadata(Namespace, LinkStatusType, name, resource.VersionUndefined), LinkStatusSpec{})
}

// LinkStatusSpec is the configured link's state.
type LinkStatusSpec struct {
	HardwareAddr string
	Index        int
	MTU          int
	// Up reports that the kernel sees the link operationally up. Addresses
	// and routes exist only for links that are up.
	Up bool
}

// String summarizes the spec for a log line.
func (s LinkStatusSpec) String() string {
	return fmt.Sprintf("%s index=%d mtu=%d", upDown(s.Up), s.Index, s.MTU)
}
