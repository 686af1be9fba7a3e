//! Radau IIA (order 5) on F(t, y, y') = 0 (to be written).
