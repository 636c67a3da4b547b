package access

import (
	"fmt"
	"strings"
)

// Verb is what an access does to resources. The verbs are those of the
// state contract's operations: reads (get, list, watch) and writes
// (create, update, teardown, destroy).
type Verb uint8

// The verbs. Get reads one resource, List a kind, Watch one resource or a
// kind; Create, Update and Destroy are the writes of those names, and
// Teardown is an update that moves a running resource to the
// tearing-down phase (state.State.Teardown).
const (
	Get Verb = iota + 1
	List
	Watch
	Create
	Update
	Teardown
	Destroy
)

// Verbs lists every verb, reads first.
var Verbs = []Verb{Get, List, Watch, Create, Update, Teardown, Destroy}

var verbNames = [...]string{Get: "get", List: "list", Watch: "watch", Create: "create", Update: "update", Teardown: "teardown", Destroy: "destroy"}

// String returns the verb's name as rule files write it ("get", ...).
func (v Verb) String() string {
	if v >= Get && v <= Destroy {
		return verbNames[v]
	}
	return fmt.Sprintf("verb(%d)", uint8(v))
}

// IsWrite reports whether the verb changes the state.
func (v Verb) IsWrite() bool { return v >= Create && v <= Destroy }

// ParseVerb returns the verb named name (case ignored), or an error
// listing the verbs.
func ParseVerb(name string) (Verb, error) {
	for _, v := range Verbs {
		if strings.EqualFold(name, verbNames[v]) {
			return v, nil
		}
	}
	return 0, fmt.Errorf("unknown verb %q: use %s, or \"*\" for every verb", name, strings.Join(verbNames[1:], ", "))
}

// verbSet is a set of verbs, one bit per verb.
type verbSet uint16

func (s verbSet) has(v Verb) bool { return s&(1<<v) != 0 }

func setOf(verbs []Verb) verbSet {
	var s verbSet
	for _, v := range verbs {
		s |= 1 << v
	}
	return s
}
