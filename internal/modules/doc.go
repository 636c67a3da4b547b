// Package modules checks how the repository is cut into Go modules; it
// has tests only.
//
// The rules, each with its test:
//
//   - M1. go.work lists every module of the repository (every go.mod
//     outside testdata), so that `go run ./cmd/demo`, gopls and `make
//     test` see them all (TestM1_WorkspaceListsEveryModule).
//   - M2. A module that others can import requires another module of this
//     repository only when its non-test packages import it: a requirement
//     only its tests use would leak to its users, whose builds would need a
//     replace directive for a module they never import. Such tests live in
//     a test module of their own (pkg/state/etcd/internal/formatstest is
//     one) (TestM2_NoTestOnlyRequirementOnARepositoryModule).
//   - M3. A user of a module needs a replace directive only for the
//     modules of this repository that it imports (while they are not
//     published): a user module that imports every public package of one
//     module, with replace directives for that module and the root module
//     only, resolves its build (TestM3_AUserNeedsNoReplaceForATestOnlyModule).
//
// A module's test-only requirements on published modules (testify,
// goleak, chromedp) stay in its go.mod, as in any Go module: a user's
// build resolves them from the module proxy, and module graph pruning
// keeps them out of the user's build list.
package modules
