//! CDFs across jobs or DAGs: the per-job JCT gap of several replays against a baseline replay
//! (the paper's main online figure), and makespan / lower bound per offline scheduler from
//! `graphene compare --csv`.

use std::path::Path;

use plotters::prelude::*;

use super::style::{self, color, draw_err, Legend, Mark};
use crate::error::{Error, Result};
use crate::metrics::quantile;

crate::named_enum! {
    /// What is on the x axis.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Metric {
        /// Per-job JCT reduction against the baseline, (base - jct) / base in percent: positive means
        /// the job finished sooner than under the baseline.
        Jct = "jct",
        /// Per-job slowdown against the baseline, jct / base: above 1 means the job took longer.
        Slowdown = "slowdown",
        /// Makespan / best lower bound per DAG, one line per scheduler of a `compare --csv` file.
        Ratio = "ratio",
        /// Per-workload gains in percent, one line per `series` of a CSV with columns `series` and
        /// `gain` (what `scripts/bench-online-robust` writes: graphene's median per-job JCT gain
        /// over each baseline, one row per workload).
        Gain = "gain",
    }
}

/// Job completion times of one replay, in trace order.
#[derive(Clone, Debug)]
pub struct JobsIn {
    /// The scheduler named in `summary.json`, else the directory's name.
    pub label: String,
    pub dir: String,
    pub jobs: Vec<(String, f64)>,
}

fn csv_err(path: &Path, e: csv::Error) -> Error {
    match e.position() {
        Some(p) => Error::Syntax { line: p.line() as usize, column: 1, message: e.to_string() }.in_file(path),
        // No position: the file could not be opened or read (a missing replay folder).
        None => match e.into_kind() {
            csv::ErrorKind::Io(io) => Error::Io(io).in_file(path),
            other => Error::Usage(format!("{other:?}")).in_file(path),
        },
    }
}

/// Indices of the named columns in a CSV header, or an error naming the missing one.
fn columns(path: &Path, headers: &csv::StringRecord, names: &[&str]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            headers.iter().position(|h| h == *n).ok_or_else(|| {
                Error::Syntax { line: 1, column: 0, message: format!("no '{n}' column in the header") }.in_file(path)
            })
        })
        .collect()
}

fn number(path: &Path, rec: &csv::StringRecord, col: usize, name: &str) -> Result<f64> {
    let line = rec.position().map_or(0, |p| p.line() as usize);
    let raw = rec.get(col).unwrap_or("");
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => {
            Err(Error::Syntax { line, column: 0, message: format!("{name} '{raw}' is not a finite number") }
                .in_file(path))
        }
    }
}

impl JobsIn {
    /// Reads `dir/jobs.csv` of a replay output directory, or `dir/jobs.parquet` of one written
    /// with `--format parquet` (and its scheduler from summary.json).
    pub fn load(dir: &Path) -> Result<JobsIn> {
        let path = dir.join("jobs.csv");
        let parquet = dir.join("jobs.parquet");
        let jobs = if !path.exists() && parquet.exists() {
            let jobs = crate::output::table::read_jobs(&parquet)?;
            if let Some((i, (_, jct))) = jobs.iter().enumerate().find(|(_, (_, j))| !j.is_finite() || *j < 0.0) {
                return Err(Error::Usage(format!("row {i}: jct {jct} is not a finite number >= 0")).in_file(&parquet));
            }
            jobs
        } else {
            Self::read_csv(&path)?
        };
        let scheduler = super::usage::ReplaySummary::load(dir).map(|s| s.scheduler).unwrap_or_default();
        let dir_name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        let label = if scheduler.is_empty() { dir_name } else { scheduler };
        Ok(JobsIn { label, dir: dir.display().to_string(), jobs })
    }

    fn read_csv(path: &Path) -> Result<Vec<(String, f64)>> {
        let path = path.to_path_buf();
        let mut rdr = csv::Reader::from_path(&path).map_err(|e| csv_err(&path, e))?;
        let headers = rdr.headers().map_err(|e| csv_err(&path, e))?.clone();
        let cols = columns(&path, &headers, &["job", "jct"])?;
        let mut jobs = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| csv_err(&path, e))?;
            let jct = number(&path, &rec, cols[1], "jct")?;
            if jct < 0.0 {
                let line = rec.position().map_or(0, |p| p.line() as usize);
                return Err(Error::Syntax { line, column: 0, message: format!("jct {jct} is negative") }.in_file(&path));
            }
            jobs.push((rec.get(cols[0]).unwrap_or("").to_string(), jct));
        }
        Ok(jobs)
    }
}

