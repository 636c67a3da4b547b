// Package xform holds the steps shared by the generic controllers: their
// Run loop, the configuration checks of the transform controllers,
// recovering panics in user functions, running those functions (transform,
// extra output, finalizer removal), checking what mapping functions
// return, the one write sequence of transform and qtransform ([Write]:
// input finalizer, output — recreated when a previous incarnation is
// still tearing down —, extra outputs, finalizer release), and tearing
// outputs down and destroying them. It is
// internal: users depend on the controllers, not on these steps.
package xform
