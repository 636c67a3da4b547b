// Package scenario is the demo agent's simulation scenario (package
// runtimetest/sim): what its tests explore, and what replays the agent's
// recordings. Only tests import it.
package scenario
