//! The lab: the lesson's table, swarm sweeps and the benchmark.
