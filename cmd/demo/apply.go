package main

import (
	"io"

	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
)

// dryRun validates the intent file at path and prints what applying it
// would create. It writes no resource anywhere.
func dryRun(w io.Writer, path string) error {
	in, err := intent.Load(path)
	if err != nil {
		return err
	}
	return in.DryRun(w)
}
