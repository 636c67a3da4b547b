package controllers

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// LinkApplyConcurrency is how many links LinkApplyController configures at
// once.
const LinkApplyConcurrency = 2

// NewLinkApplyController returns the controller that configures each
// LinkSpec's link in the kernel and reports it as a LinkStatus: a qtransform
// (one link at a time per worker, LinkApplyConcurrency workers, per-link
// retry with backoff when the kernel refuses). KernelLink changes map to the
// LinkSpec of the same name, so the status follows the carrier. When a
// LinkSpec is deleted, the LinkStatus is torn down, and once it is gone the
// kernel link is deleted and the LinkSpec released.
func NewLinkApplyController(k *kernel.Kernel) *qtransform.QController[*netres.LinkSpec, *netres.LinkStatus] {
	return qtransform.NewQController(qtransform.Settings[*netres.LinkSpec, *netres.LinkStatus]{
		Name: LinkApplyControllerName,
		MapMetadataFunc: func(in *netres.LinkSpec) *netres.LinkStatus {
			return netres.NewLinkStatus(in.Metadata().ID())
		},
		UnmapMetadataFunc: func(out *netres.LinkStatus) *netres.LinkSpec {
			return netres.NewLinkSpec(out.Metadata().ID())
		},
		TransformFunc: func(ctx context.Context, r controller.Reader, logger *zap.Logger, in *netres.LinkSpec, out *netres.LinkStatus) error {
			name := in.Metadata().ID()
			l, err := k.ApplyLink(ctx, name, in.TypedSpec().MTU)
			if err != nil {
				return err
			}
			up := false
			kl, err := safe.ReaderGet[*netres.KernelLink](ctx, r, ptr(netres.KernelLinkType, name))
			switch {
			case err == nil:
				up = kl.TypedSpec().Up
			case !state.IsNotFoundError(err):
				return err
			}
			*out.TypedSpec() = netres.LinkStatusSpec{HardwareAddr: l.HardwareAddr, Index: l.Index, MTU: l.MTU, Up: up}
			return nil
		},
		FinalizerRemovalFunc: func(_ context.Context, _ controller.Reader, logger *zap.Logger, in *netres.LinkSpec) error {
			if k.DeleteLink(in.Metadata().ID()) {
				logger.Info("deleted link from the kernel", zap.String("link", in.Metadata().ID()))
			}
			return nil
		},
	},
		qtransform.WithConcurrency(LinkApplyConcurrency),
		qtransform.WithExtraMappedInput(func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, kl *netres.KernelLink) ([]resource.Pointer, error) {
			return []resource.Pointer{ptr(netres.LinkSpecType, kl.Metadata().ID())}, nil
		}),
	)
}
