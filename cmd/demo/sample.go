package main

import (
	_ "embed"

	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
)

// sampleIntent is testdata/intent.json, built in so that the demo runs from
// any directory.
//
//go:embed testdata/intent.json
var sampleIntent []byte

// sampleName is how the built-in sample is named in messages.
const sampleName = "built-in sample (cmd/demo/testdata/intent.json)"

// loadIntent reads the intent file at path, or the built-in sample when
// path is empty.
func loadIntent(path string) (*intent.Intent, error) {
	if path == "" {
		return intent.Parse(sampleName, sampleIntent)
	}
	return intent.Load(path)
}
