//! `graphene validate`

use std::path::PathBuf;

use graphene::api::validate_file;
use graphene::formats;
use graphene::Result;

use super::args::{cluster_for, spec_for_file, ClusterArgs, DagPickArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG file the schedule is for.
    pub dag: PathBuf,
    /// Schedule file (as build-schedule writes it).
    pub schedule: PathBuf,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pick: DagPickArgs,
    /// Print at most this many violations.
    #[arg(long, default_value_t = 50)]
    pub max_shown: usize,
}

pub fn run(a: Args) -> Result<i32> {
    let dag = formats::load_dag(&a.dag, &a.input.load_options_picking(&a.pick))?;
    let file = formats::schedule_file::load(&a.schedule)?;
    let spec = spec_for_file(&a.cluster, &a.input, &a.dag)?;
    let cluster = cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let violations = match validate_file(&dag, &cluster, &spec.network(), &file) {
        Ok(summary) => {
            outln!("{summary}")?;
            return Ok(0);
        }
        Err(v) => v,
    };
    eprintln!("{}: {} violation(s) against {}:", a.schedule.display(), violations.len(), a.dag.display());
    for v in violations.iter().take(a.max_shown) {
        eprintln!("  {v}");
    }
    if violations.len() > a.max_shown {
        eprintln!("  ... and {} more", violations.len() - a.max_shown);
    }
    Ok(1)
}
