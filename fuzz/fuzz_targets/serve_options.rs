#![no_main]
//! Fuzz target `serve_options`: the checks are `graphene_fuzz::checks::serve_options` (shared with the stable
//! regression test in crates/graphene-cli/tests/integration/fuzz.rs).

libfuzzer_sys::fuzz_target!(init: graphene_fuzz::init(), |data: &[u8]| {
    graphene_fuzz::checks::serve_options(data);
});
