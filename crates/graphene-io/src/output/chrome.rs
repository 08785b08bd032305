//! Schedules and replays as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev, its trace
//! processor) and chrome://tracing open, and which stays usable at 10^5-10^6 tasks where an SVG
//! does not.
//!
//! Layout: each machine is a process (`pid` = machine + 1, named `machine M`); each task is a
//! complete event (`ph: X`) on a thread of its machine (`tid` = slot + 1, named `slot S`), where
//! slots are the fewest lanes that keep a machine's tasks from overlapping (tasks take them in
//! order of start, each the lowest free one). A task's name is its stage, so a stage's tasks
//! share a colour; `args` hold the job, stage and task id. Counters (`ph: C`) give, per machine,
//! the resources its running tasks hold (absolute units, one series per resource) at every
//! change, and process 0 (`cluster`) gives the cluster's total the same way plus the number of
//! running tasks. Times are microseconds (`ts`, `dur`) from the schedule's zero. The output is
//! the same bytes for the same input.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use serde::Serialize;

use crate::model::{ResVec, MAX_RESOURCES};

/// One task as it ran.
#[derive(Clone, Debug)]
pub struct Slice {
    pub job: Option<String>,
    pub stage: String,
    pub task: String,
    pub machine: u32,
    pub start: f64,
    pub end: f64,
    /// What the task held (None: unknown, no resource counters).
    pub demand: Option<ResVec>,
}

#[derive(Serialize)]
struct Args<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<&'a str>,
    stage: &'a str,
    task: &'a str,
}

#[derive(Serialize)]
struct Complete<'a> {
    name: &'a str,
    cat: &'a str,
    ph: &'static str,
    ts: f64,
    dur: f64,
    pid: u32,
    tid: u32,
    args: Args<'a>,
}

#[derive(Serialize)]
struct Meta<'a> {
    name: &'static str,
    ph: &'static str,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<u32>,
    args: MetaArgs<'a>,
}

#[derive(Serialize)]
struct MetaArgs<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sort_index: Option<u32>,
}

#[derive(Serialize)]
struct Counter<'a> {
    name: &'a str,
    ph: &'static str,
    ts: f64,
    pid: u32,
    args: serde_json::Map<String, serde_json::Value>,
}

fn us(seconds: f64) -> f64 {
    // Microseconds, kept to nanosecond precision so that printing is short and stable.
    (seconds * 1e9).round() / 1e3
}

/// Pushes one JSON value and a separator onto `out`.
fn push<T: Serialize>(out: &mut Vec<u8>, first: &mut bool, v: &T) {
    if !*first {
        out.extend_from_slice(b",\n");
    }
    *first = false;
    serde_json::to_writer(&mut *out, v).expect("trace events serialize");
}

/// Usage changes (time, +/- demand) folded into counter events: one per distinct time.
fn counters(
    out: &mut Vec<u8>,
    first: &mut bool,
    pid: u32,
    name: &str,
    resources: &[String],
    mut changes: Vec<(f64, bool, ResVec)>,
    with_running: bool,
) {
    // Ends before starts at the same instant: a slot handed over is not double-counted.
    changes.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut used = [0.0f64; MAX_RESOURCES];
    let mut running: i64 = 0;
    let mut i = 0;
    while i < changes.len() {
        let t = changes[i].0;
        while i < changes.len() && changes[i].0 == t {
            let (_, start, d) = &changes[i];
            for (r, u) in used.iter_mut().enumerate().take(resources.len()) {
                *u += if *start { d.0[r] } else { -d.0[r] };
                if u.abs() < 1e-9 {
                    *u = 0.0;
                }
            }
            running += if *start { 1 } else { -1 };
            i += 1;
        }
        let mut args = serde_json::Map::new();
        for (r, n) in resources.iter().enumerate() {
            args.insert(n.clone(), serde_json::json!((used[r] * 1e6).round() / 1e6));
        }
        if with_running {
            args.insert("running tasks".into(), serde_json::json!(running));
        }
        push(out, first, &Counter { name, ph: "C", ts: us(t), pid, args });
    }
}

