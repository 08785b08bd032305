//! The fuzz targets' checks on stable: every input under `fuzz/` goes through the same check
//! function the cargo-fuzz target runs (`fuzz/src/checks.rs`, included here), per folder:
//!
//! * `fuzz/seeds/<target>/`: must be accepted by the reader (so the checks past parsing run);
//! * `fuzz/regressions/<target>/`: inputs a fuzzer once failed on; accepted or refused, every
//!   property must hold;
//! * `fuzz/refused/<target>/`: hostile inputs that must be refused (a 4xx in the service), with
//!   the message holding every line of `<file>.expect` when there is one;
//! * `fuzz/pending/{refused,regressions}/<target>/`: the same two kinds for inputs the readers do
//!   not handle yet; replayed only by the ignored test `pending_hostile_inputs`, and moved to
//!   `fuzz/refused/` or `fuzz/regressions/` once it passes.
//!
//! A file ending in `.gen` is a recipe for a large input rather than the input itself (kept
//! small in the repository): a JSON object `{"parts": [...]}` whose parts are strings, copied,
//! and `{"repeat": TEMPLATE, "from": A, "to": B}`, TEMPLATE once for each i in A..B with `{i}`
//! and `{i-1}` replaced by i and i - 1.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use super::fuzz_checks::{self as checks, writers, Outcome};
use super::util::repo;

type Check = fn(&[u8]) -> Outcome;

const TARGETS: [(&str, Check); 21] = [
    ("dag_native", checks::dag_native),
    ("dag_task_graph", checks::dag_task_graph),
    ("dag_dax", checks::dag_dax),
    ("dag_dot", checks::dag_dot),
    ("dag_stg", checks::dag_stg),
    ("dag_spark", checks::dag_spark),
    ("dag_tez", checks::dag_tez),
    ("spark_lz4", checks::spark_lz4),
    ("spark_snappy", checks::spark_snappy),
    ("spark_zstd", checks::spark_zstd),
    ("spark_rolling", checks::spark_rolling),
    ("dag_wfcommons", checks::dag_wfcommons),
    ("dag_tpch", checks::dag_tpch),
    ("dag_hetero", checks::dag_hetero),
    ("cluster", checks::cluster),
    ("schedule", checks::schedule),
    ("trace_native", checks::trace_native),
    ("trace_alibaba", checks::trace_alibaba),
    ("serve_request", checks::serve_request),
    ("serve_options", checks::serve_options),
    ("waves", checks::waves),
];

/// The inputs of `fuzz/<dir>/<target>/`, sorted (`.expect` files are not inputs).
fn files(dir: &str, target: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(repo(&format!("fuzz/{dir}/{target}"))) else { return Vec::new() };
    let mut out: Vec<PathBuf> = rd
        .map(|e| e.expect("readable folder").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "expect"))
        .collect();
    out.sort();
    out
}

/// Expands a `.gen` recipe (module doc).
fn expand(recipe: &str) -> Vec<u8> {
    let v: serde_json::Value = serde_json::from_str(recipe).expect("a recipe is JSON");
    let mut out = String::new();
    for part in v["parts"].as_array().expect("a recipe has parts") {
        if let Some(s) = part.as_str() {
            out += s;
            continue;
        }
        let template = part["repeat"].as_str().expect("a repeated part has a template");
        let (from, to) = (part["from"].as_i64().unwrap_or(0), part["to"].as_i64().expect("a repeated part's end"));
        for i in from..to {
            if template.contains("{i") {
                out += &template.replace("{i-1}", &(i - 1).to_string()).replace("{i}", &i.to_string());
            } else {
                out += template;
            }
        }
    }
    out.into_bytes()
}

/// An input's bytes: the file, or what its recipe makes.
fn input(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gen") {
        expand(std::str::from_utf8(&bytes).expect("a recipe is text"))
    } else {
        bytes
    }
}

fn check_of(target: &str) -> Check {
    TARGETS.iter().find(|(t, _)| *t == target).map(|(_, c)| *c).expect("a target")
}

#[test]
fn every_target_has_seeds_that_its_reader_accepts() {
    for (target, check) in TARGETS {
        let seeds = files("seeds", target);
        assert!(!seeds.is_empty(), "fuzz/seeds/{target} is empty");
        for path in seeds {
            let outcome = check(&input(&path));
            assert!(outcome.accepted(), "{}: the seed is not accepted by its reader: {outcome:?}", path.display());
        }
    }
}

#[test]
fn every_kept_fuzz_crash_now_passes_its_checks() {
    let mut n = 0;
    for (target, check) in TARGETS {
        for path in files("regressions", target) {
            // A panic here names the file through the test's output.
            eprintln!("replaying {}", path.display());
            check(&input(&path));
            n += 1;
        }
    }
    assert!(n > 0, "no regression inputs found under fuzz/regressions/");
}

