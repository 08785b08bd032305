//! WfCommons WfFormat JSON (schema 1.4, 1.5 and 1.6; the older 1.0-1.3 `jobs` layout is read as 1.4).
//!
//! WfCommons workflows are task-level DAGs, while graphene's model is stage-level. Each WfCommons
//! task therefore becomes a stage of one task, named by the task's reference (its `id` from 1.5
//! on, its `name` in 1.4, which is what 1.4 parents refer to), and its dependencies become
//! all-to-all edges between those one-task stages. What makes tasks "alike" for FragScore is the
//! task type, so the stage's group is:
//!
//! * 1.5/1.6: the task `name` (WfCommons sets it to the program or task type), with a numeric
//!   suffix such as `_00000001` or `_ID0000001` removed when present;
//! * 1.4: `category`, else `command.program`, else the `name` with the numeric suffix removed
//!   (1.4's `type` says compute/transfer/auxiliary, which is too coarse to group by).
//!
//! Dependencies are the union of what `parents` and `children` declare, because some instances
//! declare an edge on one end only. A reference to a task that does not exist is an error, as are
//! two tasks with the same reference.
//!
//! # Demands (resources `cpu`, `mem`, `disk`, `net`)
//!
//! * `cpu`: `coreCount` (1.5+) or `cores` (1.4), 1 when absent.
//! * `mem`: `memoryInBytes` / 10^9 (GB); 1.4's older `memory` field is in kilobytes (as WfCommons'
//!   own migration tool reads it). 0 when absent: a demand profile fills it in.
//! * `disk`, in MB/s (10^6 bytes per second), is the task's I/O volume spread over its runtime:
//!   `(read + written bytes) / runtime / 10^6`. The volume is `readBytes + writtenBytes` when
//!   either is given (1.4's `bytesRead`/`bytesWritten` count kilobytes, except for Pegasus runs,
//!   again as the migration tool reads them); otherwise it is the summed sizes of the task's
//!   input and output files (files the instance does not size count 0). A task whose runtime is 0
//!   gets disk 0, since a rate over no time means nothing.
//! * `net`: 0; WfFormat records no network use.
//!
//! Runtimes (`runtimeInSeconds`, or 1.4's older `runtime`) are required; 0 is kept as 0.

use std::collections::HashMap;

use serde::Deserialize;

use super::native::default_resources;
use crate::error::{Error, Result};
use crate::model::{Dag, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

const GB: f64 = 1e9;
const MB: f64 = 1e6;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WfFile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    schema_version: Option<String>,
    workflow: Workflow,
    #[serde(default)]
    runtime_system: Option<RuntimeSystem>,
    /// The runtime system's name before 1.5.
    #[serde(default)]
    wms: Option<RuntimeSystem>,
}

