//! Gantt chart of a schedule report (`build-schedule --out`).
//!
//! A machine runs several tasks at once, so each lane is split into tracks (greedy interval
//! colouring) and a task is a bar on one track; bars are coloured by stage. Past `max_lanes`
//! machines, consecutive machines share a lane (their tasks still get their own tracks), which
//! keeps 500 machines readable as a density picture. `--by resource` draws instead, per machine
//! and resource, the share of capacity in use over time. Lower bounds and the makespan are
//! vertical lines; the tasks the report flags troublesome are outlined in black.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use plotters::prelude::*;
use serde::Deserialize;

use super::style::{self, color, draw_err, nice_max, Legend, Mark};
use crate::error::{Error, Result};
use crate::formats::schedule_file::{check_tasks, TaskIn};
use crate::model::{Cluster, Dag, TaskId};

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct BoundsIn {
    pub critical_path: f64,
    pub total_work: f64,
    pub stage_aware: f64,
}

/// The part of a search report the chart checks its troublesome flags against.
#[derive(Clone, Debug, Deserialize)]
pub struct PartIn {
    /// Sizes of T, S, P, C.
    #[serde(default)]
    pub subset_sizes: [usize; 4],
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct SearchIn {
    #[serde(default)]
    pub parts: Vec<PartIn>,
}

/// The fields of a schedule report a Gantt chart uses; all but `tasks` are optional so that
/// schedules from elsewhere can be drawn too.
#[derive(Clone, Debug, Deserialize)]
pub struct ScheduleIn {
    #[serde(default)]
    pub dag: String,
    #[serde(default)]
    pub scheduler: String,
    #[serde(default)]
    pub makespan: Option<f64>,
    #[serde(default)]
    pub lower_bounds: Option<BoundsIn>,
    #[serde(default)]
    pub machines: Option<usize>,
    pub tasks: Vec<TaskIn>,
    #[serde(default)]
    pub search: Option<SearchIn>,
}

impl ScheduleIn {
    pub fn parse(text: &str) -> Result<ScheduleIn> {
        let s: ScheduleIn = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        check_tasks(&s.tasks, s.machines)?;
        Ok(s)
    }

    pub fn load(path: &Path) -> Result<ScheduleIn> {
        let text = crate::formats::read_text(path)?;
        ScheduleIn::parse(&text).map_err(|e| e.in_file(path))
    }

    fn machine_count(&self) -> usize {
        let used = self.tasks.iter().map(|t| t.machine as usize + 1).max().unwrap_or(1);
        self.machines.unwrap_or(used).max(used)
    }
}

crate::named_enum! {
    /// What a lane holds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Lanes {
        /// One lane per machine: its tasks as bars.
        Machine = "machine",
        /// One lane per machine and resource: the share of capacity in use.
        Resource = "resource",
    }
}

#[derive(Clone, Debug)]
pub struct GanttOptions {
    pub by: Lanes,
    /// More machines than this share lanes.
    pub max_lanes: usize,
    /// The provenance line under the chart.
    pub note: String,
}

/// The DAG and cluster a schedule was built for: needed for `Lanes::Resource` (demands and
/// capacities), and checked against the schedule's task names and machines.
pub struct Context<'a> {
    pub dag: &'a Dag,
    pub cluster: &'a Cluster,
}

pub struct Gantt {
    pub svg: String,
    pub lanes: usize,
    pub troublesome: usize,
    /// Why something the chart could show is missing (e.g. no troublesome marks).
    pub warnings: Vec<String>,
}

/// Lane `i` of `n` is centred at y = n - 1 - i, so the first lane is on top.
fn lane_y(i: usize, n: usize) -> f64 {
    (n - 1 - i) as f64
}

