// Package repocheck checks the repository as a whole, as a new
// contributor or a user meets it; it has tests only.
//
// # Modules
//
// How the repository is cut into Go modules; the rules, each with its
// test:
//
//   - M1. go.work lists every module of the repository (every go.mod
//     outside the directories the go tool ignores), so that `go run
//     ./cmd/demo`, gopls and `make test` see them all
//     (TestM1_WorkspaceListsEveryModule). A program that cannot resolve
//     (bench/_cosietcd, which needs a module the proxy does not serve) is
//     no module of the repository: it keeps a go.mod.in that its build
//     copies.
//   - M2. A module that others can import requires another module of this
//     repository only when its non-test packages import it: a requirement
//     only its tests use would leak to its users, whose builds would need a
//     replace directive for a module they never import. Such tests live in
//     a test module of their own (pkg/state/etcd/internal/formatstest is
//     one) (TestM2_NoTestOnlyRequirementOnARepositoryModule).
//   - M3. A user of a module needs a replace directive only for the
//     modules of this repository that it imports (while they are not
//     published): a user module that imports every public package of one
//     module, with replace directives for the repository's modules those
//     packages import and no other, resolves its build
//     (TestM3_AUserNeedsNoReplaceForATestOnlyModule).
//   - M4. The shared side-by-side harness builds its etcd runner with
//     replace directives for the root module, pkg/state/etcd and
//     pkg/resource/codec/protobuf only, so the etcd state's non-test
//     packages import no other module of this repository (package atrest
//     is in the root module for this reason)
//     (TestM4_TheEtcdStateImportsNoModuleTheHarnessDoesNotReplace).
//
// A module's test-only requirements on published modules (testify,
// goleak, chromedp) stay in its go.mod, as in any Go module: a user's
// build resolves them from the module proxy, and module graph pruning
// keeps them out of the user's build list.
//
// # Docs
//
//   - D1. Every name of code that README.md, bench/README.md and
//     docs/*.md quote exists: package-qualified names and their members
//     (state.State, observe.ControllerStatus.Leadership), Type.Member names
//     (Runtime.Relist), options (WithClosedGraph), tests, benchmarks, fuzz
//     targets and examples (a prefix when followed by "*" or "…"), make
//     targets, RESGRAPH_ environment variables, file paths and links —
//     a stale one fails with its file and line, as TestC8's check of the
//     demo's log lines does (TestD1_DocsNameOnlyWhatExists). A name the
//     code had is quoted as "(was `X`)"; a table whose header starts
//     "| Established runtime" names the established runtime's code in its
//     first column, and bench/README.md names it throughout (only its
//     paths, targets, tests and variables are checked).
//
// # Code
//
//   - L1. No function of pkg/'s production code (every module under
//     pkg/) has a body over 60 lines: internal/tools/funclen lists those
//     that do, and the list is empty (TestL1_NoFunctionInPkgIsOver60Lines;
//     TestL1_FunclenListsALongFunction checks that the tool finds one).
//
//   - V1. The doc comments go doc shows of every public package (under
//     pkg/, conformance/ and exporters/; internal packages left out) speak
//     docs/glossary.md's words: "engine" only as the name controller.Engine
//     (and conformance's NewEngine), "step" only for the simulator's: in
//     its package or in a paragraph that names it
//     (TestV1_GoDocSpeaksTheGlossary). "Event" is left to review: the
//     state's watch events are events, a controller's are wake-ups.
//
// # Set-up
//
//   - B1. scripts/setup, which `make test` and `.ci/run` run first, finds
//     every tool the tests need where the tests look for it, and names
//     each one missing with its Debian package and the command that
//     installs it (TestB1_SetupPassesWhenNothingIsMissing,
//     TestB1_SetupNamesWhatIsMissing). As root it installs them.
package repocheck
