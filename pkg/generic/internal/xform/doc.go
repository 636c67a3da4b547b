// Package xform holds the steps shared by the generic controllers: their
// Run loop, the configuration checks of the transform controllers,
// recovering panics in user functions, running those functions (transform,
// extra output, finalizer removal), checking what mapping functions
// return, writing an output (recreating it when a previous incarnation is
// still tearing down), and tearing outputs down and destroying them. It is
// internal: users depend on the controllers, not on these steps.
package xform
