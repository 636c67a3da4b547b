package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/manifest"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// writeOne writes one resource to st (create's or apply's), saying what
// it did ("created").
type writeOne func(ctx context.Context, st state.State, r *remote.Unstructured) (string, error)

// write is create and apply of the -f files, whole or not at all (rule
// CT6): every document is read; every write is checked by the daemon as
// a dry run (remote.WithDryRun), one by one in the files' order; when a
// document cannot be read, names a resource an earlier one names, or is
// refused by its check, each such document is printed with why and
// nothing is written. Then the documents are written in order, each
// printed as it is; a write that fails after its check passed (another
// writer came first) stops there, and the error says what was and was not
// written.
func (a *app) write(ctx context.Context, files []string, one writeOne) error {
	docs, err := a.readDocs(ctx, files)
	if err != nil {
		return err
	}
	defs, err := a.definitions(ctx)
	if err != nil {
		return err
	}
	refuseDuplicates(docs, defs)
	if err := a.checkDocs(ctx, docs, one); err != nil {
		return err
	}
	refused := 0
	for _, d := range docs {
		if d.Err != nil {
			refused++
			_, _ = fmt.Fprintf(a.stderr, "resgraphctl: %s: %s\n", docName(d, defs), a.message(docError(d.Err)))
		}
	}
	switch {
	case refused == 0:
		return a.writeDocs(ctx, docs, one, defs)
	case len(docs) == 1:
		return errPrinted
	}
	return fmt.Errorf("nothing written: %d of %d documents refused", refused, len(docs))
}

// checkDocs checks the write of every document read with a dry run of
// one, setting the Err of each refused. A daemon that cannot check (it
// serves no dry run) is the error: nothing can be written whole.
func (a *app) checkDocs(ctx context.Context, docs []manifest.Doc, one writeOne) error {
	dry, err := a.dryState()
	if err != nil {
		return err
	}
	for i := range docs {
		if docs[i].Err != nil {
			continue
		}
		rctx, cancel := a.request(ctx)
		_, err := one(rctx, dry, docs[i].R)
		cancel()
		if status.Code(err) == codes.Unimplemented {
			return errorf("the daemon at %s cannot check a file before writing it (it serves no dry run: %s): nothing written",
				a.endpoint, status.Convert(err).Message())
		}
		docs[i].Err = err
	}
	return nil
}

// refuseDuplicates refuses every document that names the resource of an
// earlier one (its second write would conflict with the first).
func refuseDuplicates(docs []manifest.Doc, defs *definition.Registry) {
	first := map[string]int{}
	for i, d := range docs {
		if d.Err != nil {
			continue
		}
		key := resource.PointerString(pointerOf(d.R))
		if j, ok := first[key]; ok {
			docs[i].Err = errorf("names the same resource as %s", docName(docs[j], defs))
			continue
		}
		first[key] = i
	}
}

// writeDocs writes the documents in order, printing each; a write that
// fails stops the others, and the error names the document, what was
// written before it and what was not.
func (a *app) writeDocs(ctx context.Context, docs []manifest.Doc, one writeOne, defs *definition.Registry) error {
	st, err := a.state()
	if err != nil {
		return err
	}
	for i, d := range docs {
		rctx, cancel := a.request(ctx)
		what, err := one(rctx, st, d.R)
		cancel()
		if err != nil {
			var rest []string
			for _, n := range docs[i:] {
				rest = append(rest, docName(n, defs))
			}
			_, _ = fmt.Fprintf(a.stderr, "resgraphctl: %s: %s (its check had passed: another writer changed the daemon's state meanwhile)\n", docName(d, defs), a.message(err))
			return fmt.Errorf("%d of %d documents written (above); not written: %s", i, len(docs), strings.Join(rest, ", "))
		}
		_, _ = fmt.Fprintf(a.stdout, "%s %s\n", named(defOf(d, defs), d.R.Metadata().ID()), what)
	}
	return nil
}

// docName names a document: its file, its place and its resource when it
// was read ("eth.yaml: document 2 (linkspec/eth1)").
func docName(d manifest.Doc, defs *definition.Registry) string {
	s := fmt.Sprintf("%s: document %d", d.File, d.Index)
	if d.R != nil {
		s += " (" + named(defOf(d, defs), d.R.Metadata().ID()) + ")"
	}
	return s
}

// docError is err without the file and document a manifest.Error names
// (docName names them).
func docError(err error) error {
	var me *manifest.Error
	if errors.As(err, &me) {
		return me.Err
	}
	return err
}

func defOf(d manifest.Doc, defs *definition.Registry) definition.Definition {
	def, _ := defs.Get(d.R.Metadata().Type())
	return def
}
