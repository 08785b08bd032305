//! Criterion benchmarks of the offline constructor on real WfCommons and TPC-H DAGs.
//!
//! `cargo bench -p graphene-bench --bench offline`; the data sets are read from `../shared/data` beside the
//! checkout and skipped (with a note) when absent.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};

use graphene::formats::{self, LoadOptions};
use graphene::model::{ClusterSpec, ResVec};
use graphene::space::Space;
use graphene::{build_schedule, OfflineConfig};

fn data(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping {rel}: not found");
        None
    }
}

fn offline(c: &mut Criterion) {
    let mut group = c.benchmark_group("build_schedule");
    group.sample_size(10);
    let cfg = OfflineConfig::default();
    let spec = ClusterSpec::uniform(50, ClusterSpec::default_capacity());
    for name in [
        "montage-1000-seed42",
        "epigenomics-1000-seed42",
        "blast-1000-seed42",
        "montage-5000-seed42",
        "epigenomics-5000-seed42",
        "blast-5000-seed42",
    ] {
        let Some(path) = data(&format!("wfcommons-generated/{name}.json")) else { continue };
        let dag = formats::load_dag(&path, &LoadOptions::default()).expect("readable DAG");
        let cluster = spec.resolve(&dag.resources).expect("cluster");
        group.bench_function(format!("{name}/50-machines"), |b| b.iter(|| build_schedule(&dag, &cluster, &cfg)));
    }
    if let Some(path) = data("decima-tpch/json/tpch-20g.json") {
        let opts = LoadOptions { query: Some(21), ..LoadOptions::default() };
        let dag = formats::load_dag(&path, &opts).expect("readable DAG");
        let spec = ClusterSpec::uniform(10, ClusterSpec::default_capacity());
        let cluster = spec.resolve(&dag.resources).expect("cluster");
        group.bench_function("tpch-20g-q21/10-machines", |b| b.iter(|| build_schedule(&dag, &cluster, &cfg)));
    }
    group.finish();
}

/// Earliest-fit queries on a machine whose profile already holds `k` tasks.
fn space(c: &mut Criterion) {
    let mut group = c.benchmark_group("space");
    for k in [100usize, 1000, 10000] {
        let cap = ResVec::from_slice(&[16.0, 64.0]);
        let mut s = Space::new(&[cap]);
        // A staircase of overlapping tasks leaves many breakpoints and narrow holes.
        for i in 0..k {
            let d = ResVec::from_slice(&[1.0 + (i % 7) as f64, 4.0]);
            let (m, st) = s.earliest(i as f64 * 0.5, 3.0, &d);
            s.insert(m, st, st + 3.0, &d);
        }
        let probe = ResVec::from_slice(&[8.0, 16.0]);
        group.bench_function(format!("earliest_fit/{k}-tasks"), |b| {
            b.iter(|| s.earliest(std::hint::black_box(k as f64 * 0.25), 5.0, &probe))
        });
    }
    group.finish();
}

criterion_group!(benches, offline, space);
criterion_main!(benches);
