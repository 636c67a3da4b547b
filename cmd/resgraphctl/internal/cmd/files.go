package cmd

import (
	"context"
	"io"
	"os"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/manifest"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// readFiles reads every resource of the -f files ("-" is the standard
// input), resolving their types with the daemon's definitions; the first
// document that cannot be read is the error.
func (a *app) readFiles(ctx context.Context, files []string) ([]*remote.Unstructured, error) {
	docs, err := a.readDocs(ctx, files)
	if err != nil {
		return nil, err
	}
	return manifest.Resources(docs)
}

// readDocs reads every document of the -f files, in order, each read or
// not (manifest.Doc.Err); the error is a file that cannot be opened or
// holds no document, or -f missing.
func (a *app) readDocs(ctx context.Context, files []string) ([]manifest.Doc, error) {
	if len(files) == 0 {
		return nil, usageErr(errorf("-f is required: the FILE of resources (- for the standard input)"))
	}
	defs, err := a.definitions(ctx)
	if err != nil {
		return nil, err
	}
	var out []manifest.Doc
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
		docs, err := manifest.ReadDocs(in, name, defs)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}
