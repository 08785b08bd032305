#![no_main]
//! Fuzz target `spark_rolling`: the checks are `graphene_fuzz::checks::spark_rolling` (shared with the stable
//! regression test in crates/graphene-cli/tests/integration/fuzz.rs).

libfuzzer_sys::fuzz_target!(init: graphene_fuzz::init(), |data: &[u8]| {
    graphene_fuzz::checks::spark_rolling(data);
});
