package resource_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

type credentials struct {
	User, Password string
}

// RedactSpec masks the password (value receiver).
func (c credentials) RedactSpec() any {
	c.Password = "<redacted>"
	return c
}

type token struct{ Value string }

// RedactSpec hides the token (pointer receiver).
func (t *token) RedactSpec() any { return fmt.Sprintf("token(%d chars)", len(t.Value)) }

type broken struct{ Secret string }

func (broken) RedactSpec() any { panic("no") }

// TestPrintableSpec: a spec that redacts itself is printed redacted,
// whether RedactSpec has a value or a pointer receiver and whether the
// spec is a value or a pointer; a panicking RedactSpec prints a
// placeholder, never the spec; other specs print as they are.
func TestPrintableSpec(t *testing.T) {
	creds := credentials{User: "admin", Password: "hunter2"}
	assert.Equal(t, credentials{User: "admin", Password: "<redacted>"}, resource.PrintableSpec(creds))
	assert.Equal(t, credentials{User: "admin", Password: "<redacted>"}, resource.PrintableSpec(&creds))
	assert.Equal(t, "hunter2", creds.Password, "the spec is not changed")
	assert.Equal(t, "token(3 chars)", resource.PrintableSpec(token{Value: "abc"}), "pointer receiver on a value spec")
	assert.Equal(t, "token(3 chars)", resource.PrintableSpec(&token{Value: "abc"}))

	out := resource.PrintableSpec(broken{Secret: "s3cr3t"})
	assert.Contains(t, out, "RedactSpec panicked")
	assert.NotContains(t, out, "s3cr3t")

	assert.Equal(t, 5, resource.PrintableSpec(5))
	assert.Nil(t, resource.PrintableSpec(nil))
	var nilTok *token
	assert.Contains(t, resource.PrintableSpec(nilTok), "panicked", "a nil pointer spec whose RedactSpec panics")

	r := &plain{md: resource.NewMetadata("ns", "T", "id", resource.VersionUndefined), spec: creds}
	s := resource.SpecString(r)
	assert.Contains(t, s, "admin")
	assert.NotContains(t, s, "hunter2")
	assert.Equal(t, "<nil resource>", resource.SpecString(nil))
}
