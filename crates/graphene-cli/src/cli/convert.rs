//! `graphene convert`

use std::path::PathBuf;

use graphene::formats::{self, native};
use graphene::Result;

use super::args::{DagPickArgs, InputArgs};

#[derive(clap::Args)]
pub struct Args {
    /// DAG file, in any format graphene reads.
    pub dag: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub pick: DagPickArgs,
    /// Write here (atomically) instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<i32> {
    let dag = formats::load_dag(&a.dag, &a.input.load_options_picking(&a.pick))?;
    let mut bytes = serde_json::to_vec_pretty(&native::to_file(&dag)).expect("serializable");
    bytes.push(b'\n');
    graphene::output::write_or_stdout(a.out.as_deref(), &bytes, &[a.dag.as_path()])?;
    Ok(0)
}
