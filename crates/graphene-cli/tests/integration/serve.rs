//! `graphene serve` on a loopback port: every answer compared byte for byte with the CLI's for
//! the same inputs (the CLI runs in a directory holding `dag.json`, `cluster.json` and
//! `schedule.json`, the names the service gives the parts of a request), the limits (413, 503),
//! the metrics, and a clean exit on SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::util::{repo, tempdir, write, Run, BIN};

struct Server {
    child: Option<Child>,
    base: String,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the graphene binary starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("the server prints its address");
        let base = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        Server { child: Some(child), base }
    }

    /// SIGTERM, then the exit code and standard error.
    fn stop(mut self) -> (Option<i32>, String) {
        let child = self.child.take().unwrap();
        let ok = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success();
        assert!(ok, "kill -TERM failed");
        let out = child.wait_with_output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    fn post(&self, path: &str, body: &[u8]) -> (u16, String) {
        answer(client().post(&format!("{}{path}", self.base)).send(body))
    }

    fn get(&self, path: &str) -> (u16, String) {
        answer(client().get(&format!("{}{path}", self.base)).call())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// An HTTP client that hands back 4xx and 5xx answers with their bodies, as a user's client
/// sees them (ureq turns them into errors by default).
fn client() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

type Answer = Result<ureq::http::Response<ureq::Body>, ureq::Error>;

fn answer(r: Answer) -> (u16, String) {
    match r {
        Ok(mut resp) => (resp.status().as_u16(), resp.body_mut().read_to_string().unwrap()),
        Err(e) => panic!("request failed: {e}"),
    }
}

/// The CLI run in `dir`, so that it names the files as the service does.
fn cli_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(BIN).args(args).current_dir(dir).stdin(Stdio::null()).output().unwrap();
    Run { code: out.status.code(), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo(rel)).unwrap()
}

/// `{"error": m}` -> m.
fn error_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    v["error"].as_str().unwrap_or_else(|| panic!("no error in {body}")).to_string()
}

