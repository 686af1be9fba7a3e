//! Variable-order, variable-step BDF on F(t, y, y') = 0 (to be written).