/// Greedy interval colouring: the track of every interval, and the number of tracks.
fn tracks(intervals: &[(f64, f64)]) -> (Vec<usize>, usize) {
    let mut idx: Vec<usize> = (0..intervals.len()).collect();
    idx.sort_by(|&a, &b| intervals[a].0.total_cmp(&intervals[b].0).then(intervals[a].1.total_cmp(&intervals[b].1)));
    let mut out = vec![0; intervals.len()];
    // Validated times are >= 0, so their bit patterns order like the numbers.
    let mut busy: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    let mut count = 0;
    for i in idx {
        let (s, e) = intervals[i];
        while let Some(&Reverse((end, t))) = busy.peek() {
            if f64::from_bits(end) > s {
                break;
            }
            busy.pop();
            free.push(Reverse(t));
        }
        let t = match free.pop() {
            Some(Reverse(t)) => t,
            None => {
                count += 1;
                count - 1
            }
        };
        out[i] = t;
        busy.push(Reverse((e.to_bits(), t)));
    }
    (out, count)
}

pub fn gantt(s: &ScheduleIn, ctx: Option<&Context>, opts: &GanttOptions) -> Result<Gantt> {
    let mut warnings = Vec::new();
    let machines = match ctx {
        Some(c) => {
            let used = s.machine_count();
            if used > c.cluster.len() || s.machines.is_some_and(|m| m != c.cluster.len()) {
                return Err(Error::Usage(format!(
                    "the schedule uses {used} machines but the cluster has {}; pass the cluster it was built for",
                    c.cluster.len()
                )));
            }
            c.cluster.len()
        }
        None => s.machine_count(),
    };
    let ids: Vec<Option<TaskId>> = match ctx {
        Some(c) => {
            let names: HashMap<String, TaskId> = (0..c.dag.len() as TaskId).map(|t| (c.dag.task_name(t), t)).collect();
            s.tasks
                .iter()
                .enumerate()
                .map(|(i, t)| match names.get(&t.id) {
                    Some(&x) => Ok(Some(x)),
                    None => Err(Error::field(
                        format!("tasks[{i}].id"),
                        format!("'{}' is not a task of DAG '{}'", t.id, c.dag.name),
                    )),
                })
                .collect::<Result<_>>()?
        }
        None => vec![None; s.tasks.len()],
    };
    let group = machines.div_ceil(opts.max_lanes.max(1)).max(1);
    let machine_lanes = machines.div_ceil(group);
    let machine_label = |l: usize| {
        if group == 1 {
            format!("m{l}")
        } else {
            format!("m{}-{}", l * group, ((l + 1) * group).min(machines) - 1)
        }
    };

    // Stages in DAG order when known, else in order of first appearance.
    let mut stages: Vec<String> = match ctx {
        Some(c) => c.dag.stages.iter().map(|st| st.name.clone()).collect(),
        None => Vec::new(),
    };
    let mut stage_of: HashMap<String, usize> = stages.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
    let task_stage: Vec<usize> = s
        .tasks
        .iter()
        .map(|t| {
            let name = t.stage_name().to_string();
            *stage_of.entry(name.clone()).or_insert_with(|| {
                stages.push(name);
                stages.len() - 1
            })
        })
        .collect();

    let marks: Vec<bool> = s.tasks.iter().map(|t| t.troublesome).collect();
    let marked = marks.iter().filter(|&&m| m).count();
    let reported: usize = s.search.iter().flat_map(|x| &x.parts).map(|p| p.subset_sizes[0]).sum();
    if marked != reported && s.search.is_some() {
        warnings.push(format!(
            "the search reports {reported} troublesome tasks but {marked} tasks are flagged troublesome"
        ));
    }

    let end = s.tasks.iter().map(|t| t.end).fold(0.0, f64::max);
    let makespan = s.makespan.unwrap_or(end);
    let bounds = s.lower_bounds;
    let bmax = bounds.map_or(0.0, |b| b.critical_path.max(b.total_work).max(b.stage_aware));
    let xmax = nice_max(end.max(makespan).max(bmax));

    let resources: Vec<String> = match (opts.by, ctx) {
        (Lanes::Machine, _) => Vec::new(),
        (Lanes::Resource, Some(c)) => c.cluster.resources.clone(),
        (Lanes::Resource, None) => {
            return Err(Error::Usage("lanes by resource need the DAG (--dag) for the tasks' demands".into()))
        }
    };
    let per_machine = resources.len().max(1);
    let lanes = machine_lanes * per_machine;
    let label = |l: usize| match opts.by {
        Lanes::Machine => machine_label(l),
        Lanes::Resource => format!("{} {}", machine_label(l / per_machine), resources[l % per_machine]),
    };

    let title = format!(
        "{} on {}: makespan {:.1} s, {} tasks, {} machines",
        if s.scheduler.is_empty() { "schedule" } else { &s.scheduler },
        if s.dag.is_empty() { "?" } else { &s.dag },
        makespan,
        s.tasks.len(),
        machines
    );
    let svg = style::render(&opts.note, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(&title, (style::FONT, 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(if opts.by == Lanes::Resource || group > 1 { 110 } else { 60 })
            .build_cartesian_2d(0f64..xmax, -0.5f64..lanes as f64 - 0.5)
            .map_err(draw_err)?;
        let lane_names: Vec<String> = (0..lanes).map(label).collect();
        let y_desc = match (opts.by, group) {
            (Lanes::Machine, 1) => "machine".to_string(),
            (Lanes::Machine, g) => format!("machines ({g} per lane)"),
            (Lanes::Resource, _) => "machine, resource (bar height = share of capacity)".to_string(),
        };
        style::mesh(&mut chart, "time [s]", &y_desc)
            .disable_y_mesh()
            .y_labels(lanes.min(40))
            .y_label_formatter(&|y| {
                let r = y.round();
                if (y - r).abs() > 1e-6 || r < 0.0 || r as usize >= lanes {
                    return String::new();
                }
                lane_names[lanes - 1 - r as usize].clone()
            })
            .draw()
            .map_err(draw_err)?;

        let mut legend = Vec::new();
        match opts.by {
            Lanes::Machine => {
                let mut by_lane: Vec<Vec<usize>> = vec![Vec::new(); machine_lanes];
                for (i, t) in s.tasks.iter().enumerate() {
                    by_lane[t.machine as usize / group].push(i);
                }
                let mut bars = Vec::with_capacity(s.tasks.len());
                let mut outlines = Vec::new();
                for (lane, members) in by_lane.iter().enumerate() {
                    let iv: Vec<(f64, f64)> = members.iter().map(|&i| (s.tasks[i].start, s.tasks[i].end)).collect();
                    let (track, n) = tracks(&iv);
                    let h = 0.8 / n.max(1) as f64;
                    let gap = if n <= 20 { h * 0.12 } else { 0.0 };
                    let top = lane_y(lane, lanes) + 0.4;
                    for (k, &i) in members.iter().enumerate() {
                        let t = &s.tasks[i];
                        let y1 = top - track[k] as f64 * h;
                        let rect = [(t.start, y1 - gap), (t.end, y1 - h + gap)];
                        bars.push(Rectangle::new(rect, color(task_stage[i]).filled()));
                        if marks[i] {
                            outlines.push(Rectangle::new(rect, BLACK.stroke_width(2)));
                        }
                    }
                }
                chart.draw_series(bars).map_err(draw_err)?;
                chart.draw_series(outlines).map_err(draw_err)?;
            }
            Lanes::Resource => {
                let c = ctx.expect("checked above");
                let mut rects = Vec::new();
                for ml in 0..machine_lanes {
                    let ms = ml * group..((ml + 1) * group).min(machines);
                    for (r, _) in resources.iter().enumerate() {
                        let cap: f64 = ms.clone().map(|m| c.cluster.machines[m].0[r]).sum();
                        if cap <= 0.0 {
                            continue;
                        }
                        let mut events: Vec<(f64, f64)> = Vec::new();
                        for (i, t) in s.tasks.iter().enumerate() {
                            if ms.contains(&(t.machine as usize)) {
                                let d = c.dag.tasks[ids[i].expect("ids known with a DAG") as usize].demand.0[r] / cap;
                                if d > 0.0 && t.end > t.start {
                                    events.push((t.start, d));
                                    events.push((t.end, -d));
                                }
                            }
                        }
                        events.sort_by(|a, b| a.0.total_cmp(&b.0));
                        let base = lane_y(ml * per_machine + r, lanes) - 0.4;
                        let mut used = 0.0;
                        for w in 0..events.len() {
                            used += events[w].1;
                            let (a, b) = (events[w].0, events.get(w + 1).map_or(events[w].0, |e| e.0));
                            if b > a && used > 1e-9 {
                                // Overbooked time shows as a bar taller than the lane, capped at 1.2.
                                let h = 0.8 * used.min(1.2);
                                rects.push(Rectangle::new([(a, base), (b, base + h)], color(r).filled()));
                            }
                        }
                    }
                }
                chart.draw_series(rects).map_err(draw_err)?;
            }
        }

        let mut lines: Vec<(String, f64, RGBColor, bool)> =
            vec![("makespan".into(), makespan, RGBColor(200, 0, 0), false)];
        if let Some(b) = bounds {
            lines.push(("critical path".into(), b.critical_path, BLACK, true));
            lines.push(("total work".into(), b.total_work, RGBColor(110, 110, 110), true));
            lines.push(("stage-aware".into(), b.stage_aware, RGBColor(0, 0, 150), true));
        }
        for (name, x, c, dashed) in &lines {
            let pts = vec![(*x, -0.5), (*x, lanes as f64 - 0.5)];
            if *dashed {
                chart.draw_series(DashedLineSeries::new(pts, 8, 5, c.stroke_width(2))).map_err(draw_err)?;
            } else {
                chart.draw_series(LineSeries::new(pts, c.stroke_width(2))).map_err(draw_err)?;
            }
            let what = if *dashed { "lower bound: " } else { "" };
            legend.push((format!("{what}{name} {x:.1} s"), Mark::Line(*c)));
        }
        match opts.by {
            Lanes::Machine => {
                if marked > 0 {
                    legend.push((format!("troublesome task ({marked})"), Mark::Outline(BLACK)));
                }
                legend.extend(stages.iter().enumerate().map(|(i, n)| (n.clone(), Mark::Box(color(i)))));
                Ok(Legend { title: "stages and bounds".into(), entries: legend })
            }
            Lanes::Resource => {
                legend.extend(resources.iter().enumerate().map(|(i, n)| (n.clone(), Mark::Box(color(i)))));
                Ok(Legend { title: "resources and bounds".into(), entries: legend })
            }
        }
    })?;
    Ok(Gantt { svg, lanes, troublesome: marked, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_tasks_get_separate_tracks_and_reuse_freed_ones() {
        let (t, n) = tracks(&[(0.0, 10.0), (0.0, 5.0), (5.0, 8.0), (9.0, 12.0), (10.0, 11.0)]);
        assert_eq!(n, 2);
        assert_eq!(t, vec![1, 0, 0, 0, 1]);
    }

    #[test]
    fn bad_machine_and_times_are_named_by_field() {
        let e = ScheduleIn::parse(r#"{"machines": 2, "tasks": [{"id": "a[0]", "machine": 2, "start": 0, "end": 1}]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "tasks[0].machine: 2 is not one of 2 machines (0..1)");
        let e = ScheduleIn::parse(r#"{"tasks": [{"id": "a[0]", "machine": 0, "start": 3, "end": 1}]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "tasks[0]: task 'a[0]' has start 3 and end 1; need finite times, 0 <= start <= end");
    }
}
