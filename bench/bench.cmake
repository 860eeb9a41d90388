# Owned by the benchmarks; see scripts/bench.