#[test]
fn answers_match_the_cli_byte_for_byte() {
    let srv = Server::start(&["--workers", "2"]);
    let dir = tempdir();
    let example = read("traces/example.json");
    write(dir.path(), "dag.json", &example);

    // A bare DAG, options in the query string.
    let cli = cli_in(dir.path(), &["build-schedule", "dag.json", "--no-timing", "-q"]).ok();
    let (code, body) = srv.post("/v1/schedule?no_timing=true", example.as_bytes());
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.as_bytes(), &cli.stdout[..]);

    // The improver's budget as a query option, as the flag: the constructor alone gives 40 on
    // this small-set instance, the default budget 37 (its proven optimum).
    let hidden = read("tests/data/small-dags/hidden-01.json");
    write(dir.path(), "hidden.json", &hidden);
    for (improve, makespan) in [("0", 40.0), ("50000", 37.0)] {
        let cli = cli_in(
            dir.path(),
            &[
                "build-schedule",
                "hidden.json",
                "--machines",
                "2",
                "--capacity",
                "cpu=10,mem=10",
                "--no-timing",
                "-q",
                "--improve",
                improve,
            ],
        )
        .ok();
        let q = format!("/v1/schedule?no_timing=true&machines=2&capacity=cpu%3D10,mem%3D10&improve={improve}");
        let (code, body) = srv.post(&q, hidden.as_bytes());
        assert_eq!(code, 200, "{body}");
        assert_eq!(body.as_bytes(), &cli.stdout[..]);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["makespan"], makespan);
    }

    // The exact search as query options, as the flags: the same proof, the same bytes.
    let noshare = read("tests/data/small-dags/noshare-07.json");
    write(dir.path(), "noshare.json", &noshare);
    let cli = cli_in(
        dir.path(),
        &[
            "build-schedule",
            "noshare.json",
            "--machines",
            "2",
            "--capacity",
            "cpu=10,mem=10",
            "--no-timing",
            "-q",
            "--improve",
            "0",
            "--exact",
            "--exact-nodes",
            "3000000",
        ],
    )
    .ok();
    let q =
        "/v1/schedule?no_timing=true&machines=2&capacity=cpu%3D10,mem%3D10&improve=0&exact=true&exact_nodes=3000000";
    let (code, body) = srv.post(q, noshare.as_bytes());
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.as_bytes(), &cli.stdout[..]);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["makespan"].as_f64(), v["search"]["exact"]["status"].as_str()), (Some(28.0), Some("optimal")));

    // An envelope with a cluster file, a baseline and a seed.
    let mot = read("traces/motivating.json");
    let mot_cluster = read("traces/motivating-cluster.json");
    let d = tempdir();
    write(d.path(), "dag.json", &mot);
    write(d.path(), "cluster.json", &mot_cluster);
    for (scheduler, seed) in [("graphene", "0"), ("tetris", "0"), ("random", "7")] {
        let cli = cli_in(
            d.path(),
            &[
                "build-schedule",
                "dag.json",
                "--cluster",
                "cluster.json",
                "--scheduler",
                scheduler,
                "--seed",
                seed,
                "--no-timing",
                "-q",
            ],
        )
        .ok();
        let env = format!(
            r#"{{"dag": {mot}, "cluster": {mot_cluster}, "scheduler": "{scheduler}", "seed": {seed}, "no_timing": true}}"#
        );
        let (code, body) = srv.post("/v1/schedule", env.as_bytes());
        assert_eq!(code, 200, "{body}");
        assert_eq!(body.as_bytes(), &cli.stdout[..], "{scheduler}");
    }

    // Machines and capacity as options.
    let cli = cli_in(
        dir.path(),
        &[
            "build-schedule",
            "dag.json",
            "--machines",
            "3",
            "--capacity",
            "cpu=8,mem=32,disk=100,net=500",
            "--no-timing",
            "-q",
        ],
    )
    .ok();
    let (code, body) = srv.post(
        "/v1/schedule?no_timing=true&machines=3&capacity=cpu%3D8,mem%3D32,disk%3D100,net%3D500",
        example.as_bytes(),
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.as_bytes(), &cli.stdout[..]);

    // A WfCommons file (demands from its default profile), seeded.
    let wf = std::fs::read_to_string(crate::util::shared_or_skip!("data/wfcommons-generated/montage-100-seed42.json"))
        .expect("readable");
    let w = tempdir();
    write(w.path(), "dag.json", &wf);
    let cli = cli_in(w.path(), &["build-schedule", "dag.json", "--seed", "5", "--no-timing", "-q"]).ok();
    let (code, body) = srv.post("/v1/schedule?no_timing=true&seed=5", wf.as_bytes());
    assert_eq!(code, 200, "{body}");
    assert_eq!(body.as_bytes(), &cli.stdout[..]);

    // Lower bounds.
    let cli = cli_in(dir.path(), &["lower-bound", "dag.json", "--json"]).ok();
    let (code, body) = srv.post("/v1/lower-bound", example.as_bytes());
    assert_eq!((code, body.as_bytes()), (200, &cli.stdout[..]));

    // Validation: the schedule the service wrote is valid, with the CLI's summary line.
    let schedule = cli_in(dir.path(), &["build-schedule", "dag.json", "--no-timing", "-q"]).ok().stdout_str();
    write(dir.path(), "schedule.json", &schedule);
    let cli = cli_in(dir.path(), &["validate", "dag.json", "schedule.json"]).ok();
    let (code, body) = srv.post("/v1/validate", format!(r#"{{"dag": {example}, "schedule": {schedule}}}"#).as_bytes());
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(format!("{}\n", v["summary"].as_str().unwrap()), cli.stdout_str());

    // A tampered schedule: the same violations, in the same order, as the CLI's report.
    let mut s: Value = serde_json::from_str(&schedule).unwrap();
    s["tasks"][41]["start"] = Value::from(0.0);
    s["tasks"][3]["machine"] = Value::from(99);
    let tampered = s.to_string();
    write(dir.path(), "schedule.json", &tampered);
    let cli = cli_in(dir.path(), &["validate", "dag.json", "schedule.json"]);
    assert_eq!(cli.code, Some(1));
    let (code, body) = srv.post("/v1/validate", format!(r#"{{"dag": {example}, "schedule": {tampered}}}"#).as_bytes());
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["valid"], false);
    let mut lines = vec![v["summary"].as_str().unwrap().to_string()];
    lines.extend(v["violations"].as_array().unwrap().iter().map(|x| format!("  {}", x.as_str().unwrap())));
    assert!(lines.len() >= 3, "{lines:?}");
    assert_eq!(lines.join("\n") + "\n", cli.stderr);
    let (code, _) = srv.post("/v1/validate", example.as_bytes());
    assert_eq!(code, 400);

    let (code, body) = srv.get("/healthz");
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, body) = srv.get("/v2/nothing");
    assert_eq!(code, 404, "{body}");

    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("graphene serve: shut down"), "{stderr}");
}

