//! The flags `train-decima` and `train-lachesis` share, flattened into both, and what both do
//! with them: pick the initial weights, write the weights file, name the DAG files, record the
//! held-out scores. Each
//! trainer keeps its own help texts and defaults (its [`Trainer`]), so both commands' `--help`
//! and every command line read as before. The flags come in two groups because each command
//! lists its own flags between them, and the help lists flags in declaration order.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use graphene::learn::file::{Arch, Weights};
use graphene::learn::mix;
use graphene::{Error, Result};

/// What differs between the trainers' shared flags: help texts, defaults and the weights file.
/// Defaults are text, as the help shows them: clap keeps a typed default's text in a static
/// that the instances of a generic struct would share, giving both commands one trainer's.
pub trait Trainer: Send + Sync + 'static {
    /// `--iterations`' help: what one iteration trains on.
    const ITERATIONS_HELP: &'static str;
    /// `--rollouts`' help and default.
    const ROLLOUTS_HELP: &'static str;
    const ROLLOUTS: &'static str;
    /// `--lr` and `--entropy`'s defaults.
    const LR: &'static str;
    const ENTROPY: &'static str;
    /// `--quiet`'s help: what it silences.
    const QUIET_HELP: &'static str;
    /// The weights file's architecture record.
    type Arch: Arch;
}

/// How long and how the policy is trained.
#[derive(clap::Args)]
pub struct Steps<T: Trainer> {
    #[arg(long, help = T::ITERATIONS_HELP, default_value_t = 100)]
    pub iterations: usize,
    #[arg(long, help = T::ROLLOUTS_HELP, default_value = T::ROLLOUTS)]
    pub rollouts: usize,
    /// Adam's step size.
    #[arg(long, default_value = T::LR)]
    pub lr: f64,
    /// Initial entropy weight (decays linearly to 0).
    #[arg(long, default_value = T::ENTROPY)]
    pub entropy: f64,
    #[arg(skip)]
    trainer: PhantomData<T>,
}

impl<T: Trainer> Steps<T> {
    /// Refuses a run of no iterations, and rollouts, learning rate and entropy weight the
    /// library refuses (checked before any file is read).
    pub fn check(&self) -> Result<()> {
        if self.iterations == 0 {
            return Err(Error::Usage("--iterations must be at least 1".into()));
        }
        graphene::learn::reinforce::check_common(self.rollouts, self.lr, self.entropy)
    }
}

/// Where the weights come from and go to.
#[derive(clap::Args)]
pub struct Output<T: Trainer> {
    /// Start from these weights instead of random ones.
    #[arg(long, value_name = "FILE")]
    pub init: Option<PathBuf>,
    /// Weights file to write (atomically).
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,
    #[arg(long, short, help = T::QUIET_HELP)]
    pub quiet: bool,
    /// Leave wall-clock seconds out of the progress lines and the closing summary, so that two
    /// runs with one seed print the same text (the weights file never holds a timing).
    #[arg(long)]
    pub no_timing: bool,
    #[arg(skip)]
    trainer: PhantomData<T>,
}

impl<T: Trainer> Output<T> {
    /// The weights to start from: `--init`'s, or random ones drawn from the run's `seed` (with a
    /// seed no iteration, rollout or held-out input uses).
    pub fn initial(&self, seed: u64) -> Result<Weights<T::Arch>> {
        match &self.init {
            Some(p) => Weights::load(p),
            None => Ok(Weights::init(mix(seed, 1 << 42))),
        }
    }

    /// " in 12.3 s" since `started`, or nothing under `--no-timing`.
    pub fn took(&self, started: std::time::Instant) -> String {
        if self.no_timing {
            String::new()
        } else {
            format!(" in {:.1} s", started.elapsed().as_secs_f64())
        }
    }

    /// Writes `model` to `--out` (atomically), refusing to overwrite any of the `dags` read.
    pub fn write(&self, model: &Weights<T::Arch>, dags: &[PathBuf]) -> Result<()> {
        let inputs: Vec<&Path> = dags.iter().map(|p| p.as_path()).collect();
        graphene::output::write_output(&self.out, model.to_json().as_bytes(), &inputs)
    }
}

/// The DAG files' names (without their folders), as the weights file records them.
pub fn dag_names(dags: &[PathBuf]) -> Vec<String> {
    dags.iter().map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()).collect()
}

/// The held-out scores as the weights file records them, each `{"iteration": i, key: score}`:
/// every scored iteration (the learning curve) and the chosen one.
pub fn scores_json(
    scores: impl IntoIterator<Item = (usize, f64)>,
    chosen: Option<(usize, f64)>,
    key: &str,
) -> (Vec<serde_json::Value>, Option<serde_json::Value>) {
    let one = |(it, score): (usize, f64)| {
        let mut m = serde_json::Map::new();
        m.insert("iteration".into(), it.into());
        m.insert(key.into(), score.into());
        serde_json::Value::Object(m)
    };
    (scores.into_iter().map(one).collect(), chosen.map(one))
}

/// The closing line's account of the weights written: the chosen iteration and its score as
/// `describe` puts it, or the last weights when nothing was scored.
pub fn kept(chosen: Option<(usize, f64)>, describe: impl Fn(f64) -> String) -> String {
    match chosen {
        Some((it, score)) => format!("kept iteration {it} ({})", describe(score)),
        None => "kept the last iteration (nothing scored)".into(),
    }
}