/// `Ok` when `path` is refused as `fuzz/refused/` requires (with its `.expect` lines).
fn refused_as_expected(check: Check, path: &Path) -> Result<(), String> {
    match check(&input(path)) {
        Outcome::Refused(message) => {
            let expect = PathBuf::from(format!("{}.expect", path.display()));
            let want = std::fs::read_to_string(&expect).unwrap_or_default();
            match want.lines().map(str::trim).filter(|l| !l.is_empty()).find(|l| !message.contains(l)) {
                Some(missing) => Err(format!("refused without '{missing}': {message}")),
                None => Ok(()),
            }
        }
        other => Err(format!("not refused: {other:?}")),
    }
}

#[test]
fn every_hostile_input_is_refused() {
    let mut n = 0;
    for (target, check) in TARGETS {
        for path in files("refused", target) {
            eprintln!("replaying {}", path.display());
            if let Err(e) = refused_as_expected(check, &path) {
                panic!("{}: {e}", path.display());
            }
            n += 1;
        }
    }
    assert!(n > 0, "no inputs found under fuzz/refused/");
}

/// The inputs under `fuzz/pending/`, each in turn, reported one line each; fails if any does
/// not pass yet. `FUZZ_PENDING=<text>` replays only the files whose path holds the text.
/// `cargo test --release -p graphene-cli --test integration pending_hostile -- --ignored --nocapture`
#[test]
#[ignore = "inputs the readers do not handle yet (fuzz/pending/); run with --ignored"]
fn pending_hostile_inputs() {
    let only = std::env::var("FUZZ_PENDING").unwrap_or_default();
    let mut failed = Vec::new();
    let mut n = 0;
    for kind in ["refused", "regressions"] {
        for (target, check) in TARGETS {
            for path in files(&format!("pending/{kind}"), target) {
                if !path.display().to_string().contains(&only) {
                    continue;
                }
                n += 1;
                eprintln!("replaying {} ...", path.display());
                let result = catch_unwind(AssertUnwindSafe(|| match kind {
                    "refused" => refused_as_expected(check, &path),
                    _ => {
                        check(&input(&path));
                        Ok(())
                    }
                }));
                let verdict = match result {
                    Ok(Ok(())) => "passes".to_string(),
                    Ok(Err(e)) => e,
                    Err(p) => format!(
                        "panicked: {}",
                        p.downcast_ref::<String>()
                            .map(String::as_str)
                            .or(p.downcast_ref::<&str>().copied())
                            .unwrap_or("?")
                    ),
                };
                eprintln!("  {verdict}");
                if verdict != "passes" {
                    failed.push(format!("{}: {verdict}", path.display()));
                }
            }
        }
    }
    assert!(failed.is_empty(), "{} of {n} pending inputs do not pass yet:\n{}", failed.len(), failed.join("\n"));
}

#[test]
fn the_input_folders_are_named_after_targets() {
    for dir in ["seeds", "regressions", "refused", "pending/refused", "pending/regressions"] {
        let Ok(rd) = std::fs::read_dir(repo(&format!("fuzz/{dir}"))) else { continue };
        for e in rd {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name == "README.md" {
                continue;
            }
            assert!(TARGETS.iter().any(|(t, _)| *t == name), "fuzz/{dir}/{name} is not a target's name");
        }
    }
}

/// Committed inputs stay small (larger ones are `.gen` recipes).
#[test]
fn committed_fuzz_inputs_are_small() {
    for dir in ["seeds", "regressions", "refused", "pending/refused", "pending/regressions"] {
        for (target, _) in TARGETS {
            for path in files(dir, target) {
                let len = std::fs::metadata(&path).unwrap().len();
                assert!(len < 100_000, "{} is {len} bytes; make it a .gen recipe", path.display());
            }
        }
    }
}

/// The `.gen` recipes make what they say: a chain and a doubled count, spot-checked.
#[test]
fn recipes_expand_templates_with_their_index() {
    let r = r#"{"parts": ["[", {"repeat": "{i}<-{i-1} ", "from": 1, "to": 4}, {"repeat": "x", "to": 3}, "]"]}"#;
    assert_eq!(String::from_utf8(expand(r)).unwrap(), "[1<-0 2<-1 3<-2 xxx]");
}

/// The lz4 framing the Spark codec targets write is the one Spark wrote in the committed log:
/// every block's header (token 0x25 for 32 KiB blocks: method lz4, level 5) and checksum as
/// `writers` computes them from the block's decompressed bytes, and an empty end block.
#[test]
fn the_lz4_framing_written_is_the_one_spark_writes() {
    let raw = std::fs::read(repo("tests/data/spark/tpch-q3.lz4")).unwrap();
    let plain = std::fs::read(repo("tests/data/spark/tpch-q3")).unwrap();
    let le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let (mut at, mut out, mut blocks) = (0, Vec::new(), 0);
    loop {
        let head = &raw[at..at + 21];
        assert_eq!(&head[..8], writers::LZ4_MAGIC);
        let (compressed, original, check) = (le(&head[9..]), le(&head[13..]), le(&head[17..]) as u32);
        at += 21;
        if original == 0 {
            assert_eq!((compressed, check), (0, 0));
            break;
        }
        let block = match head[8] & 0xf0 {
            0x10 => raw[at..at + compressed].to_vec(),
            _ => lz4_flex::block::decompress(&raw[at..at + compressed], original).unwrap(),
        };
        assert_eq!(check, writers::lz4_checksum(&block), "block {blocks}");
        if original == 32768 {
            assert_eq!(head[8], 0x25);
        }
        out.extend_from_slice(&block);
        at += compressed;
        blocks += 1;
    }
    assert_eq!(at, raw.len());
    assert!(blocks > 5, "{blocks}");
    assert_eq!(out, plain);
    // The writer's framing of the same text: the same level for the same block size.
    let mine = writers::lz4_java(&plain, 32768);
    assert_eq!(mine[8], 0x25);
    assert_eq!(le(&mine[17..]) as u32, writers::lz4_checksum(&plain[..32768]));
    let snappy = std::fs::read(repo("tests/data/spark/tpch-q3.snappy")).unwrap();
    assert_eq!(writers::snappy_java(b"", 1), snappy[..16], "snappy-java's stream header");
}