/// Per-job values of `run` against `base` (the same trace replayed twice: jobs pair up by
/// position and must carry the same names). Jobs whose baseline JCT is 0 are left out.
pub fn against(base: &JobsIn, run: &JobsIn, metric: Metric) -> Result<Vec<f64>> {
    if base.jobs.len() != run.jobs.len() {
        return Err(Error::Usage(format!(
            "{} has {} jobs but the baseline {} has {}: both must replay the same trace",
            run.dir,
            run.jobs.len(),
            base.dir,
            base.jobs.len()
        )));
    }
    let mut out = Vec::with_capacity(base.jobs.len());
    for (i, ((bn, b), (rn, r))) in base.jobs.iter().zip(&run.jobs).enumerate() {
        if bn != rn {
            return Err(Error::Usage(format!(
                "{}/jobs.csv line {}: job '{rn}' where the baseline has '{bn}': both must replay the same trace",
                run.dir,
                i + 2
            )));
        }
        if *b > 0.0 {
            out.push(match metric {
                Metric::Slowdown => r / b,
                _ => 100.0 * (b - r) / b,
            });
        }
    }
    Ok(out)
}

/// Makespan / lower bound per DAG, one series per scheduler in order of first appearance, from
/// the CSV `graphene compare --csv` prints.
pub fn load_compare(path: &Path) -> Result<Vec<(String, Vec<f64>)>> {
    load_series(path, "scheduler", "ratio")
}

/// One series of values per distinct `name_col`, in order of first appearance, from a CSV file.
pub fn load_series(path: &Path, name_col: &str, value_col: &str) -> Result<Vec<(String, Vec<f64>)>> {
    let mut rdr = csv::Reader::from_path(path).map_err(|e| csv_err(path, e))?;
    let headers = rdr.headers().map_err(|e| csv_err(path, e))?.clone();
    let cols = columns(path, &headers, &[name_col, value_col])?;
    let mut series: Vec<(String, Vec<f64>)> = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| csv_err(path, e))?;
        let name = rec.get(cols[0]).unwrap_or("").to_string();
        let ratio = number(path, &rec, cols[1], value_col)?;
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(ratio),
            None => series.push((name, vec![ratio])),
        }
    }
    if series.is_empty() {
        return Err(Error::Usage(format!("{}: no rows", path.display())));
    }
    Ok(series)
}

/// Points of the empirical CDF of `values` as a step line: the fraction of values <= x.
fn cdf_points(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut pts = Vec::with_capacity(2 * v.len());
    for (i, &x) in v.iter().enumerate() {
        pts.push((x, i as f64 / n));
        pts.push((x, (i + 1) as f64 / n));
    }
    pts
}

/// The x range: all values and `reference`, widened by 5%. When a few outliers stretch it to
/// more than 3 times the 1st-99th percentile range (one job 100x slower flattens every line
/// into a wall), the range is cut to those percentiles instead; the bool says so.
fn x_range(series: &[(String, Vec<f64>)], reference: f64) -> (f64, f64, bool) {
    let all = series.iter().flat_map(|(_, v)| v.iter().copied());
    let (lo, hi) = all.fold((reference, reference), |(a, b), x| (a.min(x), b.max(x)));
    let filled = series.iter().filter(|(_, v)| !v.is_empty());
    let (p1, p99) =
        filled.fold((reference, reference), |(a, b), (_, v)| (a.min(quantile(v, 0.01)), b.max(quantile(v, 0.99))));
    let clipped = hi - lo > 3.0 * (p99 - p1);
    let (lo, hi) = if clipped { (p1, p99) } else { (lo, hi) };
    let pad = ((hi - lo) * 0.05).max(1e-3);
    (lo - pad, hi + pad, clipped)
}

