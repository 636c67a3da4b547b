package netres

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// KernelLinkType is the type of [KernelLink].
const KernelLinkType resource.Type = "KernelLinks.net.resgraph.dev"

// KernelLink is a link as the (simulated) kernel reports it; its ID is the
// link name. Only the kernel observer controller writes it.
type KernelLink = typed.Resource[KernelLinkSpec, KernelLinkDef]

// KernelLinkDef defines [KernelLink].
type KernelLinkDef struct{}

// Definition implements typed.DefinitionProvider.
func (KernelLinkDef) Definition() typed.Definition {
	return typed.Definition{Type: KernelLinkType, DefaultNamespace: Namespace}
}

// NewKernelLink returns an empty KernelLink for the link name.
func NewKernelLink(name string) *KernelLink {
	return typed.New[KernelLinkSpec, KernelLinkDef](resource.NewMetadata(Namespace, KernelLinkType, name, resource.VersionUndefined), KernelLinkSpec{})
}

// KernelLinkSpec is the kernel's view of a link.
type KernelLinkSpec struct {
	HardwareAddr string
	Index        int
	MTU          int
	Up           bool // operational state: carrier present
}

// String summarizes the spec for a log line.
func (s KernelLinkSpec) String() string {
	return fmt.Sprintf("%s index=%d mtu=%d mac=%s", upDown(s.Up), s.Index, s.MTU, s.HardwareAddr)
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
