package xform

// Switch is an on/off setting with a package default, given by a pair of
// options (WithInputFinalizers / WithoutInputFinalizers in transform and
// qtransform alike). Giving both of the pair contradicts itself: a
// misconfiguration ([Switch.Check]), never a silent "last one wins".
type Switch struct {
	on, set, conflict bool
}

// NewSwitch returns a Switch that is on when def is and no option is given.
func NewSwitch(def bool) Switch { return Switch{on: def} }

// Set records an option: on for the With option, off for the Without one.
func (s *Switch) Set(on bool) {
	if s.set && s.on != on {
		s.conflict = true
	}
	s.on, s.set = on, true
}

// On reports whether the setting is on.
func (s Switch) On() bool { return s.on }

// Check returns the [Invalid] error of a switch given both ways, naming the
// two options, or nil.
func (s Switch) Check(with, without string) error {
	if s.conflict {
		return Invalid("%s and %s contradict each other: give one (or neither, for the default)", with, without)
	}
	return nil
}
