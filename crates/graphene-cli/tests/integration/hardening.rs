//! Hostile input and hostile output paths: nothing crashes, hangs, loses data or
//! replaces what it must not; every refusal names the field and, for sizes, the limit.

use crate::util::{example, p, refused, repo, run, tempdir, write, Run};

#[cfg(unix)]
#[test]
fn out_onto_a_fifo_writes_through_it_and_leaves_the_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempdir();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).expect("read the fifo"))
    };
    let r = run(&["build-schedule", &example(), "--no-timing", "-q", "--out", &p(&fifo)]).ok();
    let got = reader.join().unwrap();
    let direct = run(&["build-schedule", &example(), "--no-timing", "-q"]).ok();
    assert_eq!(got, direct.stdout, "the reader got the schedule: {}", r.stderr);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
}

#[cfg(unix)]
#[test]
fn out_onto_a_symlink_writes_its_target_and_keeps_the_link() {
    let dir = tempdir();
    let real = write(dir.path(), "real.json", "old");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    run(&["build-schedule", &example(), "--no-timing", "-q", "--out", &p(&link)]).ok();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with('{') && text.contains("\"makespan\""), "the target holds the schedule: {text}");
    // A dangling link: the file is created where it points.
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink("made.json", &dangling).unwrap();
    run(&["build-schedule", &example(), "--no-timing", "-q", "--out", &p(&dangling)]).ok();
    assert!(dir.path().join("made.json").is_file());
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
}

#[test]
fn out_equal_to_an_input_is_refused_and_the_input_kept() {
    let dir = tempdir();
    let dag = write(dir.path(), "dag.json", &std::fs::read_to_string(repo("traces/example.json")).unwrap());
    let before = std::fs::read(&dag).unwrap();
    let spellings = [p(&dag), format!("{}/./dag.json", dir.path().display())];
    for out in &spellings {
        let r = run(&["build-schedule", &p(&dag), "--out", out]);
        refused(&r, "is the input");
    }
    #[cfg(unix)]
    {
        let hard = dir.path().join("hard.json");
        std::fs::hard_link(&dag, &hard).unwrap();
        refused(&run(&["build-schedule", &p(&dag), "--out", &p(&hard)]), "is the input");
    }
    assert_eq!(std::fs::read(&dag).unwrap(), before, "the input is untouched");
    // The same for the other commands that take --out.
    let sched = dir.path().join("s.json");
    run(&["build-schedule", &p(&dag), "-q", "--out", &p(&sched)]).ok();
    refused(&run(&["export", &p(&sched), "--format", "csv", "--out", &p(&sched)]), "is the input");
    refused(
        &run(&["gen-trace", "--dags", &p(&dag), "--jobs", "3", "--arrival", "poisson:5", "--out", &p(&dag)]),
        "is the input",
    );
    assert_eq!(std::fs::read(&dag).unwrap(), before);
}

#[test]
fn out_onto_a_directory_is_refused() {
    let dir = tempdir();
    refused(&run(&["build-schedule", &example(), "--out", &p(dir.path())]), "is a directory");
}

