#![no_main]
//! Fuzz target `spark_snappy`: the checks are `graphene_fuzz::checks::spark_snappy` (shared with the stable
//! regression test in crates/graphene-cli/tests/integration/fuzz.rs).

libfuzzer_sys::fuzz_target!(init: graphene_fuzz::init(), |data: &[u8]| {
    graphene_fuzz::checks::spark_snappy(data);
});
