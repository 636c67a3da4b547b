// Package cleanup provides a generic Controller that keeps an input from
// being destroyed while resources that depend on it still exist.
//
// The controller puts a finalizer, named after itself, on every running
// input of type I (in I's default namespace). When an input is tearing
// down, the controller finds its dependents — resources of type D (in D's
// default namespace) selected by a label query built from the input
// ([Settings.DependentsQuery]), or returned by a user lister
// ([Settings.ListDependents]) — and removes its finalizer from the input
// once there are none left. Changes to the inputs and to the dependents
// wake the controller up, so the finalizer goes as soon as the last
// dependent does.
//
// Dependents of several types are one controller's: [WithExtraDependents]
// adds a type D2 selected by its own label query, and the finalizer goes
// once the dependents of every type are gone.
//
// By default the controller only waits for the dependents to go. With
// [WithDependentAction] it tears them down ([ActionTeardown]), or tears them
// down and destroys those without finalizers ([ActionDestroy]), acting for
// each dependent's current owner, whoever it is (a user, this or any other
// controller: no list of extra owners is needed). Acting on dependents requires writing
// them: the controller then declares D as a shared output, so D must be
// written by users (no owner) or by controllers that declare it shared as
// well; the Runtime refuses to register it next to an exclusive owner of D.
//
// A failure for one input (a lister error or panic, a refused write) does
// not stop the others: the input is retried on its own schedule, with the
// Runtime's per-item backoff (runtime.WithQueueBackoff: 100 ms doubling to
// 1 min by default) or the controller's own ([WithRetryPolicy], whose
// MaxAttempts parks an input until it changes), or at once when it
// changes; the failure is logged at WARN with the input's
// pointer and reported as the controller's last error
// (controller.ErrorReporter). Run fails, and the Runtime restarts it with
// backoff, only when listing the inputs (or reading one) fails.
//
// A pass costs what changed (rule G3): woken by changes, it reads (one
// Get each) the inputs the Runtime's change log names, the failing inputs
// and the tearing-down inputs waiting for their dependents (a change of a
// dependent brings each of them back), and lists no input; the first pass
// of a Run, and a pass whose changes the log cannot name (after a re-list
// of a kind or an overflow of the log, under a Runtime that keeps no log),
// lists every input.
//
// A configuration that cannot work is reported by [Controller.Validate]
// (controller.Validator), which the Runtime calls at registration (rule
// G2): RegisterController refuses the controller with an error of the
// invalid class that names the controller and the setting. Refused are: an
// empty Name; an input or dependent type whose definition panics or has an
// empty type or namespace, or whose spec cannot be deep-copied; the same input and dependent type; neither or
// both of DependentsQuery and ListDependents; [WithDependentAction] with
// an unknown action; [WithExtraDependents] with a nil query, an invalid
// type, the input or dependent type or one given twice, or a query on
// another input type. Nil options are skipped.
//
// The rules cited here are stated in docs/generic-controllers.md in the repository.
package cleanup
