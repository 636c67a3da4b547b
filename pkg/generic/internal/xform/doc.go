// Package xform holds the per-resource steps shared by the generic
// controllers: recovering panics in user functions, checking what mapping
// functions return, writing an output (recreating it when a previous
// incarnation is still tearing down), and tearing outputs down and
// destroying them. It is internal: users depend on the controllers, not on
// these steps.
package xform