/// The framed forms of the committed Spark log read as the plain log does, through the checks
/// (each codec, two block sizes; split in four rolling parts).
#[test]
fn the_committed_spark_log_reads_the_same_in_every_framing() {
    let plain = std::fs::read(repo("tests/data/spark/tpch-q3")).unwrap();
    for target in ["spark_lz4", "spark_snappy", "spark_zstd"] {
        for p in [0x02u8, 0x09] {
            let mut data = vec![p];
            data.extend_from_slice(&plain);
            assert!(check_of(target)(&data).accepted(), "{target} 0x{p:02x}");
        }
    }
    let mut data = vec![0x4f];
    data.extend_from_slice(&plain);
    assert!(checks::spark_rolling(&data).accepted());
}

/// Writes the Spark codec targets' committed inputs from `fuzz/seeds/dag_spark/two-jobs`: the
/// seeds (files in each codec's framing, and parameter bytes before the plain log), and the
/// inputs with one byte of a checksummed stream changed (the Spark version's "3" made a "4",
/// which still reads as a log). Run it after changing that log or the writers:
/// `cargo test --release -p graphene-cli --test integration write_the_spark_codec_inputs -- --ignored`
#[test]
#[ignore = "writes files under fuzz/; run by hand to regenerate them"]
fn write_the_spark_codec_inputs() {
    let text = std::fs::read(repo("fuzz/seeds/dag_spark/two-jobs")).unwrap();
    let put = |rel: &str, bytes: &[u8]| {
        let path = repo(&format!("fuzz/{rel}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    let framed = |p: &[u8]| [p, &text[..]].concat();
    // The changed byte: the "3" of "Spark Version":"3.5.1", which every framing keeps verbatim
    // here (it is in the first literals, or a stored block).
    let digit = |bytes: &[u8]| {
        let needle = b"\"3.5.1\"";
        bytes.windows(needle.len()).position(|w| w == needle).expect("the version is stored verbatim") + 1
    };
    let changed = |mut bytes: Vec<u8>| {
        let at = digit(&bytes);
        bytes[at] ^= b'3' ^ b'4';
        bytes
    };
    let flip = |p: u8, bytes: &[u8]| {
        let at = digit(bytes) as u16;
        let mut head = vec![p | 0x80];
        head.extend_from_slice(&at.to_le_bytes());
        head.push(b'3' ^ b'4');
        framed(&head)
    };
    put("seeds/spark_lz4/two-jobs.lz4", &writers::lz4_java(&text, 1024));
    put("seeds/spark_lz4/two-jobs-framed-128", &framed(&[0x01]));
    put("seeds/spark_snappy/two-jobs.snappy", &writers::snappy_java(&text, 1024));
    put("seeds/spark_snappy/two-jobs-framed-512", &framed(&[0x03]));
    put("seeds/spark_zstd/two-jobs.zstd", &writers::zstd_frames(&text, 1024, false, false));
    put("seeds/spark_zstd/two-jobs-stored-frames.zstd", &writers::zstd_frames(&text, 1024, true, true));
    put("seeds/spark_zstd/two-jobs-framed-frames-256", &framed(&[0x0a]));
    put("seeds/spark_rolling/two-jobs-3-lz4-parts", &framed(&[0x46]));
    put("seeds/spark_rolling/two-jobs-2-zstd-parts-numbered-by-10", &framed(&[0x1d]));
    put("seeds/spark_rolling/two-jobs-4-plain-parts", &framed(&[0x03]));
    put("refused/spark_lz4/version-digit-changed.lz4", &changed(writers::lz4_java(&text, 1024)));
    put("refused/spark_zstd/version-digit-changed.zstd", &changed(writers::zstd_frames(&text, 1024, true, true)));
    put("regressions/spark_lz4/two-jobs-version-digit-changed", &flip(0x04, &writers::lz4_java(&text, 1024)));
    let zstd = writers::zstd_frames(&text, 256, true, true);
    put("regressions/spark_zstd/two-jobs-version-digit-changed", &flip(0x1a, &zstd));
}
