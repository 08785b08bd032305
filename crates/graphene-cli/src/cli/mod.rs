//! Flags, parsed once into validated settings, and the glue from them to library calls.

/// `println!` that reports a closed standard output as an error instead of panicking, so
/// `graphene ... | head` ends quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod args;
mod build;
mod compare;
mod convert;
mod export;
mod export_trace;
mod gen_trace;
mod help_layout;
mod lower_bound;
mod plot;
mod progress;
mod replay;
mod replay_compare;
mod serve;
mod train_args;
mod train_decima;
mod train_lachesis;
mod validate;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "graphene",
    version,
    about = "Packing- and dependency-aware scheduling of DAG jobs (Graphene, OSDI'16)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    limits: args::LimitArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Build an offline schedule and precedence order for one DAG.
    BuildSchedule(build::Args),
    /// Print the lower bounds on the makespan of a DAG on a cluster.
    LowerBound(lower_bound::Args),
    /// Check a schedule independently: every task once, dependencies, capacities.
    Validate(validate::Args),
    /// Run Graphene and the offline baselines on DAGs and tabulate makespans.
    Compare(compare::Args),
    /// Make a workload trace (native CSV) from DAG files: N jobs, seeded arrivals and queues.
    GenTrace(gen_trace::Args),
    /// Replay a workload trace in the cluster simulator under an online scheduler.
    Replay(replay::Args),
    /// Replay one trace under several online schedulers and compare JCTs per job.
    ReplayCompare(replay_compare::Args),
    /// Export a schedule's precedence order for Tez, YARN, SLS or as CSV.
    Export(export::Args),
    /// Write a DAG of any format graphene reads as graphene's native JSON.
    Convert(convert::Args),
    /// Export a whole workload trace for another engine's simulator (YARN SLS), in one order.
    ExportTrace(export_trace::Args),
    /// Serve scheduling, lower bounds and validation over HTTP.
    Serve(serve::Args),
    /// Train the `decima` online policy (REINFORCE on simulated Poisson workloads).
    TrainDecima(train_decima::Args),
    /// Train LACHESIS's task-selection policy (policy gradient on batches on heterogeneous executors).
    TrainLachesis(train_lachesis::Args),
    /// Draw SVG charts: a schedule's Gantt chart, a replay's usage over time, JCT-gap CDFs.
    Plot(plot::Args),
}

/// The arguments of the running command after the program name, as `plot` records them.
static ARGS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The running command's arguments, joined with spaces (without the program name).
pub(crate) fn command_line() -> String {
    ARGS.lock().unwrap_or_else(|e| e.into_inner()).join(" ")
}

/// Runs the command on `args` (the first is the program name, as in `std::env::args_os`).
/// Exit status: 0 success, 1 failure (bad input, invalid schedule), 2 bad flags (from clap).
/// Nothing here exits the process: `--help`, `--version` and bad flags print and return their
/// status too, so a host process (the Python package's `python -m`) can run it.
pub fn run_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    *ARGS.lock().unwrap_or_else(|e| e.into_inner()) =
        args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // Negative numbers are values, not flags: `--seed -1` should be refused by the value's
    // parser ("invalid digit"), not answered with a tip about `--` that does not apply.
    let command = help_layout::apply(Cli::command()).mut_subcommands(|s| s.allow_negative_numbers(true));
    let parsed = command.try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // What `e.exit()` prints (help and version on stdout), without leaving the process.
            let _ = e.print();
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            return e.exit_code();
        }
    };
    let serving = matches!(cli.command, Command::Serve(_));
    if let Err(e) = cli.limits.install(serving) {
        eprintln!("error: {e}");
        return 1;
    }
    if !serving {
        graphene::formats::set_note_printer(Some(|note| eprintln!("{note}")));
    }
    let result = match cli.command {
        Command::BuildSchedule(a) => build::run(a),
        Command::LowerBound(a) => lower_bound::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Compare(a) => compare::run(a),
        Command::GenTrace(a) => gen_trace::run(a),
        Command::Replay(a) => replay::run(a),
        Command::ReplayCompare(a) => replay_compare::run(a),
        Command::Export(a) => export::run(a),
        Command::Convert(a) => convert::run(a),
        Command::ExportTrace(a) => export_trace::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Plot(a) => plot::run(a),
        Command::TrainDecima(a) => train_decima::run(a),
        Command::TrainLachesis(a) => train_lachesis::run(a),
    };
    match result {
        Ok(code) => code,
        Err(graphene::Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
