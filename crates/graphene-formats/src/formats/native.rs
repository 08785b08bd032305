//! graphene's own DAG format (`dag.json`).
//!
//! ```json
//! { "name": "example", "resources": ["cpu", "mem", "disk", "net"],
//!   "stages": [
//!     {"id": "scan", "tasks": 40, "duration": 12.0, "demands": {"cpu": 1, "mem": 4}},
//!     {"id": "fix", "tasks": [{"duration": 5.0, "demands": {"cpu": 1}}],
//!      "parents": ["scan", {"stage": "scan", "kind": "one-to-one", "data": 2.5}]} ] }
//! ```
//! A stage has a task count with one duration and demand vector for all its tasks, or a list of
//! tasks (each may omit what the stage gives). A bare parent name is an all-to-all edge. Missing
//! demands are 0; `resources` defaults to cpu, mem, disk, net. An edge's `data` (default 0) is
//! what each parent task sends each child task it feeds; it costs time only between machines
//! (data / the cluster's bandwidth).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

pub fn default_resources() -> Vec<String> {
    ["cpu", "mem", "disk", "net"].iter().map(|s| s.to_string()).collect()
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DagFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    pub stages: Vec<StageFile>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StageFile {
    pub id: String,
    pub tasks: TasksField,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demands: Option<BTreeMap<String, f64>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<ParentField>,
    /// Tasks that behave alike across stages (scores are computed per group); defaults to the stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// `"tasks"`: a count of alike tasks or a list of tasks. Read by hand rather than as an untagged
/// enum so that a wrong value gets a message about tasks ("expected a task count ..."), not
/// serde's "did not match any variant of untagged enum".
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum TasksField {
    Count(u64),
    List(Vec<TaskFile>),
}

impl<'de> Deserialize<'de> for TasksField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Tasks;
        impl<'de> serde::de::Visitor<'de> for Tasks {
            type Value = TasksField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a task count (a whole number >= 0) or a list of tasks")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<TasksField, E> {
                Ok(TasksField::Count(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<TasksField, E> {
                u64::try_from(v)
                    .map(TasksField::Count)
                    .map_err(|_| E::custom(format!("task count {v} is negative; expected a whole number >= 0")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<TasksField, E> {
                Err(E::custom(format!("task count {v} is not a whole number (at most {})", u64::MAX)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> std::result::Result<TasksField, A::Error> {
                Vec::<TaskFile>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(TasksField::List)
            }
        }
        d.deserialize_any(Tasks)
    }
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demands: Option<BTreeMap<String, f64>>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ParentField {
    Name(String),
    Edge {
        stage: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<f64>,
    },
}

/// Reads the resource map of `field` into a vector in `resources` order.
/// `field` names the map in an error (a closure: formatted only then, not once per stage).
pub fn demand_vector(map: &BTreeMap<String, f64>, resources: &[String], field: impl Fn() -> String) -> Result<ResVec> {
    let mut v = ResVec::ZERO;
    for (name, value) in map {
        let Some(i) = resources.iter().position(|r| r == name) else {
            return Err(Error::field(
                format!("{}.{name}", field()),
                format!("unknown resource '{name}' (the DAG's resources are {})", resources.join(", ")),
            ));
        };
        if !value.is_finite() || *value < 0.0 {
            return Err(Error::field(format!("{}.{name}", field()), format!("{value} is not a finite number >= 0")));
        }
        v.0[i] = *value;
    }
    Ok(v)
}

fn check_duration(d: f64, field: impl Fn() -> String) -> Result<f64> {
    if !(d.is_finite() && (0.0..=crate::limits::MAX_SECONDS).contains(&d)) {
        crate::limits::check_seconds(d, &field(), "duration")?;
    }
    Ok(d)
}

pub fn parse(text: &str, default_name: &str) -> Result<Dag> {
    let file: DagFile = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    from_file(file, default_name)
}

pub fn from_file(file: DagFile, default_name: &str) -> Result<Dag> {
    let resources = file.resources.unwrap_or_else(default_resources);
    for (i, r) in resources.iter().enumerate() {
        if resources[..i].contains(r) {
            return Err(Error::field(format!("resources[{i}]"), format!("resource '{r}' is listed twice")));
        }
    }
    let mut b = DagBuilder::new(file.name.unwrap_or_else(|| default_name.to_string()), resources.clone());
    let limits = crate::limits::current();
    limits.check_stages(file.stages.len() as u64, "stages")?;
    let mut total_tasks = 0u64;
    for (si, s) in file.stages.into_iter().enumerate() {
        crate::deadline::poll()?;
        // Field names are formatted only for an error: a million-stage DAG made millions.
        let id = &s.id;
        let at = || format!("stages[{si}] ('{id}')");
        let stage_demand = match &s.demands {
            Some(m) => Some(demand_vector(m, &resources, || format!("{}.demands", at()))?),
            None => None,
        };
        let stage_duration = match s.duration {
            Some(d) => Some(check_duration(d, || format!("{}.duration", at()))?),
            None => None,
        };
        let tasks = match s.tasks {
            TasksField::Count(n) => {
                // Checked before the vector is made: a count is the one field where a few bytes
                // of input ask for gigabytes.
                total_tasks = crate::limits::add(total_tasks, n);
                if total_tasks > limits.tasks {
                    limits.check_tasks(total_tasks, &format!("{}.tasks (tasks so far)", at()))?;
                }
                let d = stage_duration.ok_or_else(|| {
                    Error::field(format!("{}.duration", at()), "a stage given as a task count needs a duration")
                })?;
                vec![TaskSpec { duration: d, demand: stage_demand.unwrap_or(ResVec::ZERO) }; n as usize]
            }
            TasksField::List(list) => list
                .into_iter()
                .enumerate()
                .map(|(ti, t)| {
                    let tat = || format!("{}.tasks[{ti}]", at());
                    let duration = match t.duration {
                        Some(d) => check_duration(d, || format!("{}.duration", tat()))?,
                        None => stage_duration.ok_or_else(|| {
                            Error::field(format!("{}.duration", tat()), "missing (and the stage gives none)")
                        })?,
                    };
                    let demand = match &t.demands {
                        Some(m) => demand_vector(m, &resources, || format!("{}.demands", tat()))?,
                        None => stage_demand.unwrap_or(ResVec::ZERO),
                    };
                    Ok(TaskSpec { duration, demand })
                })
                .collect::<Result<Vec<_>>>()?,
        };
        if tasks.is_empty() {
            return Err(Error::field(format!("{}.tasks", at()), "a stage needs at least one task"));
        }
        let mut data = Vec::new();
        let parents = s
            .parents
            .into_iter()
            .enumerate()
            .map(|(pi, p)| match p {
                ParentField::Name(n) => Ok((n, EdgeKind::AllToAll)),
                ParentField::Edge { stage, kind, data: d } => {
                    if let Some(d) = d {
                        if !(d.is_finite() && d >= 0.0) {
                            return Err(Error::field(
                                format!("{}.parents[{pi}].data", at()),
                                format!("{d} is not a finite number >= 0"),
                            ));
                        }
                        data.push((stage.clone(), d));
                    }
                    let kind = match kind.as_deref() {
                        None | Some("all-to-all") => EdgeKind::AllToAll,
                        Some("one-to-one") => EdgeKind::OneToOne,
                        Some(other) => {
                            return Err(Error::field(
                                format!("{}.parents[{pi}].kind", at()),
                                format!("unknown edge kind '{other}' (use all-to-all or one-to-one)"),
                            ))
                        }
                    };
                    Ok((stage, kind))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        for (p, d) in data {
            b.edge_data(p, s.id.clone(), d);
        }
        b.stage(StageSpec { name: s.id, group: s.group, tasks, parents });
    }
    b.build()
}

/// Writes a DAG back in this format, one entry per stage (explicit task lists where tasks differ).
pub fn to_file(dag: &Dag) -> DagFile {
    let named = |v: &ResVec| -> BTreeMap<String, f64> {
        dag.resources.iter().enumerate().filter(|(i, _)| v.0[*i] != 0.0).map(|(i, r)| (r.clone(), v.0[i])).collect()
    };
    let stages = dag
        .stages
        .iter()
        .enumerate()
        .map(|(s_id, s)| {
            let s_id = s_id as u32;
            let tasks: Vec<_> = s.tasks().map(|t| &dag.tasks[t as usize]).collect();
            let alike = tasks.iter().all(|t| t.duration == tasks[0].duration && t.demand == tasks[0].demand);
            let (tasks_field, duration, demands) = if alike {
                (TasksField::Count(tasks.len() as u64), Some(tasks[0].duration), Some(named(&tasks[0].demand)))
            } else {
                let list = tasks
                    .iter()
                    .map(|t| TaskFile { duration: Some(t.duration), demands: Some(named(&t.demand)) })
                    .collect();
                (TasksField::List(list), None, None)
            };
            let group = &dag.groups[s.group as usize];
            StageFile {
                id: s.name.clone(),
                tasks: tasks_field,
                duration,
                demands,
                parents: s
                    .parents
                    .iter()
                    .map(|e| {
                        let name = dag.stages[e.stage as usize].name.clone();
                        let d = dag.edge_data(e.stage, s_id);
                        let data = (d > 0.0).then_some(d);
                        match (e.kind, data) {
                            (EdgeKind::AllToAll, None) => ParentField::Name(name),
                            (EdgeKind::AllToAll, _) => ParentField::Edge { stage: name, kind: None, data },
                            (EdgeKind::OneToOne, _) => {
                                ParentField::Edge { stage: name, kind: Some("one-to-one".into()), data }
                            }
                        }
                    })
                    .collect(),
                group: (group != &s.name).then(|| group.clone()),
            }
        })
        .collect();
    DagFile { name: Some(dag.name.clone()), resources: Some(dag.resources.clone()), stages }
}
