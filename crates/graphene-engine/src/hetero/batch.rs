//! LACHESIS's batch mode: several jobs submitted at once share one cluster. The jobs become one
//! DAG (their disjoint union) so that every offline scheduler sees the whole batch.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, ResVec, StageSpec, TaskSpec};

/// The disjoint union of `jobs`; stage `s` of job `j` is named `j<j>.<s>`. Every job must name
/// the same resources.
pub fn union(name: &str, jobs: &[&Dag]) -> Result<Dag> {
    let first = jobs.first().ok_or_else(|| Error::Usage("a batch needs at least one job".into()))?;
    let mut b = DagBuilder::new(name, first.resources.clone());
    for (j, dag) in jobs.iter().enumerate() {
        if dag.resources != first.resources {
            return Err(Error::Usage(format!("job {j} ({}) names other resources than job 0", dag.name)));
        }
        let at = |s: &str| format!("j{j}.{s}");
        for stage in &dag.stages {
            b.stage(StageSpec {
                name: at(&stage.name),
                group: Some(at(&dag.groups[stage.group as usize])),
                tasks: stage
                    .tasks()
                    .map(|t| TaskSpec {
                        duration: dag.tasks[t as usize].duration,
                        demand: dag.tasks[t as usize].demand,
                    })
                    .collect(),
                parents: stage.parents.iter().map(|e| (at(&dag.stages[e.stage as usize].name), e.kind)).collect(),
            });
        }
        for (c, stage) in dag.stages.iter().enumerate() {
            for e in &stage.parents {
                let d = dag.edge_data(e.stage, c as u32);
                if d > 0.0 {
                    b.edge_data(at(&dag.stages[e.stage as usize].name), at(&stage.name), d);
                }
            }
        }
    }
    b.build()
}

/// The data rule of our batch benchmark: each parent task sends each child task `ccr` times the
/// mean duration (at speed 1) of the parent's stage, so with bandwidth 1 a transfer takes `ccr`
/// times the parent's typical work. `ccr` is the communication-to-computation ratio of the HEFT
/// literature.
pub fn with_transfer_rule(dag: &Dag, ccr: f64) -> Result<Dag> {
    let mut b = DagBuilder::new(dag.name.clone(), dag.resources.clone());
    for stage in &dag.stages {
        b.stage(StageSpec {
            name: stage.name.clone(),
            group: Some(dag.groups[stage.group as usize].clone()),
            tasks: stage
                .tasks()
                .map(|t| TaskSpec { duration: dag.tasks[t as usize].duration, demand: dag.tasks[t as usize].demand })
                .collect(),
            parents: stage.parents.iter().map(|e| (dag.stages[e.stage as usize].name.clone(), e.kind)).collect(),
        });
    }
    for stage in &dag.stages {
        for e in &stage.parents {
            let p = &dag.stages[e.stage as usize];
            let mean = p.tasks().map(|t| dag.tasks[t as usize].duration).sum::<f64>() / p.len.max(1) as f64;
            if ccr * mean > 0.0 {
                b.edge_data(p.name.clone(), stage.name.clone(), ccr * mean);
            }
        }
    }
    b.build()
}

/// The jobs as LACHESIS's executors see them: every task takes its executor's one slot (`cpu`
/// 1, the only resource kept), whatever its file demands, so that an executor of capacity
/// `cpu` 1 (`lachesis::train::executors`) runs one task at a time. Edge data is kept.
pub fn one_slot(dag: &Dag) -> Result<Dag> {
    let slot = ResVec::from_slice(&[1.0]);
    let mut b = DagBuilder::new(dag.name.clone(), vec!["cpu".to_string()]);
    for stage in &dag.stages {
        b.stage(StageSpec {
            name: stage.name.clone(),
            group: Some(dag.groups[stage.group as usize].clone()),
            tasks: stage.tasks().map(|t| TaskSpec { duration: dag.tasks[t as usize].duration, demand: slot }).collect(),
            parents: stage.parents.iter().map(|e| (dag.stages[e.stage as usize].name.clone(), e.kind)).collect(),
        });
    }
    for (c, stage) in dag.stages.iter().enumerate() {
        for e in &stage.parents {
            let d = dag.edge_data(e.stage, c as u32);
            if d > 0.0 {
                b.edge_data(dag.stages[e.stage as usize].name.clone(), stage.name.clone(), d);
            }
        }
    }
    b.build()
}

/// `n` machine speeds drawn (seeded) from the CPU frequencies LACHESIS uses: 2.1 to 3.6 GHz in
/// steps of 0.1, the speed being the frequency in GHz. `n` is a machine count, checked against
/// `--limit-machines` before anything is drawn.
pub fn lachesis_speeds(n: usize, seed: u64) -> Result<Vec<f64>> {
    if n == 0 {
        return Err(Error::Usage("--machines must be at least 1".into()));
    }
    crate::limits::current().check_machines(n as u64, "--machines")?;
    let table: Vec<f64> = (21..=36).map(|f| f as f64 / 10.0).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Ok((0..n).map(|_| *table.choose(&mut rng).expect("non-empty table")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EdgeKind, ResVec};

    fn job(name: &str) -> Dag {
        let mut b = DagBuilder::new(name, vec!["cpu".into()]);
        let t = |d: f64| TaskSpec { duration: d, demand: ResVec::ZERO };
        b.stage(StageSpec { name: "a".into(), group: None, tasks: vec![t(1.0), t(3.0)], parents: vec![] });
        b.stage(StageSpec {
            name: "b".into(),
            group: None,
            tasks: vec![t(2.0)],
            parents: vec![("a".into(), EdgeKind::AllToAll)],
        });
        b.build().unwrap()
    }

    #[test]
    fn union_keeps_each_job_and_the_rule_puts_ccr_times_mean_parent_work_on_edges() {
        let (x, y) = (job("x"), job("y"));
        let u = with_transfer_rule(&union("batch", &[&x, &y]).unwrap(), 0.5).unwrap();
        assert_eq!(u.len(), 6);
        let (a1, b1) = (u.stage_by_name("j1.a").unwrap(), u.stage_by_name("j1.b").unwrap());
        assert_eq!(u.edge_data(a1, b1), 1.0);
        assert_eq!(u.edge_data(u.stage_by_name("j0.a").unwrap(), b1), 0.0);
        let s = lachesis_speeds(50, 7).unwrap();
        assert_eq!(s, lachesis_speeds(50, 7).unwrap());
        assert!(s.iter().all(|&v| (2.1..=3.6).contains(&v)));
    }
}
