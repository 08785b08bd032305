#![no_main]
//! Fuzz target `spark_lz4`: the checks are `graphene_fuzz::checks::spark_lz4` (shared with the stable
//! regression test in crates/graphene-cli/tests/integration/fuzz.rs).

libfuzzer_sys::fuzz_target!(init: graphene_fuzz::init(), |data: &[u8]| {
    graphene_fuzz::checks::spark_lz4(data);
});
