//! JavaScript bindings (implemented in a following commit).