/// A replay folder is written as a whole: a failed replay leaves the previous outputs alone
/// and no staging folder behind; a job name with a comma is quoted and reads back in `plot cdf`.
#[test]
fn replay_outputs_are_quoted_and_committed_together() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n\
         \"a,b\",0,q0,s,2,3,1,1,0,0,\n\
         \"say \"\"hi\"\"\",1,q0,s,1,2,1,1,0,0,\n",
    );
    let out = dir.path().join("out");
    run(&["replay", &p(&trace), "--scheduler", "fifo", "--no-timing", "-q", "--out", &p(&out)]).ok();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert!(jobs.contains("\"a,b\",q0,0,") && jobs.contains("\"say \"\"hi\"\"\",q0,1,"), "{jobs}");
    let mut rdr = csv::Reader::from_path(out.join("schedule.csv")).unwrap();
    let names: Vec<String> = rdr.records().map(|r| r.unwrap()[0].to_string()).collect();
    assert_eq!(names.iter().filter(|n| *n == "a,b").count(), 2, "{names:?}");
    // plot cdf reads both the quoted names back (the run against itself: every gap is 0).
    let svg = dir.path().join("cdf.svg");
    run(&["plot", "cdf", &p(&out), "--baseline", &p(&out), "--out", &p(&svg), "-q"]).ok();
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));

    // A failing replay (a scheduler that does not exist is found before; a trace that breaks
    // after the folder is prepared is the case that matters): the old files stay as they were.
    let before = std::fs::read(out.join("jobs.csv")).unwrap();
    let bad = write(
        dir.path(),
        "bad.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\nj,0,q0,s,1,1,999,1,0,0,\n",
    );
    let r = run(&["replay", &p(&bad), "--scheduler", "fifo", "-q", "--out", &p(&out)]);
    refused(&r, "no machine has that much capacity");
    assert_eq!(std::fs::read(out.join("jobs.csv")).unwrap(), before);
    let left: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let mut sorted = left.clone();
    sorted.sort();
    assert_eq!(sorted, ["jobs.csv", "schedule.csv", "summary.json"], "no staging folder left: {left:?}");
    // --out onto a file, or onto the trace itself, is refused before anything runs.
    refused(&run(&["replay", &p(&trace), "--scheduler", "fifo", "--out", &p(&trace)]), "not a directory");
}

#[test]
fn huge_counts_are_refused_before_allocation() {
    let dir = tempdir();
    for tasks in ["1000000000", "18446744073709551615"] {
        let dag = write(
            dir.path(),
            "big.json",
            &format!(
                r#"{{"name":"x","resources":["cpu"],"stages":[{{"id":"a","tasks":{tasks},"duration":1,"demands":{{"cpu":1}}}}]}}"#
            ),
        );
        refused(&run(&["build-schedule", &p(&dag)]), "exceeds the limit of 10000000 (raise it with --limit-tasks)");
    }
    // Several stages whose sum crosses the limit (each alone is under it).
    let dag = write(
        dir.path(),
        "sum.json",
        r#"{"resources":["cpu"],"stages":[{"id":"a","tasks":6000000,"duration":1},{"id":"b","tasks":6000000,"duration":1}]}"#,
    );
    refused(&run(&["lower-bound", &p(&dag)]), "stages[1] ('b').tasks (tasks so far): 12000000 exceeds");
    // The limit can be raised or lowered.
    refused(
        &run(&["lower-bound", &example(), "--limit-tasks", "10"]),
        "stages[0] ('scan').tasks (tasks so far): 40 exceeds the limit of 10",
    );
    refused(&run(&["build-schedule", &example(), "--machines", "1000000000"]), "--machines: 1000000000 exceeds");
    let cluster =
        write(dir.path(), "c.json", r#"{"machines": [{"count": 18446744073709551615, "capacity": {"cpu": 1}}]}"#);
    refused(&run(&["build-schedule", &example(), "--cluster", &p(&cluster)]), "machines[0].count");
    let two = write(
        dir.path(),
        "c2.json",
        r#"{"machines": [{"count": 600000, "capacity": {"cpu": 1}}, {"count": 600000, "capacity": {"cpu": 1}}]}"#,
    );
    refused(&run(&["build-schedule", &example(), "--cluster", &p(&two)]), "machines[1].count: 1200000 exceeds");
    refused(
        &run(&["gen-trace", "--dags", &example(), "--jobs", "1000000000", "--arrival", "poisson:5"]),
        "--jobs: 1000000000 exceeds the limit of 1000000",
    );
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\nj,0,q0,s,4000000000,1,1,1,0,0,\n",
    );
    refused(&run(&["replay", &p(&trace), "--scheduler", "fifo", "--out", &p(&dir.path().join("o"))]), "tasks");
}

#[cfg(unix)]
#[test]
fn endless_input_stops_at_the_input_limit() {
    refused(&run(&["lower-bound", "/dev/zero", "--limit-input", "1MiB"]), "exceeds the limit of 1048576");
}

