//! Cluster utilization over time of one replay, from its `summary.json`.
//!
//! The replay already reports utilization as interval means (the share of the cluster's
//! capacity in use per resource, and the mean number of running tasks), so the chart draws
//! those as step lines rather than recomputing them from the realized schedule.

use std::path::Path;

use plotters::prelude::*;
use serde::Deserialize;

use super::style::{self, color, draw_err, nice_max, Legend, Mark};
use crate::error::{Error, Result};

#[derive(Clone, Debug, Deserialize)]
pub struct PointIn {
    pub t: f64,
    pub used: Vec<f64>,
    pub running: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct SummaryIn {
    pub jobs: usize,
    pub makespan: f64,
    pub resources: Vec<String>,
    #[serde(default)]
    pub mean_utilization: Vec<f64>,
    pub utilization: Vec<PointIn>,
}

/// The parts of a replay's `summary.json` the charts use.
#[derive(Clone, Debug, Deserialize)]
pub struct ReplaySummary {
    #[serde(default)]
    pub trace: String,
    #[serde(default)]
    pub scheduler: String,
    #[serde(default)]
    pub machines: usize,
    #[serde(default)]
    pub seed: Option<u64>,
    pub summary: SummaryIn,
}

impl ReplaySummary {
    pub fn parse(text: &str) -> Result<ReplaySummary> {
        let s: ReplaySummary = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        let dims = s.summary.resources.len();
        for (i, p) in s.summary.utilization.iter().enumerate() {
            if p.used.len() != dims {
                return Err(Error::field(
                    format!("summary.utilization[{i}].used"),
                    format!("has {} values but there are {dims} resources", p.used.len()),
                ));
            }
            if !(p.t.is_finite() && p.running.is_finite() && p.used.iter().all(|u| u.is_finite())) {
                return Err(Error::field(format!("summary.utilization[{i}]"), "values must be finite numbers"));
            }
        }
        if !s.summary.makespan.is_finite() || s.summary.makespan < 0.0 {
            return Err(Error::field("summary.makespan", format!("{} is not a time >= 0", s.summary.makespan)));
        }
        Ok(s)
    }

    /// Reads `dir/summary.json` of a replay output directory.
    pub fn load(dir: &Path) -> Result<ReplaySummary> {
        let path = dir.join("summary.json");
        let text = crate::formats::read_text(&path)?;
        ReplaySummary::parse(&text).map_err(|e| e.in_file(&path))
    }
}

/// Step line through interval means: each value holds from its interval's start to the next.
fn steps(ts: &[f64], end: f64, v: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(2 * ts.len());
    for i in 0..ts.len() {
        let b = ts.get(i + 1).copied().unwrap_or(end);
        pts.push((ts[i], v(i)));
        pts.push((b, v(i)));
    }
    pts
}

pub fn usage(s: &ReplaySummary, note: &str) -> Result<String> {
    let sum = &s.summary;
    let ts: Vec<f64> = sum.utilization.iter().map(|p| p.t).collect();
    let end = sum.makespan.max(ts.last().copied().unwrap_or(0.0));
    let xmax = nice_max(end);
    let peak = sum.utilization.iter().flat_map(|p| p.used.iter()).fold(0.0f64, |a, &u| a.max(u)) * 100.0;
    let ymax = if peak <= 100.0 { 100.0 } else { nice_max(peak) };
    let running_max = nice_max(sum.utilization.iter().map(|p| p.running).fold(0.0, f64::max));
    let title = format!(
        "{} on {}: {} jobs, {} machines, makespan {:.0} s",
        if s.scheduler.is_empty() { "replay" } else { &s.scheduler },
        if s.trace.is_empty() { "?" } else { &s.trace },
        sum.jobs,
        s.machines,
        sum.makespan
    );
    style::render(note, |area| {
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 * 62 / 100);
        let mut chart = ChartBuilder::on(&top)
            .caption(&title, (style::FONT, 20))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..xmax, 0f64..ymax)
            .map_err(draw_err)?;
        style::mesh(&mut chart, "time [s]", "cluster capacity in use [%]").draw().map_err(draw_err)?;
        let mut legend = Vec::new();
        for (r, name) in sum.resources.iter().enumerate() {
            let pts = steps(&ts, end, |i| sum.utilization[i].used[r] * 100.0);
            chart.draw_series(LineSeries::new(pts, color(r).stroke_width(2))).map_err(draw_err)?;
            let mean = sum.mean_utilization.get(r).map_or(String::new(), |m| format!(" (mean {:.0}%)", m * 100.0));
            legend.push((format!("{name}{mean}"), Mark::Line(color(r))));
        }
        let mut chart = ChartBuilder::on(&bottom)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..xmax, 0f64..running_max)
            .map_err(draw_err)?;
        style::mesh(&mut chart, "time [s]", "running tasks").draw().map_err(draw_err)?;
        let pts = steps(&ts, end, |i| sum.utilization[i].running);
        chart.draw_series(LineSeries::new(pts, BLACK.stroke_width(2))).map_err(draw_err)?;
        legend.push(("running tasks (lower chart)".into(), Mark::Line(BLACK)));
        Ok(Legend { title: "resources".into(), entries: legend })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_means_become_steps_up_to_the_end() {
        assert_eq!(steps(&[0.0, 2.0], 3.0, |i| i as f64), vec![(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (3.0, 1.0)]);
    }

    #[test]
    fn a_point_without_every_resource_is_named() {
        let text = r#"{"summary": {"jobs": 1, "makespan": 2, "resources": ["cpu", "mem"],
            "utilization": [{"t": 0, "used": [0.5, 0.5], "running": 1}, {"t": 1, "used": [0.5], "running": 1}]}}"#;
        let e = ReplaySummary::parse(text).unwrap_err().to_string();
        assert_eq!(e, "summary.utilization[1].used: has 1 values but there are 2 resources");
    }
}
