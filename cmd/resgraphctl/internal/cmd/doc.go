// Package cmd is resgraphctl's command tree (cobra): one file per command,
// the root command and what they share (app.go: the global flags, the
// connection to the daemon and its clients; errors.go: how errors print).
//
// # Adding a command
//
// A command is one file: a constructor func newX(a *app) *cobra.Command
// that declares its flags, its arguments (rangeArgs, which makes a wrong
// count a usage error), its completion (a.completeTypeAndID and friends,
// for arguments that name types, IDs or controllers) and a RunE that calls
// a method of app doing the work with a.state() (the daemon's resources,
// any type, as remote.Unstructured), a.observer() (explanations, the
// graph, health) and a.resolve/a.kind (type names through the daemon's
// definitions). Its Short, Long and Example say what it does to someone
// who has never read the code. Then add the constructor to the commands
// list in root.go, in the help group it belongs to (GroupID), and a test
// in cmd/resgraphctl's tests that runs the real binary against a real
// daemon. Errors are returned, never printed: Main prints one line for
// each; wrap a wrong command line with usageErr (exit status 2).
//
// # Rules
//
// CT1. Label selectors mean what they say: the comma-separated terms of
// one -l must all hold (one label query); several -l select the union of
// their queries (rule S15). A selector that does not parse is refused
// before the daemon is asked, naming the term (package selector).
//
// CT2. Types are the daemon's: resgraphctl is compiled with no resource
// type; it asks the daemon for its definitions, resolves a name by type or
// alias in any case, reads and writes every type as remote.Unstructured,
// and prints a table with the type's printed columns. An unknown name is
// an error listing the names the daemon knows. types lists the
// definitions in get's output formats (-o table, wide, yaml or json).
//
// CT3. A sensitive type's spec is never printed without --show-sensitive:
// not in a table's columns, not in -o yaml or json, not in a watch, not
// in describe; a placeholder stands in its place, which create and apply
// refuse to write back.
//
// CT4. get -w prints the resources, then every change as it comes, with
// its event. A broken connection is reported and the watch resumes after
// the last change it printed (rule N2: none lost, none repeated); when the
// daemon cannot resume it (it restarted: the bookmark is unknown),
// resgraphctl says so and exits with status 1 — it never re-lists
// silently.
//
// CT5. Errors are one plain line on stderr — a gRPC status's message,
// the daemon that cannot be reached and how to name another (on HOST:PORT
// without TLS flags, when the daemon hung up, that it may want them), a
// controller the daemon does not run with the names of those it runs —
// with exit status 1, or 2 for a wrong command line (a flag, an argument
// count, a selector, an output format), which also prints where the usage
// is. A command over several resources prints one line per failure, then
// their count; over one, its one line alone.
//
// CT6. create and apply write a file whole or not at all, as far as
// checks go: every document of the -f files is read (a document that is
// not a resource, or names a type the daemon does not know, does not stop
// the reading of the others), a document that names the resource of an
// earlier one is refused, and the write of every other is checked by the
// daemon as a dry run (remote.WithDryRun, rule N5: the spec's fields, the
// access rules, a controller's resource, a resource that exists) — and
// when one is refused, nothing is written: each refused document is one
// line naming its file, its place in it (from 1), its resource and why,
// then their count. A daemon that serves no dry run is refused before
// anything is written. Then the documents are written in order; a write
// that fails after its check passed (another writer came in between)
// stops the others, and the error names that document and those not
// written (the written ones were printed). apply creates what does not
// exist, writes the spec, labels and annotations of what differs, and
// leaves alone what is equal already (nothing written).
//
// CT7. delete tears each resource down, waits for its finalizers up to
// --timeout, then destroys it; when the time is up it names the
// finalizers that remain, exits with status 1, and leaves the resource
// tearing down.
//
// CT8. record writes a whole recording or nothing: it asks the daemon's
// flight recorder (rule OB4) for its window now, or for --for from now,
// writes what arrives to a temporary file beside -o and renames it only
// once the whole recording arrived; on any failure no file is left. An -o
// that cannot be written is said first, naming -o, before the daemon is
// asked. A
// missing -o and a --for that is negative or longer than
// recording.MaxRecordFor are usage errors, refused before the daemon is
// asked. It says what the recording holds, and when it starts later than
// asked or saw changes coalesced (the recording says so too).
//
// CT9. replay runs the command the recording names (its daemon's
// simulation test), with the file's absolute path and the flags after --
// (quoted for sh), in --dir, prints that command first on the standard
// error, and exits 1 when the command fails; --print prints it without
// running it. A file that is not a recording, of another format version,
// cut short or with a damaged frame anywhere (recording.CheckFrames: the
// whole file's framing, without the daemon's types) is refused, naming
// the file and what is wrong, before anything is printed or runs; so is a --dir that does not hold the package paths ("./...") of
// the command's go test (it is not the daemon's source tree). It does not
// talk to the daemon.
//
// CT10. plan writes nothing: it sends the -f change to the daemon's
// planner (rule OB5) and prints the plan; an empty file is refused before
// the daemon is asked, a change the daemon refuses is one line with its
// reason, and a plan that would not reach the fixed point exits 1 saying
// why (after the plan, which shows the loop). The change may be what get
// -o yaml or -o json prints (one resource or several), edited: each
// resource is one to set (plan.ParseChange); a document that is neither
// a change nor a resource is refused in one line naming it.
//
// CT14. A spec key that the daemon's Go type of the spec has no field
// for, or that names a field only by a different case, is refused by the
// daemon (codec.Registry.DecodeSpecInput, at the remote write and the
// planner) in create, apply and plan: one line naming the key's path
// (spec.Bogus, spec.Routes[0].Gw) and the type, exit status 1, nothing
// written. resgraphctl cannot check it itself (it has no Go types): the
// daemon's dry run does, so in a file of several documents nothing is
// written either (CT6).
//
// CT11. No command prints a sensitive spec unasked (CT3, for get and
// describe): plan prints "(sensitive)" for its fields' values (the
// daemon's plan of a change read with its registry, rule PL4), record
// writes it into the file only (the codec's bytes, its kind marked
// sensitive, rule RC5) and prints counts; an error never quotes a spec's
// value.
//
// CT12. Every example of the help of a command that reads (get, describe,
// explain, graph, health, types) runs as printed against the demo and
// prints something: no example names a controller, a label or a resource
// the demo does not have.
//
// CT13. explain names a resource as TYPE ID, TYPE/ID, or resource
// NAMESPACE/TYPE/ID: the form of the debug pages (/debug/explain?resource=)
// and of "demo explain", so that a command copied from there asks the same;
// a -n that names another namespace than the one given is a usage error.
package cmd
