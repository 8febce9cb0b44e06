"""Planning: pure functions from Settings + Facts to an ordered tuple of Steps."""