/// The trace of `slices` on `machines` machines; `resources` names the demand vectors' entries.
pub fn write(name: &str, resources: &[String], machines: u32, slices: &[Slice]) -> Vec<u8> {
    let mut out = Vec::with_capacity(slices.len() * 160 + 1024);
    out.extend_from_slice(b"{\"displayTimeUnit\": \"ms\", \"otherData\": ");
    serde_json::to_writer(&mut out, &serde_json::json!({"source": "graphene", "name": name})).expect("json");
    out.extend_from_slice(b", \"traceEvents\": [\n");
    let mut first = true;
    fn meta<'a>(pid: u32, tid: Option<u32>, name: &'static str, label: Option<&'a str>, sort: Option<u32>) -> Meta<'a> {
        Meta { name, ph: "M", pid, tid, args: MetaArgs { name: label, sort_index: sort } }
    }
    push(&mut out, &mut first, &meta(0, None, "process_name", Some("cluster"), None));
    push(&mut out, &mut first, &meta(0, None, "process_sort_index", None, Some(0)));
    // Per machine, in order of start (then end, then input position): slots by lowest free lane.
    let mut by_machine: Vec<Vec<usize>> = vec![Vec::new(); machines as usize];
    for (i, s) in slices.iter().enumerate() {
        if (s.machine as usize) < by_machine.len() {
            by_machine[s.machine as usize].push(i);
        }
    }
    let has_demand = slices.iter().all(|s| s.demand.is_some()) && !slices.is_empty();
    let mut cluster_changes = Vec::with_capacity(if has_demand { slices.len() * 2 } else { 0 });
    for (m, tasks) in by_machine.iter_mut().enumerate() {
        if tasks.is_empty() {
            continue;
        }
        let pid = m as u32 + 1;
        let label = format!("machine {m}");
        push(&mut out, &mut first, &meta(pid, None, "process_name", Some(&label), None));
        push(&mut out, &mut first, &meta(pid, None, "process_sort_index", None, Some(pid)));
        tasks.sort_by(|&a, &b| {
            let (x, y) = (&slices[a], &slices[b]);
            x.start.total_cmp(&y.start).then(x.end.total_cmp(&y.end)).then(a.cmp(&b))
        });
        let mut free: BTreeSet<u32> = BTreeSet::new();
        let mut busy: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
        let mut lanes = 0u32;
        let mut events = Vec::with_capacity(tasks.len());
        for &i in tasks.iter() {
            let s = &slices[i];
            while let Some(Reverse((end, lane))) = busy.peek().copied() {
                if f64::from_bits(end) <= s.start {
                    busy.pop();
                    free.insert(lane);
                } else {
                    break;
                }
            }
            let lane = match free.pop_first() {
                Some(l) => l,
                None => {
                    lanes += 1;
                    lanes - 1
                }
            };
            // Non-negative finite ends order as their bit patterns.
            busy.push(Reverse((s.end.max(0.0).to_bits(), lane)));
            events.push((i, lane));
        }
        for lane in 0..lanes {
            let slot = format!("slot {lane}");
            push(&mut out, &mut first, &meta(pid, Some(lane + 1), "thread_name", Some(&slot), None));
        }
        for (i, lane) in events {
            let s = &slices[i];
            let ev = Complete {
                name: &s.stage,
                cat: s.job.as_deref().unwrap_or("task"),
                ph: "X",
                ts: us(s.start),
                dur: us(s.end) - us(s.start),
                pid,
                tid: lane + 1,
                args: Args { job: s.job.as_deref(), stage: &s.stage, task: &s.task },
            };
            push(&mut out, &mut first, &ev);
        }
        if has_demand {
            let changes: Vec<(f64, bool, ResVec)> = tasks
                .iter()
                .flat_map(|&i| {
                    let s = &slices[i];
                    let d = s.demand.expect("checked");
                    [(s.start, true, d), (s.end, false, d)]
                })
                .collect();
            cluster_changes.extend(changes.iter().copied());
            counters(&mut out, &mut first, pid, "in use", resources, changes, false);
        }
    }
    if has_demand {
        counters(&mut out, &mut first, 0, "in use", resources, cluster_changes, true);
    } else {
        let changes =
            slices.iter().flat_map(|s| [(s.start, true, ResVec::ZERO), (s.end, false, ResVec::ZERO)]).collect();
        counters(&mut out, &mut first, 0, "in use", &[], changes, true);
    }
    out.extend_from_slice(b"\n]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(stage: &str, machine: u32, start: f64, end: f64, cpu: f64) -> Slice {
        Slice {
            job: Some("j".into()),
            stage: stage.into(),
            task: format!("{stage}[0]"),
            machine,
            start,
            end,
            demand: Some(ResVec::from_slice(&[cpu])),
        }
    }

    #[test]
    fn slots_counters_and_metadata() {
        let s = vec![
            slice("a", 0, 0.0, 2.0, 1.0),
            slice("b", 0, 1.0, 3.0, 2.0),
            slice("c", 0, 2.0, 4.0, 1.0), // takes slot 0 again (a ended at 2)
            slice("d", 1, 0.5, 1.0, 4.0),
        ];
        let text = String::from_utf8(write("t", &["cpu".into()], 2, &s)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let xs: Vec<(&str, u64, u64, f64, f64)> = ev
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                (
                    e["name"].as_str().unwrap(),
                    e["pid"].as_u64().unwrap(),
                    e["tid"].as_u64().unwrap(),
                    e["ts"].as_f64().unwrap(),
                    e["dur"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            xs,
            [("a", 1, 1, 0.0, 2e6), ("b", 1, 2, 1e6, 2e6), ("c", 1, 1, 2e6, 2e6), ("d", 2, 1, 0.5e6, 0.5e6)]
        );
        // Machine 0's cpu in use at 0, 1, 2, 3, 4 s: 1, 3, 3 (a ends as c starts), 1, 0.
        let m0: Vec<f64> =
            ev.iter().filter(|e| e["ph"] == "C" && e["pid"] == 1).map(|e| e["args"]["cpu"].as_f64().unwrap()).collect();
        assert_eq!(m0, [1.0, 3.0, 3.0, 1.0, 0.0]);
        let names: Vec<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["slot 0", "slot 1", "slot 0"]);
        let peak = ev
            .iter()
            .filter(|e| e["ph"] == "C" && e["pid"] == 0)
            .map(|e| e["args"]["running tasks"].as_i64().unwrap())
            .max();
        assert_eq!(peak, Some(2));
        assert_eq!(write("t", &["cpu".into()], 2, &s), text.as_bytes());
    }
}