pub struct CdfChart<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    /// A vertical reference line (0 for gaps, 1 for ratios).
    pub reference: f64,
    /// Unit appended to the medians in the legend.
    pub unit: &'a str,
    pub note: &'a str,
}

/// One CDF line per series; series without values are listed in the legend as empty.
pub fn cdf(series: &[(String, Vec<f64>)], c: &CdfChart) -> Result<String> {
    let (lo, hi, clipped) = x_range(series, c.reference);
    let x_desc = if clipped {
        format!("{} (axis cut to the 1st-99th percentiles; lines pinned at its ends)", c.x_desc)
    } else {
        c.x_desc.to_string()
    };
    style::render(c.note, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(c.title, (style::FONT, 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(lo..hi, 0f64..1.0)
            .map_err(draw_err)?;
        style::mesh(&mut chart, &x_desc, "fraction").draw().map_err(draw_err)?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(c.reference, 0.0), (c.reference, 1.0)],
                6,
                4,
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(draw_err)?;
        // Drawn last to first so that the first series (the scheduler under study) is on top.
        for (i, (_, values)) in series.iter().enumerate().rev() {
            if !values.is_empty() {
                let pts = cdf_points(values).into_iter().map(|(x, y)| (x.clamp(lo, hi), y));
                chart.draw_series(LineSeries::new(pts, color(i).stroke_width(2))).map_err(draw_err)?;
            }
        }
        let legend = series
            .iter()
            .enumerate()
            .map(|(i, (name, values))| {
                let text = if values.is_empty() {
                    format!("{name} (no values)")
                } else {
                    let median = quantile(values, 0.5);
                    let digits = if c.unit == "%" { 1 } else { 3 };
                    format!("{name}: median {median:.digits$}{}, n={}", c.unit, values.len())
                };
                (text, Mark::Line(color(i)))
            })
            .collect();
        Ok(Legend { title: "series".into(), entries: legend })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(dir: &str, v: &[(&str, f64)]) -> JobsIn {
        JobsIn { label: dir.into(), dir: dir.into(), jobs: v.iter().map(|(n, j)| (n.to_string(), *j)).collect() }
    }

    #[test]
    fn gaps_and_slowdowns_pair_jobs_by_position_and_skip_zero_baselines() {
        let base = jobs("cs", &[("a", 10.0), ("b", 0.0), ("c", 4.0)]);
        let run = jobs("g", &[("a", 7.5), ("b", 1.0), ("c", 5.0)]);
        assert_eq!(against(&base, &run, Metric::Jct).unwrap(), vec![25.0, -25.0]);
        assert_eq!(against(&base, &run, Metric::Slowdown).unwrap(), vec![0.75, 1.25]);
    }

    #[test]
    fn different_traces_are_refused() {
        let base = jobs("cs", &[("a", 10.0), ("b", 1.0)]);
        let run = jobs("g", &[("a", 7.5), ("x", 1.0)]);
        let e = against(&base, &run, Metric::Jct).unwrap_err().to_string();
        assert_eq!(e, "g/jobs.csv line 3: job 'x' where the baseline has 'b': both must replay the same trace");
    }

    #[test]
    fn outliers_cut_the_axis_to_the_percentiles() {
        let mut v: Vec<f64> = (0..200).map(|i| i as f64 / 10.0).collect();
        let series = vec![("a".to_string(), v.clone())];
        let (lo, hi, clipped) = x_range(&series, 0.0);
        assert!(!clipped);
        assert!((lo - -0.995).abs() < 1e-9 && (hi - 20.895).abs() < 1e-9, "{lo} {hi}");
        v[0] = -10_000.0;
        let (lo, hi, clipped) = x_range(&[("a".to_string(), v)], 0.0);
        assert!(clipped);
        // 1st percentile (nearest rank 2 of 200) = 0.1, 99th (rank 198) = 19.7; reference 0.
        assert!((lo - -0.985).abs() < 1e-9 && (hi - 20.685).abs() < 1e-9, "{lo} {hi}");
    }

    #[test]
    fn cdf_steps_reach_one_at_the_largest_value() {
        assert_eq!(cdf_points(&[2.0, 1.0]), vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.5), (2.0, 1.0)]);
    }
}
