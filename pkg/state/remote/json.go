package remote

import (
	"encoding/json"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
)

// specJSON renders r's spec as JSON, for tools that print it.
func specJSON(r resource.Resource) (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: rendering the spec as JSON panicked: %v", resource.PointerString(r.Metadata()), p)
		}
	}()
	b, err = json.Marshal(r.Spec())
	if err != nil {
		return nil, fmt.Errorf("%s: rendering the spec as JSON: %w", resource.PointerString(r.Metadata()), err)
	}
	return b, nil
}
