#![no_main]
//! Fuzz target `dag_tez`: the checks are `graphene_fuzz::checks::dag_tez` (shared with the stable
//! regression test in crates/graphene-cli/tests/integration/fuzz.rs).

libfuzzer_sys::fuzz_target!(init: graphene_fuzz::init(), |data: &[u8]| {
    graphene_fuzz::checks::dag_tez(data);
});