/// Unreadable bodies get 400, readable ones with refused values 422; both carry the CLI's message.
#[test]
fn bad_bodies_get_400_or_422_with_the_cli_message() {
    let srv = Server::start(&[]);
    let dir = tempdir();
    let example = read("traces/example.json");
    let cluster = read("traces/motivating-cluster.json");
    // (DAG text, cluster text or "", query string, extra CLI flags)
    let cases: Vec<(String, &str, &str, Vec<&str>)> = vec![
        ("{\"stages\": [".into(), "", "", vec![]),
        ("not json at all".into(), "", "", vec![]),
        (r#"{"stages": [{"id": "a", "tasks": 1, "duration": -1}]}"#.into(), "", "", vec![]),
        (
            r#"{"resources": ["cpu"], "stages": [{"id": "a", "tasks": 1, "duration": 1, "parents": ["b"]},
             {"id": "b", "tasks": 1, "duration": 1, "parents": ["a"]}]}"#
                .into(),
            "",
            "",
            vec![],
        ),
        (
            r#"{"resources": ["cpu"], "stages": [{"id": "a", "tasks": 1, "duration": 1, "demands": {"cpu": 99}}]}"#
                .into(),
            "",
            "",
            vec![],
        ),
        (example.clone(), "", "?scheduler=fastest", vec!["--scheduler", "fastest"]),
        (example.clone(), "", "?machines=0", vec!["--machines", "0"]),
        (example.clone(), "", "?capacity=cpu%3Dlots", vec!["--capacity", "cpu=lots"]),
        (example.clone(), "{\"machines\": [{\"count\": 1, \"capacity\": {\"cpu\": -4}}]}", "", vec![]),
        (example.clone(), &cluster, "", vec![]),
        (example.clone(), "", "?demands=heavy", vec!["--demands", "heavy"]),
    ];
    for (i, (dag, cl, query, flags)) in cases.iter().enumerate() {
        let d = tempdir();
        write(d.path(), "dag.json", dag);
        let mut args = vec!["build-schedule", "dag.json", "-q", "--no-timing"];
        let body = if cl.is_empty() {
            dag.clone()
        } else {
            write(d.path(), "cluster.json", cl);
            args.extend(["--cluster", "cluster.json"]);
            format!(r#"{{"dag": {dag}, "cluster": {cl}}}"#)
        };
        args.extend(flags);
        let cli = cli_in(d.path(), &args);
        assert_eq!(cli.code, Some(1), "case {i}: the CLI should fail: {}", cli.stdout_str());
        let (code, resp) = srv.post(&format!("/v1/schedule{query}"), body.as_bytes());
        // Cases 0 and 1 are not JSON; the others are, with values the CLI refuses.
        assert_eq!(code, if i < 2 { 400 } else { 422 }, "case {i}: {resp}");
        assert_eq!(format!("error: {}\n", error_of(&resp)), cli.stderr, "case {i}");
    }
    let _ = dir;

    // Envelope problems the CLI cannot have: named as the request body.
    let (code, resp) = srv.post("/v1/schedule", format!(r#"{{"dag": {example}, "sheduler": "cp"}}"#).as_bytes());
    assert_eq!(code, 400);
    assert!(error_of(&resp).starts_with("request body: unknown field `sheduler`"), "{resp}");
    let (code, resp) = srv.post("/v1/schedule?colour=red", example.as_bytes());
    assert_eq!(code, 400);
    assert!(error_of(&resp).contains("unknown field `colour`"), "{resp}");
    let (code, resp) = srv.post("/v1/schedule", &[0xff, 0xfe, 0x00]);
    assert_eq!(code, 400);
    assert_eq!(
        error_of(&resp),
        "request body: stream did not contain valid UTF-8 (nor starts as a zstd, lz4 or snappy Spark log)"
    );

    // The metrics counted every one of them by route and status.
    let (code, text) = srv.get("/metrics");
    assert_eq!(code, 200);
    let n = cases.len() + 3;
    assert!(text.contains("graphene_http_requests_total{route=\"/v1/schedule\",status=\"400\"} 5"), "{text}");
    let unprocessable = cases.len() - 2;
    assert!(
        text.contains(&format!(
            "graphene_http_requests_total{{route=\"/v1/schedule\",status=\"422\"}} {unprocessable}"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("graphene_http_request_duration_seconds_count{{route=\"/v1/schedule\"}} {n}")),
        "{text}"
    );
    assert!(!text.contains("status=\"200\""), "{text}");
}

/// A WfCommons DAG that takes the constructor hundreds of times longer than a millisecond
/// (genome, 1,000 tasks: about 0.2 s of CPU in a release build; parsing its 0.8 MB alone takes
/// milliseconds).
fn slow_dag() -> Option<String> {
    let path = crate::util::shared("data/wfcommons-generated/genome-1000-seed42.json")?;
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (the shared data set)", path.display())))
}

#[test]
fn limits_answer_413_and_503_without_blocking_other_requests() {
    let srv = Server::start(&["--max-body", "2MiB", "--timeout", "1ms", "--workers", "1"]);
    let Some(big) = slow_dag() else { return };
    assert!(big.len() < 2 << 20);
    let (code, resp) = srv.post("/v1/schedule", &vec![b' '; (2 << 20) + 1]);
    assert_eq!(code, 413, "{resp}");
    assert_eq!(error_of(&resp), "request body is larger than 2097152 bytes (--max-body)");

    // The 1 ms may run out while the body is still arriving: the answer then goes out before
    // the client has written all of it, and the client may see a broken pipe instead of the
    // 503 the server sent (and counted). Such a try is made again, and counted.
    let mut tries = 0;
    let (code, resp) = loop {
        tries += 1;
        match client().post(&format!("{}/v1/schedule", srv.base)).send(big.as_bytes()) {
            Err(e) if tries < 20 => eprintln!("try {tries}: {e}"),
            r => break answer(r),
        }
    };
    assert_eq!(code, 503, "{resp}");
    assert_eq!(error_of(&resp), "not finished within 1ms (--timeout)");
    // The only worker may still be computing that schedule; the async side still answers.
    let (code, body) = srv.get("/healthz");
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, text) = srv.get("/metrics");
    assert_eq!(code, 200);
    assert!(text.contains(&format!("graphene_jobs_timed_out_total {tries}")), "{tries} tries: {text}");
    assert!(text.contains("graphene_http_requests_total{route=\"/v1/schedule\",status=\"413\"} 1"), "{text}");
    assert!(
        text.contains(&format!("graphene_http_requests_total{{route=\"/v1/schedule\",status=\"503\"}} {tries}")),
        "{tries} tries: {text}"
    );
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn bad_flags_are_refused() {
    for (flags, want) in [
        (vec!["--max-body", "lots"], "--max-body 'lots'"),
        (vec!["--timeout", "0s"], "--timeout must be longer than 0"),
        (vec!["--workers", "0"], "--workers must be at least 1"),
        (vec!["--addr", "nowhere"], "--addr 'nowhere'"),
        (vec!["--max-connections", "0"], "--max-connections must be at least 1"),
        (vec!["--header-timeout", "0s"], "--header-timeout must be longer than 0"),
        (vec!["--body-timeout", "soon"], "--body-timeout 'soon'"),
    ] {
        let mut args = vec!["serve"];
        args.extend(&flags);
        let r = crate::util::run(&args);
        assert_eq!(r.code, Some(1), "{flags:?}");
        assert!(r.stderr.contains(want), "{flags:?}: {}", r.stderr);
    }
}

/// Task graphs that overflowed the stack (100,000 nested DAX elements) or asked for gigabytes
/// (a DOT edge product, a 2 MB default label on 5,000 nodes) are refused with the limit they
/// hit, and the service answers the next request.
#[test]
fn hostile_task_graphs_are_refused_and_the_service_stays_up() {
    let srv = Server::start(&["--workers", "1"]);
    let n = 100_000;
    let deep = format!("<adag>{}{}</adag>", "<a>".repeat(n), "</a>".repeat(n));
    let (code, resp) = srv.post("/v1/lower-bound", deep.as_bytes());
    assert_eq!(code, 400, "{resp}");
    assert!(error_of(&resp).ends_with("line 1, column 196: XML elements nest deeper than 64 levels"), "{resp}");
    let names = |prefix: &str| (0..6000).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join(" ");
    let product = format!("digraph {{\n node [runtime=1]\n {{{}}} -> {{{}}}\n}}\n", names("a"), names("b"));
    let (code, resp) = srv.post("/v1/lower-bound", product.as_bytes());
    assert_eq!(code, 413, "{resp}");
    assert!(
        error_of(&resp).ends_with(
            "line 3: edges (edges so far): 36000000 exceeds the limit of 5000000 (raise it with --limit-tasks)"
        ),
        "{resp}"
    );
    let nodes: String = (0..5000).map(|i| format!("n{i} [runtime=1]\n")).collect();
    let label = format!("digraph {{\n node [cores=2, label=\"{}\"]\n{nodes}}}\n", "x".repeat(2_000_000));
    let (code, resp) = srv.post("/v1/lower-bound", label.as_bytes());
    assert_eq!(code, 413, "{resp}");
    assert!(error_of(&resp).contains("exceeds the limit of 268435456 (raise it with --limit-input)"), "{resp}");
    let (code, resp) = srv.post("/v1/lower-bound", read("traces/example.json").as_bytes());
    assert_eq!(code, 200, "{resp}");
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(name).and_then(|rest| rest.trim().parse().ok()))
}

/// The 130-byte request that used to abort the whole service (a billion tasks, then a
/// 72 GB allocation), and its friends, are refused with 413 naming the limit; the service
/// answers the next request as if nothing happened.
#[test]
fn one_hostile_request_does_not_take_the_service_down() {
    let srv = Server::start(&["--workers", "1"]);
    let bomb = r#"{"dag":{"name":"x","resources":["cpu"],"stages":[{"id":"a","tasks":1000000000,"duration":1,"demands":{"cpu":1}}]}}"#;
    assert!(bomb.len() <= 130, "{}", bomb.len());
    let (code, resp) = srv.post("/v1/schedule", bomb.as_bytes());
    assert_eq!(code, 413, "{resp}");
    assert_eq!(
        error_of(&resp),
        "dag.json: stages[0] ('a').tasks (tasks so far): 1000000000 exceeds the limit of 1000000 (raise it with --limit-tasks)"
    );
    let example = read("traces/example.json");
    let (code, resp) = srv.post("/v1/schedule?machines=1000000000", example.as_bytes());
    assert_eq!(code, 413, "{resp}");
    assert!(error_of(&resp).starts_with("--machines: 1000000000 exceeds the limit of 100000"), "{resp}");
    let cluster = r#"{"machines": [{"count": 18446744073709551615, "capacity": {"cpu": 1}}]}"#;
    let (code, resp) = srv.post("/v1/schedule", format!(r#"{{"dag": {example}, "cluster": {cluster}}}"#).as_bytes());
    assert_eq!(code, 413, "{resp}");
    // Deep nesting and a huge id are ordinary bad input.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (code, resp) = srv.post("/v1/schedule", deep.as_bytes());
    assert_eq!(code, 400, "{resp}");
    let huge_id = format!(r#"{{"stages": [{{"id": "{}", "tasks": 1, "duration": 1}}]}}"#, "x".repeat(1 << 20));
    let (code, _) = srv.post("/v1/lower-bound", huge_id.as_bytes());
    assert_eq!(code, 200);
    // The service is still there and answers exactly as the CLI.
    let (code, resp) = srv.post("/v1/schedule?no_timing=true", example.as_bytes());
    assert_eq!(code, 200, "{resp}");
    let cli =
        crate::util::run(&["build-schedule", &repo("traces/example.json").display().to_string(), "--no-timing", "-q"]);
    assert_eq!(resp.as_bytes(), cli.stdout.as_slice());
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A request answered 503 at its timeout also stops its computation: the worker comes back
/// and the metrics count the job as cancelled. (The improver's budget of a billion placements
/// would take it many minutes on the motivating example, whose schedule stays above its lower
/// bound, so that the improver never stops early.)
#[test]
fn a_timed_out_request_stops_its_work() {
    let srv = Server::start(&["--timeout", "300ms", "--workers", "1"]);
    let (dag, cluster) = (read("traces/motivating.json"), read("traces/motivating-cluster.json"));
    let body = format!(r#"{{"dag": {dag}, "cluster": {cluster}}}"#);
    let (code, resp) = srv.post("/v1/schedule?improve=1000000000", body.as_bytes());
    assert_eq!(code, 503, "{resp}");
    let mut text = String::new();
    for _ in 0..200 {
        let (_, t) = srv.get("/metrics");
        text = t;
        if metric(&text, "graphene_jobs_running ") == Some(0.0)
            && metric(&text, "graphene_jobs_cancelled_total ") == Some(1.0)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert_eq!(metric(&text, "graphene_jobs_running "), Some(0.0), "{text}");
    assert_eq!(metric(&text, "graphene_jobs_cancelled_total "), Some(1.0), "{text}");
}

/// A body that trickles in holds its admission only until the timeout; while it does, a request
/// beyond --max-pending gets 503 at once; afterwards requests are served again.
#[test]
fn slow_bodies_time_out_and_pending_requests_are_bounded() {
    use std::io::{Read, Write};
    let srv = Server::start(&["--timeout", "300ms", "--workers", "1", "--max-pending", "1"]);
    let addr = srv.base.trim_start_matches("http://").to_string();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /v1/lower-bound HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"sta").unwrap();
    // Give the server a moment to admit the slow request.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let example = read("traces/example.json");
    let (code, resp) = srv.post("/v1/lower-bound", example.as_bytes());
    assert_eq!(code, 503, "{resp}");
    assert!(error_of(&resp).starts_with("busy: 1 requests in flight (--max-pending)"), "{resp}");
    let (code, _) = srv.get("/healthz");
    assert_eq!(code, 200, "health checks are never refused");
    let mut answer = String::new();
    slow.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let (code, _) = srv.post("/v1/lower-bound", example.as_bytes());
    assert_eq!(code, 200);
    let (_, text) = srv.get("/metrics");
    assert_eq!(metric(&text, "graphene_requests_rejected_total "), Some(1.0), "{text}");
}

/// An option nested 100,000 deep (far past the JSON reader's recursion limit of 128) is a 400
/// naming the option, read no further than its first character; it used to panic a worker (500)
/// and leave `graphene_jobs_running` at 1.
#[test]
fn nested_options_are_refused_by_name() {
    let srv = Server::start(&["--workers", "1"]);
    let example = read("traces/example.json");
    let deep = |open: &str, close: &str| format!("{}{}", open.repeat(100_000), close.repeat(100_000));
    let nested = "(options are numbers, strings or booleans, never nested)";
    let cases = [
        ("seed", deep("[", "]"), format!("request body: seed: invalid type: sequence, expected u64 {nested}")),
        (
            "machines",
            format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000)),
            format!("request body: machines: invalid type: map, expected usize {nested}"),
        ),
        (
            "no_timing",
            "[true]".to_string(),
            format!("request body: no_timing: invalid type: sequence, expected a boolean {nested}"),
        ),
        (
            "seed",
            "\"seven\"".to_string(),
            "request body: seed: invalid type: string \"seven\", expected u64".to_string(),
        ),
    ];
    for (name, value, want) in &cases {
        let body = format!(r#"{{"dag": {example}, "{name}": {value}}}"#);
        for endpoint in ["/v1/schedule", "/v1/lower-bound"] {
            let (code, resp) = srv.post(endpoint, body.as_bytes());
            assert_eq!(code, 400, "{name} at {endpoint}: {resp}");
            assert_eq!(&error_of(&resp), want, "{endpoint}");
        }
    }
    // An unknown option is named as unknown whatever it holds.
    let body = format!(r#"{{"dag": {example}, "colour": {}}}"#, deep("[", "]"));
    let (code, resp) = srv.post("/v1/schedule", body.as_bytes());
    assert_eq!(code, 400, "{resp}");
    assert!(error_of(&resp).starts_with("request body: unknown field `colour`, expected one of `scheduler`"), "{resp}");
    // The validate envelope takes options too.
    let body = format!(r#"{{"dag": {example}, "schedule": {{}}, "query": {}}}"#, deep("[", "]"));
    let (code, resp) = srv.post("/v1/validate", body.as_bytes());
    assert_eq!(code, 400, "{resp}");
    assert!(error_of(&resp).starts_with("request body: query: invalid type: sequence, expected u32"), "{resp}");

    let (_, text) = srv.get("/metrics");
    assert_eq!(metric(&text, "graphene_jobs_running "), Some(0.0), "{text}");
    assert!(!text.contains("status=\"500\""), "{text}");
    let (code, resp) = srv.post("/v1/schedule?no_timing=true", example.as_bytes());
    assert_eq!(code, 200, "{resp}");
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn addr_of(srv: &Server) -> String {
    srv.base.trim_start_matches("http://").to_string()
}

/// Reads until the server closes the connection (EOF or reset): what it sent first. Panics if the
/// connection is still open after a minute.
fn until_closed(s: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    s.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("the connection was not closed: {e}"),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Connections that send nothing cannot crowd the service out: at --max-connections a new
/// connection closes the one idle for longest, so /healthz is answered with 20 half-open
/// connections against a cap of 8, and the 13 oldest of them are closed.
#[test]
fn half_open_connections_cannot_crowd_out_requests() {
    use std::io::Read;
    let srv = Server::start(&["--max-connections", "8", "--header-timeout", "60s"]);
    let addr = addr_of(&srv);
    let mut idle: Vec<std::net::TcpStream> = (0..20).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    // One agent: /healthz and /metrics share the 21st connection.
    let agent = client();
    let (code, body) = answer(agent.get(&format!("{}/healthz", srv.base)).call());
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, text) = answer(agent.get(&format!("{}/metrics", srv.base)).call());
    assert_eq!(code, 200);
    assert_eq!(metric(&text, "graphene_connections_dropped_total{reason=\"evicted\"} "), Some(13.0), "{text}");
    assert_eq!(metric(&text, "graphene_connections_open "), Some(8.0), "{text}");
    for s in &mut idle[..13] {
        assert_eq!(until_closed(s), "");
    }
    for s in &mut idle[13..] {
        s.set_read_timeout(Some(std::time::Duration::from_millis(100))).unwrap();
        let e = loop {
            match s.read(&mut [0u8; 1]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r.expect_err("a younger idle connection stays open"),
            }
        };
        assert!(matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{e}");
    }
    // A request on one of them is served as on any connection.
    use std::io::Write;
    idle[19].write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let got = until_closed(&mut idle[19]);
    assert!(got.starts_with("HTTP/1.1 200") && got.ends_with("ok\n"), "{got}");
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A connection that does not send a request's headers within --header-timeout is closed, as
/// is one that sends nothing; a body that stops arriving gets 408 at --body-timeout.
#[test]
fn header_and_body_read_timeouts_close_slow_clients() {
    use std::io::Write;
    let srv = Server::start(&["--header-timeout", "300ms", "--body-timeout", "300ms", "--timeout", "60s"]);
    let addr = addr_of(&srv);
    let mut silent = std::net::TcpStream::connect(&addr).unwrap();
    let mut half = std::net::TcpStream::connect(&addr).unwrap();
    half.write_all(b"POST /v1/sched").unwrap();
    let mut headers = std::net::TcpStream::connect(&addr).unwrap();
    headers.write_all(b"POST /v1/lower-bound HTTP/1.1\r\nHost: x\r\nContent-Len").unwrap();
    let mut body = std::net::TcpStream::connect(&addr).unwrap();
    body.write_all(b"POST /v1/lower-bound HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"sta").unwrap();
    for s in [&mut silent, &mut half, &mut headers] {
        let got = until_closed(s);
        assert!(got.is_empty() || got.starts_with("HTTP/1.1 408"), "{got}");
    }
    let got = until_closed(&mut body);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("request body not received within 300ms (--body-timeout)"), "{got}");
    // A kept-alive connection is closed after --header-timeout without a next request, and the
    // service serves everyone else meanwhile.
    let mut kept = std::net::TcpStream::connect(&addr).unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let got = until_closed(&mut kept);
    assert!(got.starts_with("HTTP/1.1 200") && got.ends_with("ok\n"), "{got}");
    let example = read("traces/example.json");
    let (code, _) = srv.post("/v1/lower-bound", example.as_bytes());
    assert_eq!(code, 200);
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A saturated service answers large bodies with the documented 503 and `Retry-After`, not a
/// broken pipe: a refused body is read and discarded before the answer goes out (so is one over
/// --max-body, up to twice the limit, answered 413).
#[test]
fn a_saturated_service_answers_503_to_large_bodies() {
    use std::io::Write;
    let srv = Server::start(&["--workers", "1", "--max-pending", "1", "--timeout", "60s", "--body-timeout", "60s"]);
    let example = read("traces/example.json");
    // The only slot, held by a body that does not finish. A probe that reaches the server first
    // takes the slot and the slow request is refused, so a loaded machine may need a few tries:
    // each try opens a new slow request (dropping the last closes it and frees its slot).
    let busy = "busy: 1 requests in flight (--max-pending); retry later";
    let mut held = None;
    for _ in 0..200 {
        let mut slow = std::net::TcpStream::connect(addr_of(&srv)).unwrap();
        slow.write_all(b"POST /v1/lower-bound HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(25));
        let (code, resp) = srv.post("/v1/lower-bound", example.as_bytes());
        if code == 503 && error_of(&resp) == busy {
            held = Some(slow);
            break;
        }
    }
    let slow = held.expect("the slow request never held the slot");
    // 10 MB bodies (a DAG padded with spaces), 8 at once.
    let mut big = format!(r#"{{"dag": {example}"#).into_bytes();
    big.resize(10_000_000 - 1, b' ');
    big.push(b'}');
    let url = format!("{}/v1/lower-bound", srv.base);
    let answers: Vec<_> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| match client().post(&url).send(&big) {
                    Ok(mut resp) if resp.status().as_u16() >= 400 => {
                        let retry = resp.headers().get("Retry-After").and_then(|v| v.to_str().ok()).map(String::from);
                        (resp.status().as_u16(), retry, error_of(&resp.body_mut().read_to_string().unwrap()))
                    }
                    Ok(resp) => (resp.status().as_u16(), None, String::new()),
                    Err(e) => panic!("no answer to a 10 MB body: {e}"),
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for a in &answers {
        assert_eq!(a, &(503, Some("1".to_string()), busy.to_string()));
    }
    // Over --max-body (16 MiB): 413, also while saturated.
    let mut huge = big.clone();
    huge.resize(20_000_000, b' ');
    let (code, resp) = srv.post("/v1/lower-bound", &huge);
    assert_eq!((code, error_of(&resp).as_str()), (413, "request body is larger than 16777216 bytes (--max-body)"));
    // The slow client goes away: its slot is free again.
    drop(slow);
    let mut code = 0;
    for _ in 0..200 {
        code = srv.post("/v1/lower-bound", example.as_bytes()).0;
        if code == 200 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert_eq!(code, 200);
    let (_, text) = srv.get("/metrics");
    assert!(metric(&text, "graphene_requests_rejected_total ").is_some_and(|n| n >= 9.0), "{text}");
}

/// Every count a request can set is checked before any work, by the library's rules and with
/// the CLI's messages: the machine count in the query string and in the envelope of every
/// endpoint, a cluster's counts summed, a DAG's tasks; a TPC-H query that is not in the file is
/// refused; the work budgets (`improve`, `exact_nodes`) are bounded by --timeout and give their
/// worker back.
#[test]
fn counts_in_requests_are_checked_before_work() {
    let srv = Server::start(&["--workers", "1", "--timeout", "1s"]);
    let example = read("traces/example.json");
    let machines = "--machines: 1000000000 exceeds the limit of 100000 (raise it with --limit-machines)";
    let (code, schedule) = srv.post("/v1/schedule?no_timing=true&improve=0", example.as_bytes());
    assert_eq!(code, 200, "{schedule}");
    for (path, body) in [
        ("/v1/schedule?machines=1000000000", example.clone()),
        ("/v1/lower-bound", format!(r#"{{"dag": {example}, "machines": 1000000000}}"#)),
        ("/v1/validate", format!(r#"{{"dag": {example}, "schedule": {schedule}, "machines": 1000000000}}"#)),
    ] {
        let (code, resp) = srv.post(path, body.as_bytes());
        assert_eq!((code, error_of(&resp).as_str()), (413, machines), "{path}");
    }
    // The CLI says the same under its own (higher) limit.
    let dir = tempdir();
    write(dir.path(), "dag.json", &example);
    let cli = cli_in(dir.path(), &["build-schedule", "dag.json", "--machines", "1000000000", "-q"]);
    assert_eq!(cli.stderr, format!("error: {}\n", machines.replace("100000 ", "1000000 ")));
    let (code, resp) = srv.post("/v1/schedule?machines=18446744073709551616", example.as_bytes());
    assert_eq!(code, 400, "{resp}");
    let group = r#"{"count": 60000, "capacity": {"cpu": 16, "mem": 64, "disk": 200, "net": 1250}}"#;
    let cluster = format!(r#"{{"machines": [{group}, {group}]}}"#);
    let (code, resp) = srv.post("/v1/lower-bound", format!(r#"{{"dag": {example}, "cluster": {cluster}}}"#).as_bytes());
    assert_eq!(
        (code, error_of(&resp).as_str()),
        (413, "cluster.json: machines[1].count: 120000 exceeds the limit of 100000 (raise it with --limit-machines)")
    );
    let tpch = read("tests/data/tpch-2g-q6.json");
    let (code, resp) = srv.post("/v1/lower-bound?query=4294967295", tpch.as_bytes());
    assert_eq!(code, 422, "{resp}");
    assert!(error_of(&resp).contains("query 4294967295 is not in this file"), "{resp}");
    // Budgets of 2^64-1: the search stops at --timeout and the worker is free for the next one.
    let budgets = "improve=18446744073709551614&exact=true&exact_nodes=18446744073709551615";
    let (code, resp) = srv.post(&format!("/v1/schedule?{budgets}"), example.as_bytes());
    assert!(code == 200 || (code == 503 && error_of(&resp) == "not finished within 1s (--timeout)"), "{code} {resp}");
    let (code, resp) = srv.post("/v1/lower-bound", example.as_bytes());
    assert_eq!(code, 200, "{resp}");
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// At --max-connections the connection idle longest goes first, counted from the end of its
/// last request: a kept-alive connection opened first but used since outlives the half-open
/// connections opened after it.
#[test]
fn the_connection_idle_longest_is_closed_first() {
    let srv = Server::start(&["--max-connections", "4", "--header-timeout", "60s"]);
    let addr = addr_of(&srv);
    // GET `path` on a kept-alive connection: the body.
    let get = |s: &mut std::net::TcpStream, path: &str| -> String {
        use std::io::{Read, Write};
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            let text = String::from_utf8_lossy(&got).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())
                    })
                    .expect("a content-length");
                if body.len() >= len {
                    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                    return body.to_string();
                }
            }
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed: {text}");
            got.extend_from_slice(&buf[..n]);
        }
    };
    let mut kept = std::net::TcpStream::connect(&addr).unwrap();
    assert_eq!(get(&mut kept, "/healthz"), "ok\n");
    let mut idle: Vec<_> = (0..3).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    // Once the server has the four, the first connection's latest request makes it the most
    // recently active of them.
    while metric(&get(&mut kept, "/metrics"), "graphene_connections_open ") != Some(4.0) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Two more connections close the two half-open ones idle longest.
    let _more: Vec<_> = (0..2).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    for s in &mut idle[..2] {
        assert_eq!(until_closed(s), "");
    }
    assert_eq!(get(&mut kept, "/healthz"), "ok\n");
    let (code, stderr) = srv.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A compressed Spark log is read from a body by its codec's magic number, as from a file by its
/// extension: a corrupt one gets the reader's message (naming the block) and a 4xx; `name` names
/// a nameless DAG and is checked.
#[test]
fn compressed_bodies_are_read_and_names_are_checked() {
    let srv = Server::start(&[]);
    for codec in ["lz4", "zstd", "snappy"] {
        let raw = std::fs::read(repo(&format!("tests/data/spark/tpch-q3.{codec}"))).unwrap();
        let (code, resp) = srv.post("/v1/lower-bound?machines=4", &raw);
        assert_eq!(code, 200, "{codec}: {resp}");
        // Cut short: the codec's own message, naming the request's DAG file.
        let (code, resp) = srv.post("/v1/lower-bound?machines=4", &raw[..raw.len() / 2]);
        assert!((400..500).contains(&code), "{codec}: {code} {resp}");
        let e = error_of(&resp);
        assert!(e.starts_with("dag.json: ") && e.contains(codec.trim_end_matches("d")), "{codec}: {e}");
    }
    let stg = read("tests/data/task-graphs/fork-join.stg");
    let (code, resp) = srv.post("/v1/lower-bound?name=nightly-etl", stg.as_bytes());
    assert_eq!(code, 200, "{resp}");
    assert!(resp.contains("\"dag\": \"nightly-etl\""), "{resp}");
    let (code, resp) = srv.post("/v1/lower-bound?name=a%0Ab", stg.as_bytes());
    assert_eq!(code, 400, "{resp}");
    assert!(error_of(&resp).contains("name: a DAG's name is 1 to 256 bytes"), "{resp}");
}
