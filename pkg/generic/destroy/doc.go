// Package destroy destroys a controller's own outputs once they are
// tearing down with no finalizers left.
//
// A controller that tears its outputs down (to let the controllers that
// depend on them finish their own teardown first) has to destroy them once
// their finalizers are gone. The Runtime tells it when that happens through
// a destroy-ready input: controller.InputDestroyReady for a Controller,
// controller.InputQMappedDestroyReady for a QController (rule C9), which
// deliver only the controller's own outputs that are tearing down with no
// finalizers. This package declares those inputs ([Input], [QInput]),
// destroys what is ready ([Ready], [IfReady]), and wraps an existing
// controller so that it does all of this without changing its code
// ([Wrap], [WrapQ]).
//
// Only resources owned by the controller are destroyed by these helpers; a
// resource that is running, has finalizers, or belongs to someone else is
// left alone. For the resources of a kind that others tear down and
// nobody destroys, [NewController] is a QController of its own that
// destroys every resource of the kind that is tearing down with no
// finalizers left, acting for its owner, whoever it is ([WithOwners]
// restricts it). A
// finalizer added between the read and the destroy makes the destroy wait
// for the next destroy-ready wake-up.
//
// The rules cited here are stated in docs/generic-controllers.md in the repository.
package destroy