#[derive(Deserialize)]
struct RuntimeSystem {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct Workflow {
    #[serde(default)]
    specification: Option<Specification>,
    #[serde(default)]
    execution: Option<Execution>,
    /// 1.3 and 1.4.
    #[serde(default)]
    tasks: Option<Vec<Task14>>,
    /// 1.0 to 1.2.
    #[serde(default)]
    jobs: Option<Vec<Task14>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Specification {
    tasks: Vec<SpecTask>,
    #[serde(default)]
    files: Option<Vec<SpecFile>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecTask {
    name: String,
    id: String,
    #[serde(default)]
    parents: Option<Vec<String>>,
    #[serde(default)]
    children: Option<Vec<String>>,
    #[serde(default)]
    input_files: Option<Vec<String>>,
    #[serde(default)]
    output_files: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecFile {
    id: String,
    #[serde(default)]
    size_in_bytes: Option<f64>,
}

#[derive(Deserialize)]
struct Execution {
    #[serde(default)]
    tasks: Option<Vec<ExecTask>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecTask {
    id: String,
    runtime_in_seconds: f64,
    #[serde(default)]
    core_count: Option<f64>,
    #[serde(default)]
    memory_in_bytes: Option<f64>,
    #[serde(default)]
    read_bytes: Option<f64>,
    #[serde(default)]
    written_bytes: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Task14 {
    name: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    command: Option<Command>,
    #[serde(default)]
    parents: Option<Vec<String>>,
    #[serde(default)]
    children: Option<Vec<String>>,
    #[serde(default)]
    files: Option<Vec<File14>>,
    #[serde(default)]
    runtime_in_seconds: Option<f64>,
    #[serde(default)]
    runtime: Option<f64>,
    #[serde(default)]
    cores: Option<f64>,
    #[serde(default)]
    core_count: Option<f64>,
    #[serde(default)]
    memory_in_bytes: Option<f64>,
    /// Kilobytes.
    #[serde(default)]
    memory: Option<f64>,
    #[serde(default)]
    read_bytes: Option<f64>,
    #[serde(default)]
    written_bytes: Option<f64>,
    /// Kilobytes, except for Pegasus.
    #[serde(default)]
    bytes_read: Option<f64>,
    /// Kilobytes, except for Pegasus.
    #[serde(default)]
    bytes_written: Option<f64>,
}

#[derive(Deserialize)]
struct Command {
    #[serde(default)]
    program: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File14 {
    #[serde(default)]
    link: Option<String>,
    #[serde(default)]
    size_in_bytes: Option<f64>,
    #[serde(default)]
    size: Option<f64>,
}

/// One task with its references still unresolved, common to both layouts.
struct RawTask {
    /// Where the task sits in the file, for messages.
    at: String,
    reference: String,
    /// Another name the task may be referred to by (1.4's `id`).
    alias: Option<String>,
    group: String,
    parents: Vec<String>,
    children: Vec<String>,
    runtime: f64,
    cores: f64,
    mem_bytes: f64,
    io_bytes: f64,
}

pub fn parse(text: &str, name: &str) -> Result<Dag> {
    let file: WfFile = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    let dag_name = match file.name.as_deref() {
        Some(n) if !n.trim().is_empty() => n.to_string(),
        _ => name.to_string(),
    };
    let tasks = match (&file.workflow.specification, &file.workflow.tasks, &file.workflow.jobs) {
        (Some(spec), _, _) => read_spec(spec, file.workflow.execution.as_ref())?,
        (None, Some(tasks), _) => read_14(tasks, "workflow.tasks", is_pegasus(&file))?,
        (None, None, Some(jobs)) => read_14(jobs, "workflow.jobs", is_pegasus(&file))?,
        (None, None, None) => {
            let version = file.schema_version.as_deref().unwrap_or("unknown");
            return Err(Error::field(
                "workflow",
                format!(
                    "no tasks: expected workflow.specification.tasks (schema 1.5+) or workflow.tasks (schema 1.4); schemaVersion is {version}"
                ),
            ));
        }
    };
    build(dag_name, tasks)
}

fn is_pegasus(file: &WfFile) -> bool {
    [&file.runtime_system, &file.wms]
        .iter()
        .filter_map(|r| r.as_ref().and_then(|r| r.name.as_deref()))
        .any(|n| n.to_ascii_lowercase().contains("pegasus"))
}

/// `mProject_00000001` -> `mProject`, `individuals_ID0000001` -> `individuals`; other names as is.
pub fn task_type(name: &str) -> &str {
    if let Some((prefix, suffix)) = name.rsplit_once('_') {
        let digits = suffix.strip_prefix("ID").unwrap_or(suffix);
        if !prefix.is_empty() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return prefix;
        }
    }
    name
}

fn check_number(value: Option<f64>, field: impl Fn() -> String) -> Result<Option<f64>> {
    match value {
        Some(v) if !v.is_finite() || v < 0.0 => Err(Error::field(field(), format!("{v} is not a finite number >= 0"))),
        other => Ok(other),
    }
}

fn read_spec(spec: &Specification, execution: Option<&Execution>) -> Result<Vec<RawTask>> {
    let mut sizes: HashMap<&str, f64> = HashMap::new();
    for (i, f) in spec.files.iter().flatten().enumerate() {
        let size = check_number(f.size_in_bytes, || format!("workflow.specification.files[{i}].sizeInBytes"))?;
        sizes.insert(f.id.as_str(), size.unwrap_or(0.0));
    }
    let spec_ids: HashMap<&str, usize> = spec.tasks.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
    let mut exec: HashMap<&str, (usize, &ExecTask)> = HashMap::new();
    for (i, t) in execution.and_then(|e| e.tasks.as_ref()).into_iter().flatten().enumerate() {
        crate::deadline::poll()?;
        let at = format!("workflow.execution.tasks[{i}] ('{}')", t.id);
        if !spec_ids.contains_key(t.id.as_str()) {
            return Err(Error::field(at, "no task with this id in workflow.specification.tasks"));
        }
        if let Some((j, _)) = exec.insert(t.id.as_str(), (i, t)) {
            return Err(Error::field(
                format!("{at}.id"),
                format!("duplicate task id (also workflow.execution.tasks[{j}])"),
            ));
        }
    }
    spec.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("workflow.specification.tasks[{i}] ('{}')", t.id);
            let Some(&(ei, e)) = exec.get(t.id.as_str()) else {
                return Err(Error::field(at, "no entry in workflow.execution.tasks, so no runtime"));
            };
            let eat = format!("workflow.execution.tasks[{ei}] ('{}')", e.id);
            let runtime =
                check_number(Some(e.runtime_in_seconds), || format!("{eat}.runtimeInSeconds"))?.unwrap_or(0.0);
            let cores = check_number(e.core_count, || format!("{eat}.coreCount"))?.unwrap_or(1.0);
            let mem_bytes = check_number(e.memory_in_bytes, || format!("{eat}.memoryInBytes"))?.unwrap_or(0.0);
            let read = check_number(e.read_bytes, || format!("{eat}.readBytes"))?;
            let written = check_number(e.written_bytes, || format!("{eat}.writtenBytes"))?;
            let io_bytes = if read.is_some() || written.is_some() {
                read.unwrap_or(0.0) + written.unwrap_or(0.0)
            } else {
                t.input_files
                    .iter()
                    .chain(t.output_files.iter())
                    .flatten()
                    .map(|f| sizes.get(f.as_str()).copied().unwrap_or(0.0))
                    .sum()
            };
            Ok(RawTask {
                at,
                reference: t.id.clone(),
                alias: None,
                group: task_type(&t.name).to_string(),
                parents: t.parents.clone().unwrap_or_default(),
                children: t.children.clone().unwrap_or_default(),
                runtime,
                cores,
                mem_bytes,
                io_bytes,
            })
        })
        .collect()
}

fn read_14(tasks: &[Task14], list: &str, pegasus: bool) -> Result<Vec<RawTask>> {
    let kb = if pegasus { 1.0 } else { 1e3 };
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("{list}[{i}] ('{}')", t.name);
            let num = |v: Option<f64>, field: &str| check_number(v, || format!("{at}.{field}"));
            let runtime = match (num(t.runtime_in_seconds, "runtimeInSeconds")?, num(t.runtime, "runtime")?) {
                (Some(r), _) | (None, Some(r)) => r,
                (None, None) => return Err(Error::field(at, "missing runtimeInSeconds (or runtime)")),
            };
            let cores = num(t.cores, "cores")?.or(num(t.core_count, "coreCount")?).unwrap_or(1.0);
            let mem_bytes = match (num(t.memory_in_bytes, "memoryInBytes")?, num(t.memory, "memory")?) {
                (Some(b), _) => b,
                (None, Some(k)) => k * 1e3,
                (None, None) => 0.0,
            };
            let read = num(t.read_bytes, "readBytes")?.or(num(t.bytes_read, "bytesRead")?.map(|v| v * kb));
            let written =
                num(t.written_bytes, "writtenBytes")?.or(num(t.bytes_written, "bytesWritten")?.map(|v| v * kb));
            let io_bytes = if read.is_some() || written.is_some() {
                read.unwrap_or(0.0) + written.unwrap_or(0.0)
            } else {
                let mut sum = 0.0;
                for (fi, f) in t.files.iter().flatten().enumerate() {
                    let size = match (
                        num(f.size_in_bytes, &format!("files[{fi}].sizeInBytes"))?,
                        num(f.size, &format!("files[{fi}].size"))?,
                    ) {
                        (Some(s), _) | (None, Some(s)) => s,
                        (None, None) => 0.0,
                    };
                    let link = f.link.as_deref().map(str::to_ascii_lowercase);
                    if matches!(link.as_deref(), None | Some("input") | Some("output")) {
                        sum += size;
                    }
                }
                sum
            };
            let group = [t.category.as_deref(), t.command.as_ref().and_then(|c| c.program.as_deref())]
                .into_iter()
                .flatten()
                .find(|g| !g.trim().is_empty())
                .unwrap_or_else(|| task_type(&t.name))
                .to_string();
            Ok(RawTask {
                at,
                reference: t.name.clone(),
                alias: t.id.clone().filter(|id| id != &t.name),
                group,
                parents: t.parents.clone().unwrap_or_default(),
                children: t.children.clone().unwrap_or_default(),
                runtime,
                cores,
                mem_bytes,
                io_bytes,
            })
        })
        .collect()
}

fn build(name: String, tasks: Vec<RawTask>) -> Result<Dag> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        if let Some(j) = index.insert(t.reference.as_str(), i) {
            return Err(Error::field(
                t.at.clone(),
                format!("duplicate task id '{}' (also {})", t.reference, tasks[j].at),
            ));
        }
    }
    // Aliases resolve only where they do not shadow a real reference.
    let mut alias: HashMap<&str, usize> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if let Some(a) = t.alias.as_deref() {
            if !index.contains_key(a) {
                alias.entry(a).or_insert(i);
            }
        }
    }
    let resolve = |r: &str| index.get(r).or_else(|| alias.get(r)).copied();
    let mut parents: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, t) in tasks.iter().enumerate() {
        crate::deadline::poll()?;
        for p in &t.parents {
            let pi = resolve(p)
                .ok_or_else(|| Error::field(format!("{}.parents", t.at), format!("unknown parent task '{p}'")))?;
            parents[i].push(pi);
        }
        for c in &t.children {
            let ci = resolve(c)
                .ok_or_else(|| Error::field(format!("{}.children", t.at), format!("unknown child task '{c}'")))?;
            parents[ci].push(i);
        }
    }
    let mut b = DagBuilder::new(name, default_resources());
    for (i, t) in tasks.iter().enumerate() {
        let ps = &mut parents[i];
        let mut seen = std::collections::HashSet::with_capacity(ps.len());
        ps.retain(|p| seen.insert(*p));
        let disk = if t.runtime > 0.0 { t.io_bytes / t.runtime / MB } else { 0.0 };
        let demand = ResVec::from_slice(&[t.cores, t.mem_bytes / GB, disk, 0.0]);
        b.stage(StageSpec {
            name: t.reference.clone(),
            group: Some(t.group.clone()),
            tasks: vec![TaskSpec { duration: t.runtime, demand }],
            parents: ps.iter().map(|&p| (tasks[p].reference.clone(), EdgeKind::AllToAll)).collect(),
        });
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::formats::test_support::shared_or_skip;

    fn edges(dag: &Dag) -> usize {
        dag.stages.iter().map(|s| s.parents.len()).sum()
    }

    fn stage<'a>(dag: &'a Dag, name: &str) -> &'a crate::model::Stage {
        &dag.stages[dag.stage_by_name(name).unwrap_or_else(|| panic!("no stage {name}")) as usize]
    }

    fn task_of<'a>(dag: &'a Dag, name: &str) -> &'a crate::model::Task {
        &dag.tasks[stage(dag, name).first as usize]
    }

    fn err(text: &str) -> String {
        parse(text, "x").expect_err("should fail").to_string()
    }

    #[test]
    fn montage_100_has_97_tasks_209_edges_and_8_task_types() {
        let dag = parse(&shared_or_skip!("wfcommons-generated/montage-100-seed42.json"), "montage-100-seed42").unwrap();
        assert_eq!(dag.name, "Montage-synthetic-instance");
        assert_eq!(dag.len(), 97);
        assert_eq!(dag.stages.len(), 97);
        assert!(dag.stages.iter().all(|s| s.len == 1));
        assert_eq!(edges(&dag), 209);
        let mut groups = dag.groups.clone();
        groups.sort();
        assert_eq!(
            groups,
            ["mAdd", "mBackground", "mBgModel", "mConcatFit", "mDiffFit", "mImgtbl", "mProject", "mViewer"]
        );
        assert_eq!(dag.resources, ["cpu", "mem", "disk", "net"]);
        let t = task_of(&dag, "mProject_00000001");
        assert_eq!(t.duration, 1263.481);
        assert_eq!(t.demand.0[0], 1.0);
        assert_eq!(t.demand.0[1], 0.0);
        assert_eq!(t.demand.0[3], 0.0);
        assert_eq!(dag.groups[stage(&dag, "mProject_00000001").group as usize], "mProject");
        // mProject_00000001 lists five children in the file.
        assert_eq!(stage(&dag, "mProject_00000001").children.len(), 5);
    }

    #[test]
    fn montage_100_disk_is_file_bytes_over_runtime() {
        let text = shared_or_skip!("wfcommons-generated/montage-100-seed42.json");
        let dag = parse(&text, "m").unwrap();
        // Recompute for the first task from the raw JSON.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let spec = &v["workflow"]["specification"];
        let size = |id: &str| {
            spec["files"].as_array().unwrap().iter().find(|f| f["id"] == id).unwrap()["sizeInBytes"].as_f64().unwrap()
        };
        let t0 = &spec["tasks"][0];
        let bytes: f64 = ["inputFiles", "outputFiles"]
            .iter()
            .flat_map(|k| t0[k].as_array().unwrap().iter())
            .map(|f| size(f.as_str().unwrap()))
            .sum();
        let runtime = v["workflow"]["execution"]["tasks"][0]["runtimeInSeconds"].as_f64().unwrap();
        let disk = task_of(&dag, t0["id"].as_str().unwrap()).demand.0[2];
        assert!((disk - bytes / runtime / 1e6).abs() < 1e-9, "disk {disk}");
        assert!(disk > 0.0);
    }

    #[test]
    fn blast_100_has_98_tasks_and_285_edges() {
        let dag = parse(&shared_or_skip!("wfcommons-generated/blast-100-seed42.json"), "b").unwrap();
        assert_eq!(dag.len(), 98);
        assert_eq!(edges(&dag), 285);
        let mut groups = dag.groups.clone();
        groups.sort();
        assert_eq!(groups, ["blastall", "cat", "cat_blast", "split_fasta"]);
        // The README's "0.0 s" minimum is 0.002 s before rounding.
        let shortest = dag.tasks.iter().map(|t| t.duration).fold(f64::INFINITY, f64::min);
        assert_eq!(shortest, 0.002);
    }

    #[test]
    fn every_generated_file_matches_the_readme_counts() {
        let expected = [
            ("montage-100", 97, 209),
            ("montage-1000", 994, 2871),
            ("montage-5000", 4991, 15546),
            ("epigenomics-100", 97, 118),
            ("epigenomics-1000", 997, 1234),
            ("epigenomics-5000", 4997, 6551),
            ("blast-100", 98, 285),
            ("blast-1000", 998, 2985),
            ("blast-5000", 4998, 14985),
            ("seismology-1000", 998, 997),
            ("genome-1000", 998, 1295),
            ("cycles-1000", 997, 1463),
        ];
        for (file, tasks, edge_count) in expected {
            let dag = parse(&shared_or_skip!(&format!("wfcommons-generated/{file}-seed42.json")), file).unwrap();
            assert_eq!((dag.len(), edges(&dag)), (tasks, edge_count), "{file}");
        }
    }

    #[test]
    fn task_type_strips_numeric_suffixes_only() {
        assert_eq!(task_type("mProject_00000001"), "mProject");
        assert_eq!(task_type("individuals_ID0000001"), "individuals");
        assert_eq!(task_type("cpuhog_chain_00000005"), "cpuhog_chain");
        assert_eq!(task_type("mProject"), "mProject");
        assert_eq!(task_type("split_fasta"), "split_fasta");
        assert_eq!(task_type("_00000001"), "_00000001");
        assert_eq!(task_type("task_"), "task_");
        assert_eq!(task_type("task_ID"), "task_ID");
    }

    #[test]
    fn schema_1_4_fixture_resolves_names_ids_and_children() {
        let dag = parse(include_str!("../../../../tests/data/wfcommons-1.4-example.json"), "x").unwrap();
        assert_eq!(dag.name, "montage-like-1.4-example");
        assert_eq!(dag.len(), 5);
        assert_eq!(edges(&dag), 4);
        let group = |n: &str| dag.groups[stage(&dag, n).group as usize].as_str();
        assert_eq!(group("mProject_00000001"), "mProject");
        assert_eq!(group("mDiffFit_00000003"), "mDiffFit");
        assert_eq!(group("mViewer_00000005"), "mViewer");
        let parents = |n: &str| -> Vec<&str> {
            stage(&dag, n).parents.iter().map(|e| dag.stages[e.stage as usize].name.as_str()).collect()
        };
        assert_eq!(parents("mDiffFit_00000003"), ["mProject_00000001", "mProject_00000002"]);
        // Referenced by its 1.4 `id`.
        assert_eq!(parents("mConcatFit_00000004"), ["mDiffFit_00000003"]);
        // Declared only in mConcatFit's `children`.
        assert_eq!(parents("mViewer_00000005"), ["mConcatFit_00000004"]);

        let d = |n: &str| task_of(&dag, n).demand.0;
        // (8 MB in + 12 MB out) / 10 s.
        assert_eq!(d("mProject_00000001")[..4], [1.0, 0.0, 2.0, 0.0]);
        // `size` alias and `runtime` alias: 20 MB / 20 s; 3e9 bytes = 3 GB.
        assert_eq!(d("mProject_00000002")[..4], [2.0, 3.0, 1.0, 0.0]);
        assert_eq!(task_of(&dag, "mProject_00000002").duration, 20.0);
        // readBytes + writtenBytes win over file sizes: 25 MB / 5 s.
        assert_eq!(d("mDiffFit_00000003")[2], 5.0);
        // Runtime 0: kept, and no disk rate.
        assert_eq!(task_of(&dag, "mConcatFit_00000004").duration, 0.0);
        assert_eq!(d("mConcatFit_00000004")[2], 0.0);
        assert_eq!(task_of(&dag, "mViewer_00000005").duration, 2.5);
    }

    #[test]
    fn schema_1_4_old_units_are_kilobytes_except_for_pegasus() {
        let text = |wms: &str| {
            format!(
                r#"{{"name":"w","schemaVersion":"1.4","wms":{{"name":"{wms}","version":"1"}},
                "workflow":{{"tasks":[{{"name":"a_1","type":"compute","runtime":2,"memory":500000,
                "bytesRead":1000,"bytesWritten":3000,"parents":[]}}]}}}}"#
            )
        };
        let makeflow = parse(&text("Makeflow"), "x").unwrap();
        // 500000 KB = 0.5 GB; 4000 KB / 2 s = 2 MB/s.
        assert_eq!(makeflow.tasks[0].demand.0[..3], [1.0, 0.5, 2.0]);
        let pegasus = parse(&text("Pegasus"), "x").unwrap();
        assert!((pegasus.tasks[0].demand.0[2] - 0.002).abs() < 1e-12);
        assert_eq!(makeflow.groups, ["a"]);
    }

    #[test]
    fn schema_1_5_reads_execution_demands() {
        let text = r#"{"name":"","schemaVersion":"1.5","workflow":{
            "specification":{"tasks":[
                {"name":"split","id":"ID01","parents":[],"children":["ID02"],"inputFiles":["in"],"outputFiles":["mid"]},
                {"name":"analyze","id":"ID02","parents":["ID01"],"children":[],"inputFiles":["mid","nosize"]}],
              "files":[{"id":"in","sizeInBytes":1000000},{"id":"mid","sizeInBytes":3000000}]},
            "execution":{"makespanInSeconds":3,"executedAt":"x","tasks":[
                {"id":"ID02","runtimeInSeconds":2.0,"coreCount":4,"memoryInBytes":2500000000},
                {"id":"ID01","runtimeInSeconds":1.0,"readBytes":6000000}]}}}"#;
        let dag = parse(text, "stem").unwrap();
        assert_eq!(dag.name, "stem");
        let split = task_of(&dag, "ID01");
        assert_eq!(split.duration, 1.0);
        // readBytes present: 6 MB / 1 s, file sizes ignored.
        assert_eq!(split.demand.0[..4], [1.0, 0.0, 6.0, 0.0]);
        let analyze = task_of(&dag, "ID02");
        // 3 MB of sized input over 2 s; the unsized file counts 0.
        assert_eq!(analyze.demand.0[..4], [4.0, 2.5, 1.5, 0.0]);
        assert_eq!(edges(&dag), 1);
    }

    #[test]
    fn unknown_parent_is_an_error_naming_the_task() {
        let text = r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"a1","parents":["ghost"],"children":[]}]},
            "execution":{"tasks":[{"id":"a1","runtimeInSeconds":1}]}}}"#;
        let e = err(text);
        assert!(e.contains("a1") && e.contains("unknown parent task 'ghost'"), "{e}");
        let e14 = err(r#"{"name":"w","schemaVersion":"1.4","workflow":{"tasks":[
            {"name":"b_1","runtime":1,"children":["nobody"]}]}}"#);
        assert!(e14.contains("b_1") && e14.contains("unknown child task 'nobody'"), "{e14}");
    }

    #[test]
    fn duplicate_ids_are_errors() {
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"t","parents":[],"children":[]},
                                      {"name":"b","id":"t","parents":[],"children":[]}]},
            "execution":{"tasks":[{"id":"t","runtimeInSeconds":1}]}}}"#);
        assert!(e.contains("duplicate task id 't'") && e.contains("tasks[1]"), "{e}");
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"t","parents":[],"children":[]}]},
            "execution":{"tasks":[{"id":"t","runtimeInSeconds":1},{"id":"t","runtimeInSeconds":2}]}}}"#);
        assert!(e.contains("duplicate task id"), "{e}");
    }

    #[test]
    fn missing_fields_are_reported_with_position_or_task() {
        let text = "{\"name\":\"w\",\"schemaVersion\":\"1.6\",\"workflow\":{\n\"specification\":{\"tasks\":[{\"name\":\"a\",\"id\":\"t\",\"parents\":[],\"children\":[]}]},\n\"execution\":{\"tasks\":[{\"id\":\"t\"}]}}}";
        match parse(text, "x").unwrap_err() {
            Error::Syntax { line, message, .. } => {
                assert_eq!(line, 3);
                assert!(message.contains("runtimeInSeconds"), "{message}");
            }
            other => panic!("expected a syntax error, got {other}"),
        }
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"t","parents":[],"children":[]}]}}}"#);
        assert!(e.contains("('t')") && e.contains("no entry in workflow.execution.tasks"), "{e}");
        let e = err(r#"{"name":"w","schemaVersion":"1.4","workflow":{"tasks":[{"name":"a_1"}]}}"#);
        assert!(e.contains("a_1") && e.contains("missing runtimeInSeconds"), "{e}");
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{}}"#);
        assert!(e.contains("no tasks"), "{e}");
    }

    #[test]
    fn bad_values_and_malformed_json_are_errors() {
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"t","parents":[],"children":[]}]},
            "execution":{"tasks":[{"id":"t","runtimeInSeconds":-1}]}}}"#);
        assert!(e.contains("runtimeInSeconds") && e.contains("-1"), "{e}");
        let e = err(r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[{"name":"a","id":"t","parents":["t"],"children":[]}]},
            "execution":{"tasks":[{"id":"t","runtimeInSeconds":1}]}}}"#);
        assert!(e.contains("cycle"), "{e}");
        match parse("{\"name\": \"w\"\n  \"workflow\": {}}", "x").unwrap_err() {
            Error::Syntax { line, column, .. } => assert_eq!((line, column), (2, 3)),
            other => panic!("expected a syntax error, got {other}"),
        }
        match parse("{\"name\": \"w\", \"workflow\": {\"tasks\": [{\"name\": 5}]}}", "x").unwrap_err() {
            Error::Syntax { line, .. } => assert_eq!(line, 1),
            other => panic!("expected a syntax error, got {other}"),
        }
    }
}
