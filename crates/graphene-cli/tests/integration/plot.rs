//! `graphene plot gantt|usage|cdf` through the CLI on the fixtures in `tests/data/plot/`: the
//! SVG parses, and holds the lanes, bars, marks, lines and labels the inputs call for.

use std::path::{Path, PathBuf};

use crate::util::{repo, run, tempdir, write};

/// Plot area ends where the legend panel starts (1200 - 280 px).
const PLOT_RIGHT: f64 = 920.0;
/// Palette99 colours 0, 1 and 3 (stages s0, s1, s3; cpu; the first CDF line).
const RED: &str = "#E6194B";
const GREEN: &str = "#3CB44B";
const BLUE: &str = "#0082C8";

fn fixture(rel: &str) -> PathBuf {
    repo(&format!("tests/data/plot/{rel}"))
}

#[derive(Debug, Clone, PartialEq)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    fill: String,
    stroke: String,
}

struct Svg {
    texts: Vec<String>,
    rects: Vec<Rect>,
    /// (stroke colour, points) of every polyline.
    lines: Vec<(String, Vec<(f64, f64)>)>,
}

impl Svg {
    fn parse(path: &Path) -> Svg {
        let text = std::fs::read_to_string(path).expect("the SVG was written");
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("width"), Some("1200"));
        let attr = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap_or("").to_string();
        let num = |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
        let mut svg = Svg { texts: Vec::new(), rects: Vec::new(), lines: Vec::new() };
        for n in root.descendants().filter(|n| n.is_element()) {
            match n.tag_name().name() {
                "text" => svg.texts.push(n.text().unwrap_or("").trim().to_string()),
                "rect" => svg.rects.push(Rect {
                    x: num(&n, "x"),
                    y: num(&n, "y"),
                    w: num(&n, "width"),
                    h: num(&n, "height"),
                    fill: attr(&n, "fill"),
                    stroke: attr(&n, "stroke"),
                }),
                "polyline" => {
                    let pts = attr(&n, "points")
                        .split_whitespace()
                        .map(|p| {
                            let (x, y) = p.split_once(',').expect("x,y");
                            (x.parse().expect("x"), y.parse().expect("y"))
                        })
                        .collect();
                    svg.lines.push((attr(&n, "stroke"), pts));
                }
                _ => {}
            }
        }
        svg
    }

    fn has_text(&self, t: &str) -> bool {
        self.texts.iter().any(|x| x == t)
    }

    fn count_text(&self, t: &str) -> usize {
        self.texts.iter().filter(|x| *x == t).count()
    }

    /// Filled bars inside the plot area (not the background, not the legend).
    fn bars(&self) -> Vec<&Rect> {
        self.rects.iter().filter(|r| r.x < PLOT_RIGHT && r.fill != "none" && r.fill != "#FFFFFF").collect()
    }

    fn outlines(&self) -> Vec<&Rect> {
        self.rects.iter().filter(|r| r.x < PLOT_RIGHT && r.fill == "none" && r.stroke == "#000000").collect()
    }

    /// Polylines of `colour` with at least `min` points (series, not legend marks or ticks).
    fn series(&self, colour: &str, min: usize) -> Vec<&Vec<(f64, f64)>> {
        self.lines.iter().filter(|(c, p)| c == colour && p.len() >= min).map(|(_, p)| p).collect()
    }
}

