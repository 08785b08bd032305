//! Offered load: how busy a workload keeps a cluster, and arrival times scaled to a target load.
//!
//! The paper's online experiments run the cluster at a stated load, and a JCT comparison means
//! little without one: on an idle cluster every scheduler gives each job its critical path, on an
//! overloaded one queues grow without bound and the gaps measure the order jobs starve in. The
//! offered load of resource r is the work the jobs bring, `sum(duration x demand_r)`, over what
//! the cluster can do while they arrive, `capacity_r x span` (span = the last arrival). The
//! bottleneck load is the largest of these; calibration rescales the gaps between arrivals (the
//! DAGs and queues stay as drawn) so that it equals the target.

use crate::error::{Error, Result};
use crate::model::{Cluster, ResVec, Workload};

/// `sum over tasks of duration x demand`, per resource, in the trace's resource order.
pub fn total_work(workload: &Workload) -> ResVec {
    let mut w = ResVec::ZERO;
    for job in &workload.jobs {
        for t in &job.dag.tasks {
            for r in 0..job.dag.dims() {
                w.0[r] += t.duration * t.demand.0[r];
            }
        }
    }
    w
}

/// The last arrival minus the first: the window over which the load is offered.
pub fn span(workload: &Workload) -> f64 {
    match (workload.jobs.first(), workload.jobs.last()) {
        (Some(a), Some(b)) => b.arrival - a.arrival,
        _ => 0.0,
    }
}

/// Offered load of each of the cluster's resources (`cluster.resources` order); infinite when
/// jobs bring work but all arrive at once, 0 for a resource the cluster lacks and no one uses.
pub fn offered_load(workload: &Workload, cluster: &Cluster) -> Vec<f64> {
    let work = total_work(workload);
    let cap = cluster.total_capacity();
    let span = span(workload);
    (0..cluster.resources.len())
        .map(|r| {
            let w = work.0[r];
            if w <= 0.0 {
                0.0
            } else if cap.0[r] <= 0.0 || span <= 0.0 {
                f64::INFINITY
            } else {
                w / (cap.0[r] * span)
            }
        })
        .collect()
}

/// The largest offered load over the resources, and which resource it is.
pub fn bottleneck(workload: &Workload, cluster: &Cluster) -> (f64, usize) {
    offered_load(workload, cluster)
        .into_iter()
        .enumerate()
        .fold((0.0, 0), |best, (r, l)| if l > best.0 { (l, r) } else { best })
}

/// Scales arrival times (about the first arrival) so that the bottleneck load is `target`, and
/// returns the factor applied. Times are rounded to milliseconds afterwards, as `generate` does,
/// so the load reached is within rounding of the target.
pub fn calibrate(workload: &mut Workload, cluster: &Cluster, target: f64) -> Result<f64> {
    if !(target.is_finite() && target > 0.0) {
        return Err(Error::Usage(format!("--load {target}: expected a finite number > 0")));
    }
    if workload.jobs.len() < 2 || span(workload) <= 0.0 {
        return Err(Error::Usage(
            "--load needs at least two jobs arriving at different times (not --arrival all-at-once)".into(),
        ));
    }
    let (now, _) = bottleneck(workload, cluster);
    if !now.is_finite() || now <= 0.0 {
        return Err(Error::Usage("--load: the jobs bring no work the cluster can do".into()));
    }
    let factor = now / target;
    let first = workload.jobs[0].arrival;
    let last = first + span(workload) * factor;
    if last.is_nan() || last > crate::limits::MAX_SECONDS {
        return Err(Error::Usage(format!(
            "--load {}: the arrivals would spread over {:e} s, beyond the largest time accepted ({:e} s); use a larger load",
            crate::limits::show(target),
            span(workload) * factor,
            crate::limits::MAX_SECONDS
        )));
    }
    for j in &mut workload.jobs {
        j.arrival = first + ((j.arrival - first) * factor * 1000.0).round() / 1000.0;
    }
    Ok(factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterSpec, DagBuilder, Job, StageSpec, TaskSpec};

    fn job(name: &str, arrival: f64, tasks: usize, dur: f64, cpu: f64) -> Job {
        let mut b = DagBuilder::new(name, crate::trace::resources());
        b.stage(StageSpec {
            name: "s".into(),
            group: None,
            tasks: vec![TaskSpec { duration: dur, demand: ResVec::from_slice(&[cpu, 1.0, 0.0, 0.0]) }; tasks],
            parents: vec![],
        });
        Job { name: name.into(), arrival, queue: "q0".into(), dag: b.build().unwrap() }
    }

    fn cluster() -> Cluster {
        let cap = [("cpu", 4.0), ("mem", 8.0)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        ClusterSpec::uniform(2, cap).resolve(&crate::trace::resources()).unwrap()
    }

    #[test]
    fn load_is_work_over_capacity_times_span() {
        // cpu work 2x10x2 + 1x5x4 = 60 over 8 cores x 10 s = 0.75; mem 20+5 = 25 over 160.
        let w = Workload { jobs: vec![job("a", 0.0, 2, 10.0, 2.0), job("b", 10.0, 1, 5.0, 4.0)] };
        let l = offered_load(&w, &cluster());
        assert_eq!(l[0], 0.75);
        assert_eq!(l[1], 25.0 / 160.0);
        assert_eq!(l[2], 0.0);
        assert_eq!(bottleneck(&w, &cluster()), (0.75, 0));
    }

    #[test]
    fn calibration_rescales_gaps_to_the_target() {
        let mut w = Workload {
            jobs: vec![job("a", 5.0, 2, 10.0, 2.0), job("b", 7.0, 1, 5.0, 4.0), job("c", 15.0, 1, 10.0, 1.0)],
        };
        // cpu work 40 + 20 + 10 = 70 over 8 x 10 s = 0.875; to 0.5 the gaps grow 1.75 times.
        let f = calibrate(&mut w, &cluster(), 0.5).unwrap();
        assert_eq!(f, 1.75);
        let at: Vec<f64> = w.jobs.iter().map(|j| j.arrival).collect();
        assert_eq!(at, vec![5.0, 8.5, 22.5]);
        assert_eq!(bottleneck(&w, &cluster()).0, 0.5);
    }

    #[test]
    fn calibration_refuses_what_it_cannot_scale() {
        let mut once = Workload { jobs: vec![job("a", 0.0, 1, 1.0, 1.0), job("b", 0.0, 1, 1.0, 1.0)] };
        assert!(calibrate(&mut once, &cluster(), 0.8).is_err());
        let mut w = Workload { jobs: vec![job("a", 0.0, 1, 1.0, 1.0), job("b", 1.0, 1, 1.0, 1.0)] };
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(calibrate(&mut w, &cluster(), bad).is_err(), "{bad}");
        }
    }
}
