//! Benchmarks of the graphene library: `cargo bench -p graphene-bench --bench offline` (criterion
//! timings of the offline constructor) and `cargo bench -p graphene-bench --bench hetero -- ...`
//! (LACHESIS's batch experiment and the HEFT speed figure). The library is empty; the
//! benchmarks are in `benches/`.