/// Runs the binary with its address space capped at `mib` MiB (`ulimit -v`), so that a run that
/// would allocate more fails instead of succeeding slowly on a machine with memory to spare.
#[cfg(unix)]
fn run_within(mib: u64, args: &[&str]) -> Run {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024))
        .arg(crate::util::BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("sh runs");
    Run { code: out.status.code(), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// Every nested format stops at its documented depth with an error naming the place, before
/// the recursion that would exhaust the stack: DAX elements and DOT subgraphs at 64 levels, JSON
/// at serde_json's 128.
#[test]
fn nesting_is_refused_at_each_format_s_limit() {
    let dir = tempdir();
    let n = 100_000;
    let dax = write(dir.path(), "deep.dax", &format!("<adag>{}{}</adag>", "<a>".repeat(n), "</a>".repeat(n)));
    refused(&run(&["lower-bound", &p(&dax)]), "deep.dax: line 1, column 196: XML elements nest deeper than 64 levels");
    let dot = write(dir.path(), "deep.dot", &format!("digraph {{ {}{} }}", "{ ".repeat(n), "}".repeat(n)));
    refused(&run(&["lower-bound", &p(&dot)]), "deep.dot: line 1, column 137: subgraphs nest deeper than 64 levels");
    let json = write(dir.path(), "deep.json", &format!("{}{}", "[".repeat(n), "]".repeat(n)));
    refused(&run(&["lower-bound", &p(&json)]), "deep.json: line 1, column 128: recursion limit exceeded");
    // At the limit, a DAX is read.
    let ok = format!("<adag><job id=\"a\" runtime=\"2\">{}{}</job></adag>", "<m>".repeat(62), "</m>".repeat(62));
    let ok = write(dir.path(), "ok.dax", &ok);
    assert!(run(&["lower-bound", &p(&ok)]).ok().stdout_str().contains("critical_path 2.0"));
}

/// DOT's two amplifiers: an edge statement between two groups is the product of their sizes
/// (70 KB here ask for 36 million edges), and a `node [...]` default applies to every node
/// after it (2 MB before 5,000 nodes). Both are bounded before the work.
#[cfg(unix)]
#[test]
fn dot_products_and_defaults_are_bounded_before_the_work() {
    let dir = tempdir();
    let names = |prefix: &str| (0..6000).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join(" ");
    let product = write(
        dir.path(),
        "product.dot",
        &format!("digraph {{\n node [runtime=1]\n {{{}}} -> {{{}}}\n}}\n", names("a"), names("b")),
    );
    refused(
        &run_within(1024, &["lower-bound", &p(&product), "--limit-tasks", "1000000"]),
        "product.dot: line 3: edges (edges so far): 36000000 exceeds the limit of 5000000 (raise it with --limit-tasks)",
    );
    let nodes: String = (0..5000).map(|i| format!("n{i} [runtime=1]\n")).collect();
    let pad = "x".repeat(2_000_000);
    // An attribute the reader does not use is not kept at all.
    let unused = write(dir.path(), "unused.dot", &format!("digraph {{\n node [cores=2, pad=\"{pad}\"]\n{nodes}}}\n"));
    let r = run_within(1024, &["lower-bound", &p(&unused)]).ok();
    assert!(
        r.stdout_str().contains("5000 tasks") && r.stdout_str().contains("total_work    62.5"),
        "{}",
        r.stdout_str()
    );
    // One it uses (a label, a group name per node) counts at every node against --limit-input:
    // 2,000,002 bytes per node (label, cores, runtime), over 64 MiB at the 34th node.
    let label = write(dir.path(), "label.dot", &format!("digraph {{\n node [cores=2, label=\"{pad}\"]\n{nodes}}}\n"));
    refused(
        &run_within(1024, &["lower-bound", &p(&label), "--limit-input", "64MiB"]),
        "label.dot: node n33: attribute values (bytes applied so far, defaults included): 68000068 exceeds the limit of \
         67108864 (raise it with --limit-input)",
    );
}

/// An STG file declaring 99,999,999 tasks (under a raised limit) in 16 bytes reserves nothing for
/// them: it fails on its missing records, within 1 GiB.
#[cfg(unix)]
#[test]
fn stg_declared_counts_reserve_nothing() {
    let dir = tempdir();
    let stg = write(dir.path(), "claims.stg", "99999999\n0 0 0\n");
    refused(
        &run_within(1024, &["lower-bound", &p(&stg), "--limit-tasks", "200000000"]),
        "claims.stg: line 2, column 1: the file ends where a task id was expected (a truncated graph?)",
    );
}

#[test]
fn extreme_times_are_refused_with_the_field() {
    let dir = tempdir();
    let dag = write(
        dir.path(),
        "d.json",
        r#"{"resources":["cpu"],"stages":[{"id":"a","tasks":3,"duration":1e300,"demands":{"cpu":1}}]}"#,
    );
    for cmd in ["build-schedule", "lower-bound"] {
        refused(&run(&[cmd, &p(&dag)]), "stages[0] ('a').duration: duration 1e300 is above the largest accepted");
    }
    let header = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n";
    let late = write(dir.path(), "late.csv", &format!("{header}j,1e308,q0,s,1,1,1,1,0,0,\n"));
    let long = write(dir.path(), "long.csv", &format!("{header}j,0,q0,s,1,1e308,1,1,0,0,\n"));
    let out = p(&dir.path().join("o"));
    refused(&run(&["replay", &p(&late), "--scheduler", "fifo", "--out", &out]), "arrival: arrival 1e308 is above");
    refused(&run(&["replay-compare", &p(&long), "--schedulers", "fifo,cs"]), "duration: duration 1e308 is above");
    let alibaba = write(dir.path(), "a.csv", "-5,j_1,M1,10,50,0.3,2\n");
    refused(&run(&["replay", &p(&alibaba), "--scheduler", "fifo", "--out", &out]), "arrival_s: -5 is not in [0, 1e12]");

    // A heartbeat too short to be simulated is refused up front, with the shortest workable one.
    let ok = write(dir.path(), "ok.csv", &format!("{header}j,0,q0,s,4,100,1,1,0,0,\nk,50,q0,s,4,100,1,1,0,0,\n"));
    let r = run(&["replay", &p(&ok), "--scheduler", "fifo", "--heartbeat", "1e-9", "--out", &out]);
    refused(&r, "heartbeat 0.000000001 s would take at least");
    assert!(r.stderr.contains("use a heartbeat of at least"), "{}", r.stderr);

    // A load so small the arrivals would leave the accepted clock.
    let r = run(&["gen-trace", "--dags", &example(), "--jobs", "5", "--arrival", "poisson:5", "--load", "1e-300"]);
    refused(&r, "--load 1e-300: the arrivals would spread over");
}

#[test]
fn misleading_messages_are_fixed() {
    let dir = tempdir();
    for (tasks, want) in [
        ("\"many\"", "expected a task count (a whole number >= 0) or a list of tasks"),
        ("-3", "task count -3 is negative"),
        ("2.5", "task count 2.5 is not a whole number"),
    ] {
        let dag = write(dir.path(), "d.json", &format!(r#"{{"stages":[{{"id":"a","tasks":{tasks},"duration":1}}]}}"#));
        let r = run(&["lower-bound", &p(&dag)]);
        refused(&r, want);
        assert!(!r.stderr.contains("untagged"), "{}", r.stderr);
    }
    // A byte-order mark is accepted, in JSON and in CSV.
    let text = std::fs::read_to_string(repo("traces/example.json")).unwrap();
    let bom = write(dir.path(), "bom.json", &format!("\u{feff}{text}"));
    let a = run(&["lower-bound", &p(&bom), "--json"]).ok();
    let b = run(&["lower-bound", &example(), "--json"]).ok();
    assert_eq!(a.stdout, b.stdout);
    let csv = write(
        dir.path(),
        "bom.csv",
        "\u{feff}job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\nj,0,q0,s,1,1,1,1,0,0,\n",
    );
    run(&["replay", &p(&csv), "--scheduler", "fifo", "-q", "--out", &p(&dir.path().join("o"))]).ok();

    let cl =
        write(dir.path(), "c.json", r#"{"machines": [{"count": 2, "capacity": {"cpu": 4}}], "overbook": ["banana"]}"#);
    refused(&run(&["build-schedule", &example(), "--cluster", &p(&cl)]), "overbook[0]: 'banana' is not a resource");
    let typo = write(dir.path(), "t.json", r#"{"machines": [{"count": 2, "capacity": {"cpu": 16, "mme": 64}}]}"#);
    refused(&run(&["build-schedule", &example(), "--cluster", &p(&typo)]), "names mme that the DAG does not use");

    let header = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\n";
    let zero = write(dir.path(), "z.csv", &format!("{header}j,0,q0,s,0,1,1,1,0,0,\n"));
    refused(
        &run(&["replay", &p(&zero), "--scheduler", "fifo", "--out", &p(&dir.path().join("o"))]),
        "a stage needs at least one task",
    );
    let t = write(dir.path(), "ok.csv", &format!("{header}j,0,q0,s,1,1,1,1,0,0,\n"));
    refused(
        &run(&["replay", &p(&t), "--scheduler", "fifo", "--spread-queues", "0", "--out", &p(&dir.path().join("o"))]),
        "--spread-queues must be at least 1",
    );
    let missing = dir.path().join("nowhere");
    let r = run(&["plot", "cdf", &p(&missing), "--baseline", &p(&missing), "--out", &p(&dir.path().join("x.svg"))]);
    refused(&r, "nowhere/jobs.csv: No such file");
    assert!(!r.stderr.contains("line 0"), "{}", r.stderr);
    // A negative number is a value its parser refuses, not a flag with a useless tip.
    let r = run(&["build-schedule", &example(), "--seed", "-1"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("invalid value '-1' for '--seed"), "{}", r.stderr);
    assert!(!r.stderr.contains("to pass '-1' as a value"), "{}", r.stderr);
}

#[test]
fn validate_refuses_an_order_that_names_a_missing_task_or_inverts_dependencies() {
    let dir = tempdir();
    let sched = dir.path().join("s.json");
    run(&["build-schedule", &example(), "-q", "--no-timing", "--out", &p(&sched)]).ok();
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    let order = v["order"].as_array().unwrap().clone();
    // A task the DAG does not have.
    let mut bad = v.clone();
    bad["order"].as_array_mut().unwrap().push(serde_json::json!("ghost[0]"));
    let f = write(dir.path(), "ghost.json", &bad.to_string());
    refused(&run(&["validate", &example(), &p(&f)]), "ghost[0]");
    // Every dependency reversed: the order is the reverse of a valid one.
    v["order"] = serde_json::Value::Array(order.into_iter().rev().collect());
    let f = write(dir.path(), "rev.json", &v.to_string());
    refused(&run(&["validate", &example(), &p(&f)]), "order");
}

/// Every option says what it does, and the options that take a name list every name the
/// library knows (so a new scheduler or profile cannot be added without its help text).
#[test]
fn help_lists_every_value_and_describes_every_option() {
    let check = |args: &[&str], names: &[&str]| {
        let r = run(args).ok();
        let text = r.stdout_str();
        for n in names {
            // The name as a word of the list: followed by a comma, a period or the line's end.
            let listed = text.match_indices(&format!(" {n}")).any(|(i, m)| {
                matches!(text[i + m.len()..].chars().next(), None | Some(',' | '.' | '\n' | ';' | ' ' | ')'))
            });
            assert!(listed, "{args:?} lacks '{n}':\n{text}");
        }
        text
    };
    check(&["replay", "--help"], graphene::online::NAMES);
    check(&["replay-compare", "--help"], graphene::online::NAMES);
    check(&["build-schedule", "--help"], &graphene::Scheduler::known_names());
    let text = check(&["build-schedule", "--help"], &graphene::formats::profile::Profile::NAMES);
    assert!(text.contains("--limit-tasks"), "{text}");
    for cmd in [
        "build-schedule",
        "lower-bound",
        "validate",
        "compare",
        "gen-trace",
        "replay",
        "replay-compare",
        "export",
        "serve",
        "train-decima",
        "plot",
    ] {
        let r = run(&[cmd, "--help"]).ok();
        let text = r.stdout_str();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if t.starts_with("--") && !t.contains("  ") {
                // Long help puts the description on the next line.
                let next = lines.get(i + 1).map_or("", |n| n.trim());
                assert!(!next.is_empty() && !next.starts_with("--"), "{cmd}: option without a description: {t}");
            }
        }
    }
}

/// `replay --time-limit` stops a long replay (exit 1, nothing written); without it the same
/// replay finishes.
#[test]
fn a_replay_stops_at_its_time_limit() {
    let dir = tempdir();
    let trace = write(
        dir.path(),
        "t.csv",
        "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents\nj,0,q0,s,1,5000,1,1,0,0,\n",
    );
    let out = dir.path().join("o");
    let r = run(&["replay", &p(&trace), "--scheduler", "fifo", "--time-limit", "0", "-q", "--out", &p(&out)]);
    refused(&r, "the replay under fifo (at simulated time");
    assert!(r.stderr.contains("stopped: time limit of 0s reached"), "{}", r.stderr);
    assert!(!out.exists(), "nothing written");
    run(&["replay", &p(&trace), "--scheduler", "fifo", "-q", "--out", &p(&out)]).ok();
    assert!(out.join("jobs.csv").is_file());
}

/// `build-schedule --time-limit 0` still returns a valid schedule (the plain greedy placement is
/// always made), marked as stopped early; without a limit the report has no such key.
#[test]
fn a_search_stopped_at_its_time_limit_returns_a_valid_schedule() {
    let dir = tempdir();
    let sched = dir.path().join("s.json");
    let r = run(&["build-schedule", &example(), "--time-limit", "0", "--out", &p(&sched)]).ok();
    assert!(r.stderr.contains("stopped early at --time-limit"), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    assert_eq!(v["search"]["stopped_early"], true, "{v}");
    run(&["validate", &example(), &p(&sched)]).ok();
    let full = run(&["build-schedule", &example(), "--no-timing", "-q"]).ok().json();
    assert!(full["search"].get("stopped_early").is_none());
    assert!(v["makespan"].as_f64().unwrap() >= full["makespan"].as_f64().unwrap() - 1e-9);
    refused(
        &run(&["build-schedule", &example(), "--grid-step", "1e-9"]),
        "--grid-step 0.000000001 must be in [0.001, 1]",
    );
}

/// A chain longer than the exact cut test's 20,000 stages is still cut at
/// every stage (the linear bound), each one-task part is placed without a search and the run of
/// them is reported as one part entry; the schedule is the chain end to end and validates.
#[test]
fn a_long_chain_is_cut_at_every_stage_and_reported_as_one_run() {
    let n = 25_000;
    let stages: Vec<String> = (0..n)
        .map(|i| {
            let parents = if i == 0 { String::new() } else { format!(r#","parents":["s{}"]"#, i - 1) };
            format!(r#"{{"id":"s{i}","tasks":1,"duration":{},"demands":{{"cpu":1}}{parents}}}"#, 1 + i % 3)
        })
        .collect();
    let dir = tempdir();
    let dag = write(
        dir.path(),
        "chain.json",
        &format!(r#"{{"name":"chain","resources":["cpu"],"stages":[{}]}}"#, stages.join(",")),
    );
    let sched = dir.path().join("s.json");
    run(&[
        "build-schedule",
        &p(&dag),
        "--machines",
        "3",
        "--capacity",
        "cpu=4",
        "-q",
        "--no-timing",
        "--out",
        &p(&sched),
    ])
    .ok();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
    let total: f64 = (0..n).map(|i| (1 + i % 3) as f64).sum();
    assert_eq!(v["makespan"].as_f64(), Some(total));
    let parts = v["search"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "one entry for the whole run");
    assert_eq!((parts[0]["tasks"].as_u64(), parts[0]["runs"].as_u64()), (Some(n as u64), Some(n as u64)));
    assert_eq!(parts[0]["bypassed"], true);
    assert_eq!(parts[0]["makespan"].as_f64(), Some(total));
    run(&["validate", &p(&dag), &p(&sched), "--machines", "3", "--capacity", "cpu=4"]).ok();
}
