//! `graphene lower-bound`

use std::path::PathBuf;

use graphene::formats;
use graphene::lowerbound;
use graphene::Result;

use super::args::{cluster_for, ClusterArgs, DagPickArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG file.
    pub dag: PathBuf,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pick: DagPickArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let dag = formats::load_dag(&a.dag, &a.input.load_options_picking(&a.pick))?;
    let spec = a.cluster.spec()?;
    let cluster = cluster_for(&spec, &dag, a.cluster.cluster.as_deref(), &a.dag)?;
    let lb = lowerbound::compute(&dag, &cluster);
    if a.json {
        let v = graphene::api::lower_bound_json(&dag, &cluster);
        outln!("{}", serde_json::to_string_pretty(&v).expect("serializable"))?;
    } else {
        outln!("{}: {} tasks on {} machines", dag.name, dag.len(), cluster.len())?;
        outln!("critical_path {:.6}", lb.critical_path)?;
        outln!("total_work    {:.6}", lb.total_work)?;
        outln!("stage_aware   {:.6}", lb.stage_aware)?;
        outln!("best          {:.6}", lb.best())?;
    }
    Ok(0)
}
