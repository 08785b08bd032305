//! How `-h` and `--help` lay out each command's flags: under headings (input, cluster, scheduler,
//! knobs, output, limits...), the common flags first, and `-h` limited to the flags most runs set
//! (the rest stay in `--help`).
//!
//! One table for every command, applied to the clap command after derive builds it, so that a
//! flag shared by several commands (`--machines`, `--seed`, the limits) sits under the same
//! heading everywhere, and the argument structs stay about parsing. A flag the table does not
//! place is a test failure (`every_flag_has_a_heading`), so a new flag cannot land unsorted.

use clap::Command;

/// Headings in the order they are shown, each with its flags (by long name) in display order.
const HEADINGS: &[(&str, &[&str])] = &[
    (
        "Input",
        &[
            "format",
            "trace-format",
            "dags",
            "trace-dags",
            "dag",
            "dag-format",
            "from-history",
            "query",
            "job",
            "executors",
            "demands",
            "pick",
            "min-stages",
            "spread-queues",
        ],
    ),
    (
        "Workload",
        &["jobs", "arrival", "load", "style", "sizes", "duration-scale", "min-duration", "jobs-min", "jobs-max", "ccr"],
    ),
    ("Cluster", &["cluster", "machines", "capacity", "no-overbook", "speeds", "speed-seed", "bandwidth"]),
    ("Scheduler", &["scheduler", "schedulers", "baseline", "queues", "seed", "decima-model"]),
    (
        "Simulation",
        &[
            "heartbeat",
            "periodic-heartbeats",
            "container-overhead",
            "sticky",
            "waves",
            "moving-delay",
            "misestimate",
            "misestimate-what",
            "time-limit",
        ],
    ),
    (
        "Offline search (graphene)",
        &[
            "threads",
            "improve",
            "improve-seed",
            "exact",
            "exact-nodes",
            "grid-step",
            "max-trouble",
            "no-cuts",
            "placement",
            "pairing",
            "compact",
            "search-work",
            "recurse",
        ],
    ),
    (
        "Online scheduler knobs",
        &[
            "kappa",
            "eta",
            "rp",
            "overbook-limit",
            "fairness",
            "charge",
            "online-rules",
            "srpt-term",
            "graphene-rm",
            "tetris-kappa",
            "tetris-overbook-limit",
            "tetris-srpt-scale",
            "cs-accounting",
            "cs-user-limit-factor",
            "cs-am",
            "cs-assignments-per-heartbeat",
            "cs-reservations",
            "cs-tez-order",
        ],
    ),
    (
        "Training",
        &[
            "iterations",
            "rollouts",
            "lr",
            "entropy",
            "init",
            "features",
            "freed",
            "decision",
            "episode-start",
            "episode-growth",
            "episode-max",
            "eval-traces",
            "eval-jobs",
            "eval-batches",
            "eval-every",
        ],
    ),
    (
        "Service",
        &["addr", "workers", "timeout", "max-body", "max-pending", "max-connections", "header-timeout", "body-timeout"],
    ),
    (
        "Output",
        &[
            "out",
            "out-dir",
            "waves-out",
            "trace-out",
            "json",
            "csv",
            "order",
            "levels",
            "queue",
            "allocation-request-id",
            "cpu-resource",
            "mem-resource",
            "mem-mb",
            "time-ms",
            "by",
            "max-lanes",
            "max-shown",
            "metric",
            "labels",
            "title",
            "note",
            "no-timing",
            "quiet",
        ],
    ),
    ("Limits", &["limit-tasks", "limit-machines", "limit-jobs", "limit-input"]),
];

/// Flags whose heading depends on the command: `--format` is what a DAG command reads but what
/// `replay` and `export` write; `--queues` is a count in `gen-trace` and shares in `replay`.
const PER_COMMAND: &[(&str, &str, &str)] = &[
    ("replay", "format", "Output"),
    ("export", "format", "Output"),
    ("export-trace", "format", "Output"),
    ("gen-trace", "queues", "Workload"),
    ("gen-trace", "seed", "Workload"),
    ("gen-trace", "machines", "Workload"),
    ("train-decima", "jobs", "Training"),
    ("train-decima", "heartbeat", "Simulation"),
    ("train-lachesis", "jobs-min", "Training"),
    ("train-lachesis", "jobs-max", "Training"),
];

/// Flags shown by `-h`: the ones most runs set. Everything else is in `--help`.
const SHORT: &[&str] = &[
    "format",
    "trace-format",
    "dags",
    "trace-dags",
    "dag",
    "query",
    "job",
    "jobs",
    "arrival",
    "load",
    "cluster",
    "machines",
    "capacity",
    "scheduler",
    "schedulers",
    "baseline",
    "queues",
    "seed",
    "waves",
    "time-limit",
    "threads",
    "exact",
    "iterations",
    "init",
    "addr",
    "workers",
    "timeout",
    "out",
    "waves-out",
    "json",
    "csv",
    "order",
    "by",
    "metric",
    "no-timing",
    "quiet",
];

fn heading_of(command: &str, flag: &str) -> Option<(usize, usize, &'static str)> {
    let name = PER_COMMAND.iter().find(|(c, f, _)| *c == command && *f == flag).map(|(_, _, h)| *h);
    HEADINGS.iter().enumerate().find_map(|(i, (h, flags))| {
        let j = flags.iter().position(|f| *f == flag);
        match name {
            Some(n) if n == *h => Some((i, j.unwrap_or(flags.len()), *h)),
            Some(_) => None,
            None => j.map(|j| (i, j, *h)),
        }
    })
}

/// Lays out one command's flags and, recursively, its subcommands'.
pub fn apply(cmd: Command) -> Command {
    let name = cmd.get_name().to_string();
    let flags: Vec<String> = cmd.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
    let mut cmd = cmd;
    for flag in flags {
        let Some((i, j, heading)) = heading_of(&name, &flag) else { continue };
        let short = SHORT.contains(&flag.as_str());
        let id = cmd.get_arguments().find(|a| a.get_long() == Some(flag.as_str())).map(|a| a.get_id().clone());
        if let Some(id) = id {
            cmd = cmd.mut_arg(id, |a| a.help_heading(heading).display_order(i * 100 + j).hide_short_help(!short));
        }
    }
    cmd.mut_subcommands(apply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn commands(cmd: &Command) -> Vec<Command> {
        let mut out = vec![cmd.clone()];
        for s in cmd.get_subcommands() {
            out.extend(commands(s));
        }
        out
    }

    /// Every flag of every command sits under a heading of the table (a new flag must be placed).
    #[test]
    fn every_flag_has_a_heading() {
        let mut root = apply(crate::cli::Cli::command());
        root.build();
        for c in commands(&root) {
            for a in c.get_arguments() {
                let Some(long) = a.get_long() else { continue };
                if ["help", "version"].contains(&long) {
                    continue;
                }
                assert!(heading_of(c.get_name(), long).is_some(), "{} --{long} has no heading", c.get_name());
            }
        }
    }

    /// No flag is listed twice in the table: its place would depend on the order of lookups.
    #[test]
    fn each_flag_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for (_, flags) in HEADINGS {
            for f in *flags {
                assert!(seen.insert(*f), "--{f} is under two headings");
            }
        }
    }
}
