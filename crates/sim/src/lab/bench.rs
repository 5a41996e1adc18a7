//! The benchmark.
