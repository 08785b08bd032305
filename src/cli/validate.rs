//! `graphene validate`

use std::path::PathBuf;

use graphene::formats;
use graphene::validate::validate;
use graphene::Result;

use super::args::{cluster_for, ClusterArgs, InputArgs};

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
    /// Print at most this many violations.
    #[arg(long, default_value_t = 50)]
    pub max_shown: usize,
}

pub fn run(a: Args) -> Result<i32> {
    let dag = formats::load_dag(&a.dag, &a.input.load_options())?;
    let file = formats::schedule_file::load(&a.schedule)?;
    let spec = a.cluster.spec()?;
    let cluster = cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let violations = validate(&dag, &cluster, &file.tasks);
    if violations.is_empty() {
        let makespan = file.tasks.iter().map(|t| t.end).fold(0.0, f64::max);
        outln!(
            "valid: {} tasks of {} on {} machines, makespan {makespan}",
            file.tasks.len(),
            dag.name,
            cluster.len()
        )?;
        return Ok(0);
    }
    eprintln!("{}: {} violation(s) against {}:", a.schedule.display(), violations.len(), a.dag.display());
    for v in violations.iter().take(a.max_shown) {
        eprintln!("  {v}");
    }
    if violations.len() > a.max_shown {
        eprintln!("  ... and {} more", violations.len() - a.max_shown);
    }
    Ok(1)
}
