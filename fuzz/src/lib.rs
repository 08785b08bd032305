//! The fuzz targets' shared code: [`checks`] holds one function per target (also compiled into
//! the stable integration tests, which replay the corpora and regressions through it).

pub mod checks;

/// Input limits for fuzzing: far below the defaults, so that an input asking for ten million
/// tasks is refused quickly (the refusal path is what is fuzzed) instead of spending a second
/// and a GiB building them. The checks assert that every accepted input respects the limits
/// in force, so the limits themselves are under test too.
pub fn init() {
    graphene::limits::set(graphene::limits::Limits {
        tasks: 20_000,
        stages: 20_000,
        edges: 100_000,
        machines: 2_000,
        jobs: 2_000,
        input_bytes: 1 << 20,
    });
}
