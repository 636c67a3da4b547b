package cmd

import (
	"context"
	"io"
	"os"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/manifest"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// readFiles reads every resource of the -f files ("-" is the standard
// input), resolving their types with the daemon's definitions. Every
// document is read and checked before the caller writes anything.
func (a *app) readFiles(ctx context.Context, files []string) ([]*remote.Unstructured, error) {
	if len(files) == 0 {
		return nil, usageErr(errorf("-f is required: the FILE of resources (- for the standard input)"))
	}
	defs, err := a.definitions(ctx)
	if err != nil {
		return nil, err
	}
	var out []*remote.Unstructured
	for _, name := range files {
		var in io.Reader = a.stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			in = f
		}
		rs, err := manifest.Read(in, name, defs)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}
