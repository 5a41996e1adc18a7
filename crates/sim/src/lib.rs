//! idem-sim: the deterministic simulator (work in progress).