fn plot(args: &[&str], out: &Path) -> crate::util::Run {
    let mut all: Vec<String> = vec!["plot".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.push("--out".into());
    all.push(out.display().to_string());
    run(&all)
}

fn gantt_args(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["gantt".into(), fixture("schedule.json").display().to_string()];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn dag_args() -> Vec<String> {
    vec!["--dag".into(), fixture("dag.json").display().to_string(), "--capacity".into(), "cpu=16,mem=16".into()]
}

#[test]
fn gantt_has_a_lane_per_machine_a_bar_per_task_and_the_troublesome_set_outlined() {
    let dir = tempdir();
    let out = dir.path().join("gantt.svg");
    let mut args = gantt_args(&["--note", "made by: the fixture"]);
    args.extend(dag_args());
    let r = plot(&args.iter().map(String::as_str).collect::<Vec<_>>(), &out).ok();
    assert!(r.stderr.contains("2 lanes, 4 troublesome tasks marked"), "{}", r.stderr);
    let svg = Svg::parse(&out);
    assert!(svg.has_text("graphene on plotdag: makespan 56.0 s, 16 tasks, 2 machines"));
    assert_eq!((svg.count_text("m0"), svg.count_text("m1")), (1, 1));
    assert!(svg.has_text("time [s]") && svg.has_text("machine"));
    assert!(svg.has_text("made by: the fixture"));
    let bars = svg.bars();
    assert_eq!(bars.len(), 16, "one bar per task");
    // Stages in DAG order take palette colours 0..5: s0 has 2 tasks, s1 1, s3 4.
    let of = |c: &str| bars.iter().filter(|r| r.fill == c).count();
    assert_eq!((of(RED), of(GREEN), of(BLUE)), (2, 1, 4));
    // The troublesome set is s3: four outlines, each exactly on an s3 bar.
    let outlines = svg.outlines();
    assert_eq!(outlines.len(), 4);
    for o in &outlines {
        assert!(bars.iter().any(|b| b.fill == BLUE && (b.x, b.y, b.w, b.h) == (o.x, o.y, o.w, o.h)), "{o:?}");
    }
    for label in [
        "makespan 56.0 s",
        "lower bound: critical path 51.0 s",
        "lower bound: total work 35.6 s",
        "lower bound: stage-aware 56.0 s",
        "troublesome task (4)",
        "s0",
        "s5",
    ] {
        assert!(svg.has_text(label), "legend lacks {label}: {:?}", svg.texts);
    }
    // The makespan line is vertical, at the right end of the last bar.
    let makespan = svg.series("#C80000", 2);
    let line = makespan.iter().find(|p| p.len() == 2 && p[0].0 == p[1].0).expect("a vertical makespan line");
    let last = bars.iter().map(|b| b.x + b.w).fold(0.0, f64::max);
    assert!((line[0].0 - last).abs() <= 1.0, "makespan line at {} px, last bar ends at {last} px", line[0].0);

    // Byte-identical when drawn again.
    let again = dir.path().join("again.svg");
    plot(&args.iter().map(String::as_str).collect::<Vec<_>>(), &again).ok();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
}

#[test]
fn gantt_marks_the_flagged_tasks_without_the_dag() {
    let dir = tempdir();
    let out = dir.path().join("gantt.svg");
    let r = plot(&["gantt", fixture("schedule.json").to_str().unwrap()], &out).ok();
    assert!(r.stderr.contains("2 lanes, 4 troublesome tasks marked"), "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let svg = Svg::parse(&out);
    assert_eq!(svg.bars().len(), 16);
    assert_eq!(svg.outlines().len(), 4);
}

#[test]
fn gantt_warns_when_the_flags_disagree_with_the_search_report() {
    let dir = tempdir();
    let out = dir.path().join("gantt.svg");
    // A report whose tasks lost their flags (say, rewritten by another tool) but whose search
    // still says four tasks were troublesome: nothing is outlined, and the chart says why.
    let text = std::fs::read_to_string(fixture("schedule.json"))
        .unwrap()
        .replace("\"troublesome\": true", "\"troublesome\": false");
    let sched = write(dir.path(), "unflagged.json", &text);
    let r = plot(&["gantt", sched.to_str().unwrap()], &out).ok();
    assert!(
        r.stderr.contains("warning: the search reports 4 troublesome tasks but 0 tasks are flagged troublesome"),
        "{}",
        r.stderr
    );
    let svg = Svg::parse(&out);
    assert_eq!(svg.bars().len(), 16);
    assert!(svg.outlines().is_empty());
    assert!(!svg.texts.iter().any(|t| t.starts_with("troublesome")));
}

#[test]
fn gantt_by_resource_has_a_lane_per_machine_and_resource() {
    let dir = tempdir();
    let out = dir.path().join("res.svg");
    let mut args = gantt_args(&["--by", "resource"]);
    args.extend(dag_args());
    plot(&args.iter().map(String::as_str).collect::<Vec<_>>(), &out).ok();
    let svg = Svg::parse(&out);
    for lane in ["m0 cpu", "m0 mem", "m1 cpu", "m1 mem"] {
        assert_eq!(svg.count_text(lane), 1, "lane {lane}: {:?}", svg.texts);
    }
    assert!(svg.has_text("cpu") && svg.has_text("mem"));
    // Usage bars are coloured by resource only.
    assert!(svg.bars().iter().all(|b| b.fill == RED || b.fill == GREEN));
    assert!(svg.bars().iter().any(|b| b.fill == RED) && svg.bars().iter().any(|b| b.fill == GREEN));
}

#[test]
fn gantt_with_more_machines_than_lanes_groups_them() {
    let dir = tempdir();
    let out = dir.path().join("agg.svg");
    plot(&["gantt", fixture("schedule.json").to_str().unwrap(), "--max-lanes", "1", "-q"], &out).ok();
    let svg = Svg::parse(&out);
    assert_eq!(svg.count_text("m0-1"), 1);
    assert!(svg.has_text("machines (2 per lane)"));
    assert_eq!(svg.bars().len(), 16);
}

#[test]
fn usage_draws_one_step_line_per_resource_and_running_tasks() {
    let dir = tempdir();
    let out = dir.path().join("usage.svg");
    plot(&["usage", fixture("graphene").to_str().unwrap(), "-q"], &out).ok();
    let svg = Svg::parse(&out);
    assert!(svg.has_text("graphene on fixture.csv: 4 jobs, 2 machines, makespan 40 s"));
    for label in ["cpu (mean 50%)", "mem (mean 30%)", "running tasks (lower chart)", "cluster capacity in use [%]"] {
        assert!(svg.has_text(label), "lacks {label}: {:?}", svg.texts);
    }
    // Four intervals: eight points per step line.
    let cpu = svg.series(RED, 3);
    assert_eq!(cpu.len(), 1);
    assert_eq!(cpu[0].len(), 8);
    // cpu falls 1.0 -> 0.6 -> 0.3 -> 0.1: pixel y grows (down the page) at each step.
    let ys: Vec<f64> = cpu[0].iter().step_by(2).map(|p| p.1).collect();
    assert!(ys.windows(2).all(|w| w[0] < w[1]), "{ys:?}");
    assert_eq!(svg.series("#000000", 8).len(), 1, "the running-tasks line");
    assert_eq!(svg.series(GREEN, 8).len(), 1, "the mem line");
}

#[test]
fn cdf_of_jct_gaps_has_a_line_per_scheduler_with_its_median() {
    let dir = tempdir();
    let out = dir.path().join("cdf.svg");
    let cs = fixture("cs");
    let g = fixture("graphene");
    plot(&["cdf", g.to_str().unwrap(), cs.to_str().unwrap(), "--baseline", cs.to_str().unwrap(), "-q"], &out).ok();
    let svg = Svg::parse(&out);
    assert!(svg.has_text("Per-job JCT reduction against cs"));
    assert!(svg.has_text("JCT reduction vs cs [%] (positive = faster)"));
    // Gaps 50, 25, -25 % (the zero-JCT job is left out); cs against itself is all 0.
    assert!(svg.has_text("graphene: median 25.0%, n=3"), "{:?}", svg.texts);
    assert!(svg.has_text("cs: median 0.0%, n=3"));
    assert_eq!(svg.series(RED, 6).len(), 1);
    assert_eq!(svg.series(RED, 6)[0].len(), 6, "a step per job");
    assert_eq!(svg.series(GREEN, 6).len(), 1);

    let out = dir.path().join("slow.svg");
    plot(
        &[
            "cdf",
            g.to_str().unwrap(),
            "--baseline",
            cs.to_str().unwrap(),
            "--metric",
            "slowdown",
            "--labels",
            "G",
            "-q",
        ],
        &out,
    )
    .ok();
    let svg = Svg::parse(&out);
    assert!(svg.has_text("G: median 0.750x, n=3"), "{:?}", svg.texts);
}

/// Replays written with `--format parquet` plot the same CDF as the same replays in CSV (the
/// charts differ only in the command line they record), and a Parquet file without a `jct`
/// column is refused naming it.
#[test]
fn cdf_reads_parquet_replays_as_it_reads_csv_ones() {
    let dir = tempdir();
    let d = |n: &str| dir.path().join(n).display().to_string();
    let small = repo("traces/small.csv").display().to_string();
    for (sched, fmt) in [("fifo", "csv"), ("cs", "csv"), ("fifo", "parquet"), ("cs", "parquet")] {
        run(&["replay", &small, "--scheduler", sched, "--format", fmt, "-q", "--out", &d(&format!("{sched}-{fmt}"))])
            .ok();
    }
    let chart = |fmt: &str| {
        let out = dir.path().join(format!("{fmt}.svg"));
        plot(&["cdf", &d(&format!("fifo-{fmt}")), "--baseline", &d(&format!("cs-{fmt}")), "-q"], &out).ok();
        let svg = std::fs::read_to_string(&out).unwrap();
        svg.lines().filter(|l| !l.contains("made by:")).collect::<Vec<_>>().join("\n")
    };
    let parquet = chart("parquet");
    assert!(parquet.contains("fifo: median"), "{parquet}");
    assert_eq!(parquet, chart("csv"));
    // A jobs.parquet of another table (the schedule's columns) has no jct.
    std::fs::copy(dir.path().join("cs-parquet/schedule.parquet"), dir.path().join("cs-parquet/jobs.parquet")).unwrap();
    let r = plot(&["cdf", &d("fifo-parquet"), "--baseline", &d("cs-parquet")], &dir.path().join("x.svg"));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("cs-parquet/jobs.parquet") && r.stderr.contains("no column 'jct'"), "{}", r.stderr);
}

#[test]
fn cdf_of_offline_ratios_has_a_line_per_scheduler_of_a_compare_csv() {
    let dir = tempdir();
    let out = dir.path().join("ratio.svg");
    plot(&["cdf", fixture("compare.csv").to_str().unwrap(), "--metric", "ratio", "-q"], &out).ok();
    let svg = Svg::parse(&out);
    assert!(svg.has_text("graphene: median 1.000x, n=3"), "{:?}", svg.texts);
    assert!(svg.has_text("cp: median 1.200x, n=3"));
    assert!(svg.has_text("makespan / best lower bound"));
}

#[test]
fn bad_inputs_are_named_and_never_panic() {
    let dir = tempdir();
    let out = dir.path().join("x.svg");
    let cs = fixture("cs");
    let check = |args: &[&str], want: &str| {
        let r = plot(args, &out);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: expected '{want}' in {}", r.stderr);
    };
    let sched = write(
        dir.path(),
        "bad.json",
        r#"{"machines": 2, "tasks": [{"id": "s0[0]", "machine": 5, "start": 0, "end": 1}]}"#,
    );
    check(&["gantt", sched.to_str().unwrap()], "bad.json: tasks[0].machine: 5 is not one of 2 machines");
    check(&["gantt", fixture("schedule.json").to_str().unwrap(), "--by", "resource"], "--by resource needs --dag");
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    write(
        &other,
        "jobs.csv",
        "job,queue,arrival,finish,jct,tasks\nj0,q,0,1,1,1\nzz,q,0,1,1,1\nj2,q,0,1,1,1\nj3,q,0,1,1,1\n",
    );
    check(
        &["cdf", other.to_str().unwrap(), "--baseline", cs.to_str().unwrap()],
        "jobs.csv line 3: job 'zz' where the baseline has 'j1'",
    );
    write(&other, "jobs.csv", "job,queue,arrival,finish,jct,tasks\nj0,q,0,1,abc,1\n");
    check(
        &["cdf", other.to_str().unwrap(), "--baseline", cs.to_str().unwrap()],
        "line 2, column 0: jct 'abc' is not a finite number",
    );
    check(&["cdf", cs.to_str().unwrap()], "--metric jct needs --baseline DIR");
    check(
        &["cdf", cs.to_str().unwrap(), "--baseline", cs.to_str().unwrap(), "--labels", "a,b"],
        "--labels gives 2 names for 1 lines",
    );
    check(&["usage", other.to_str().unwrap()], "summary.json");
    assert!(!out.exists(), "no chart written for bad input");
}

/// On real TPC-H queries where the search picks a troublesome set (10, 5 and 18 tasks), the
/// report flags exactly that many tasks and the chart outlines each of them.
#[test]
fn troublesome_marks_match_the_search_on_tpch_queries() {
    let tpch = crate::util::shared_or_skip!("data/decima-tpch/json/tpch-2g.json");
    let dir = tempdir();
    for (query, trouble) in [("7", 10), ("18", 5), ("21", 18)] {
        let sched = dir.path().join(format!("q{query}.json"));
        let t = tpch.to_str().unwrap();
        run(&["build-schedule", t, "--query", query, "--no-timing", "-q", "--out", sched.to_str().unwrap()]).ok();
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sched).unwrap()).unwrap();
        let reported: u64 =
            report["search"]["parts"].as_array().unwrap().iter().map(|p| p["subset_sizes"][0].as_u64().unwrap()).sum();
        assert_eq!(reported, trouble, "query {query}: the search's choice changed; update this test");
        let out = dir.path().join(format!("q{query}.svg"));
        let flagged = report["tasks"].as_array().unwrap().iter().filter(|t| t["troublesome"] == true).count();
        assert_eq!(flagged as u64, trouble, "query {query}");
        let r = plot(&["gantt", sched.to_str().unwrap()], &out).ok();
        assert!(r.stderr.contains(&format!("10 lanes, {trouble} troublesome tasks marked")), "q{query}: {}", r.stderr);
        assert_eq!(Svg::parse(&out).outlines().len(), trouble as usize);
    }
}
