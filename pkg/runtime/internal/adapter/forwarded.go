package adapter

// ForwardPasses says that the Controller's EventCh is called by a
// forwarder that hands the wake-ups on to the code it wraps (destroy.Wrap's
// forwarder, whose own reads and writes make passes of their own, see
// OwnPass): from now on the EventCh calls start no pass, and the function
// returned starts one, called where the wrapped code calls its EventCh.
// The wrapped code's pass is then what it read and wrote from one of its
// EventCh calls to the next, even where the forwarder calls EventCh in
// the middle of it (an event that came while the wrapped code ran).
func (a *Adapter) ForwardPasses() (start func()) {
	a.pass.forwarded.Store(true)
	return a.startPass
}
