//! The fuzz targets' checks on stable: every seed under `fuzz/seeds/<target>/` and every input a
//! fuzzer ever crashed on, kept under `fuzz/regressions/<target>/`, goes through the same check
//! function the cargo-fuzz target runs (`fuzz/src/checks.rs`, included here). The seeds must be
//! accepted by their reader (so the checks past parsing run); a regression input may be accepted
//! or refused, but every property must hold.

use std::path::PathBuf;

use super::fuzz_checks as checks;
use super::util::repo;

type Check = fn(&[u8]) -> bool;

const TARGETS: [(&str, Check); 11] = [
    ("dag_native", checks::dag_native),
    ("dag_task_graph", checks::dag_task_graph),
    ("dag_spark", checks::dag_spark),
    ("dag_wfcommons", checks::dag_wfcommons),
    ("dag_tpch", checks::dag_tpch),
    ("dag_hetero", checks::dag_hetero),
    ("cluster", checks::cluster),
    ("schedule", checks::schedule),
    ("trace_native", checks::trace_native),
    ("trace_alibaba", checks::trace_alibaba),
    ("serve_request", checks::serve_request),
];

fn files(dir: &str, target: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(repo(&format!("fuzz/{dir}/{target}"))) else { return Vec::new() };
    let mut out: Vec<PathBuf> = rd.map(|e| e.expect("readable folder").path()).filter(|p| p.is_file()).collect();
    out.sort();
    out
}

#[test]
fn every_target_has_seeds_that_its_reader_accepts() {
    for (target, check) in TARGETS {
        let seeds = files("seeds", target);
        assert!(!seeds.is_empty(), "fuzz/seeds/{target} is empty");
        for path in seeds {
            let data = std::fs::read(&path).unwrap();
            assert!(check(&data), "{}: the seed is refused by its reader", path.display());
        }
    }
}

#[test]
fn every_kept_fuzz_crash_now_passes_its_checks() {
    let mut n = 0;
    for (target, check) in TARGETS {
        for path in files("regressions", target) {
            let data = std::fs::read(&path).unwrap();
            // A panic here names the file through the test's output.
            eprintln!("replaying {}", path.display());
            check(&data);
            n += 1;
        }
    }
    assert!(n > 0, "no regression inputs found under fuzz/regressions/");
}

#[test]
fn the_regression_folders_are_named_after_targets() {
    let Ok(rd) = std::fs::read_dir(repo("fuzz/regressions")) else { return };
    for e in rd {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name == "README.md" {
            continue;
        }
        assert!(TARGETS.iter().any(|(t, _)| *t == name), "fuzz/regressions/{name} is not a target's name");
    }
}
