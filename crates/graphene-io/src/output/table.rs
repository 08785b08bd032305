//! A replay's tables as Parquet (`replay --format parquet`), for pandas, polars and Arrow.
//!
//! The columns are the CSVs' (same names, same order), typed: text as UTF-8 strings, counts and
//! machine numbers as 64-bit integers, times as doubles. Written with the `parquet` crate's
//! column writer (no Arrow in between: three small flat tables do not need it), one row group,
//! Snappy-free and dictionary-encoded as the crate does by default, so files are byte-identical
//! run to run.
//!
//! Behind the crate's default feature `parquet`: the `parquet` crate is the largest dependency
//! to compile, so a build that does not want Parquet (`--no-default-features`) leaves it out, and
//! then writing or reading a table is refused with an error that names the feature.

#[cfg(feature = "parquet")]
use std::sync::Arc;

#[cfg(feature = "parquet")]
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;
#[cfg(feature = "parquet")]
use parquet::file::writer::SerializedFileWriter;
#[cfg(feature = "parquet")]
use parquet::schema::types::Type;

use crate::error::{Error, Result};
use crate::metrics::Summary;
use crate::model::Workload;
use crate::sim::SimResult;

/// One column of a table.
pub enum Column {
    Text(&'static str, Vec<String>),
    Int(&'static str, Vec<i64>),
    Float(String, Vec<f64>),
}

#[cfg(feature = "parquet")]
impl Column {
    fn name(&self) -> &str {
        match self {
            Column::Text(n, _) | Column::Int(n, _) => n,
            Column::Float(n, _) => n,
        }
    }
}

#[cfg(feature = "parquet")]
fn err(e: parquet::errors::ParquetError) -> Error {
    Error::Io(std::io::Error::other(format!("writing Parquet: {e}")))
}

/// Writing or reading Parquet in a build without the `parquet` feature.
#[cfg(not(feature = "parquet"))]
fn without_parquet() -> Error {
    Error::Usage("this graphene was built without Parquet support (the `parquet` feature, on by default)".into())
}

/// The columns as one Parquet file (all columns must have as many rows).
#[cfg(not(feature = "parquet"))]
pub fn parquet(_columns: &[Column]) -> Result<Vec<u8>> {
    Err(without_parquet())
}

/// The columns as one Parquet file (all columns must have as many rows).
#[cfg(feature = "parquet")]
pub fn parquet(columns: &[Column]) -> Result<Vec<u8>> {
    use parquet::basic::{LogicalType, Repetition, Type as Physical};
    let fields: Vec<Arc<Type>> = columns
        .iter()
        .map(|c| {
            let (physical, logical) = match c {
                Column::Text(..) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
                Column::Int(..) => (Physical::INT64, None),
                Column::Float(..) => (Physical::DOUBLE, None),
            };
            Type::primitive_type_builder(c.name(), physical)
                .with_repetition(Repetition::REQUIRED)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
                .map_err(err)
        })
        .collect::<Result<_>>()?;
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build().map_err(err)?);
    let props = Arc::new(WriterProperties::builder().set_created_by("graphene".into()).build());
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props).map_err(err)?;
    let mut rg = w.next_row_group().map_err(err)?;
    for c in columns {
        let mut col = rg.next_column().map_err(err)?.expect("one writer per schema column");
        match c {
            Column::Text(_, v) => {
                let v: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                col.typed::<ByteArrayType>().write_batch(&v, None, None).map_err(err)?;
            }
            Column::Int(_, v) => {
                col.typed::<Int64Type>().write_batch(v, None, None).map_err(err)?;
            }
            Column::Float(_, v) => {
                col.typed::<DoubleType>().write_batch(v, None, None).map_err(err)?;
            }
        }
        col.close().map_err(err)?;
    }
    rg.close().map_err(err)?;
    w.into_inner().map_err(err)
}

