//! The `graphene` command as a library: the binary and the Python package's
//! `python -m graphene_sched` (through the extension module) run this same entry point.

mod cli;

pub use cli::run_from;

/// Runs the command with the process's arguments; returns the exit status.
pub fn run() -> i32 {
    run_from(std::env::args_os())
}