/// `jobs`: job, queue, arrival, finish, jct, tasks.
pub fn jobs(result: &SimResult) -> Result<Vec<u8>> {
    let j = &result.jobs;
    parquet(&[
        Column::Text("job", j.iter().map(|x| x.name.clone()).collect()),
        Column::Text("queue", j.iter().map(|x| x.queue.clone()).collect()),
        Column::Float("arrival".into(), j.iter().map(|x| x.arrival).collect()),
        Column::Float("finish".into(), j.iter().map(|x| x.finish).collect()),
        Column::Float("jct".into(), j.iter().map(|x| x.jct()).collect()),
        Column::Int("tasks", j.iter().map(|x| x.tasks as i64).collect()),
    ])
}

/// `schedule`: job, task (`stage[index]`), machine, start, end.
pub fn schedule(workload: &Workload, result: &SimResult) -> Result<Vec<u8>> {
    let r = &result.runs;
    parquet(&[
        Column::Text("job", r.iter().map(|x| workload.jobs[x.job as usize].name.clone()).collect()),
        Column::Text("task", r.iter().map(|x| workload.jobs[x.job as usize].dag.task_name(x.task)).collect()),
        Column::Int("machine", r.iter().map(|x| x.machine as i64).collect()),
        Column::Float("start".into(), r.iter().map(|x| x.start).collect()),
        Column::Float("end".into(), r.iter().map(|x| x.end).collect()),
    ])
}

/// `utilization`: the series of summary.json, one row per interval: t, the mean fraction of
/// the cluster's capacity in use per resource (a column per resource), running.
pub fn utilization(summary: &Summary) -> Result<Vec<u8>> {
    let u = &summary.utilization;
    let mut cols = vec![Column::Float("t".into(), u.iter().map(|p| p.t).collect())];
    for (i, r) in summary.resources.iter().enumerate() {
        cols.push(Column::Float(r.clone(), u.iter().map(|p| p.used.get(i).copied().unwrap_or(0.0)).collect()));
    }
    cols.push(Column::Float("running".into(), u.iter().map(|p| p.running).collect()));
    parquet(&cols)
}

/// The `job` and `jct` columns of a replay's `jobs.parquet`, row by row (what `plot cdf` reads
/// of a replay written with `--format parquet`). A file that is not such a table is refused
/// naming the file and the column or row.
#[cfg(not(feature = "parquet"))]
pub fn read_jobs(path: &std::path::Path) -> Result<Vec<(String, f64)>> {
    Err(without_parquet().in_file(path))
}

/// The `job` and `jct` columns of a replay's `jobs.parquet`, row by row (what `plot cdf` reads
/// of a replay written with `--format parquet`). A file that is not such a table is refused
/// naming the file and the column or row.
#[cfg(feature = "parquet")]
pub fn read_jobs(path: &std::path::Path) -> Result<Vec<(String, f64)>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let fail = |m: String| Error::Usage(m).in_file(path);
    let file = std::fs::File::open(path).map_err(|e| Error::Io(e).in_file(path))?;
    let size = file.metadata().map_err(|e| Error::Io(e).in_file(path))?.len();
    crate::limits::current().check_input_bytes(size, "file size").map_err(|e| e.in_file(path))?;
    let reader = SerializedFileReader::new(file).map_err(|e| fail(format!("not a Parquet table: {e}")))?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let column = |name: &str| {
        schema.columns().iter().position(|c| c.name() == name).ok_or_else(|| fail(format!("no column '{name}'")))
    };
    let (job, jct) = (column("job")?, column("jct")?);
    let rows = reader.get_row_iter(None).map_err(|e| fail(format!("unreadable: {e}")))?;
    let mut out = Vec::new();
    for (i, row) in rows.enumerate() {
        let at = |e: parquet::errors::ParquetError| fail(format!("row {i}: {e}"));
        let row = row.map_err(at)?;
        out.push((row.get_string(job).map_err(at)?.clone(), row.get_double(jct).map_err(at)?));
    }
    Ok(out)
}
