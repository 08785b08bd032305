//! Reading a schedule file back (for `validate` and later for export and plots).

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::validate::Entry;

#[derive(Debug, Deserialize)]
pub struct ScheduleFile {
    #[serde(default)]
    pub dag: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    #[serde(default)]
    pub makespan: Option<f64>,
    pub tasks: Vec<Entry>,
    #[serde(default)]
    pub order: Vec<String>,
    /// Duplicated runs of tasks (schedules made with task duplication, e.g. DEFT).
    #[serde(default)]
    pub copies: Vec<Entry>,
}

pub fn parse(text: &str) -> Result<ScheduleFile> {
    serde_json::from_str(text).map_err(|e| Error::from_json(&e))
}

pub fn load(path: &Path) -> Result<ScheduleFile> {
    let text = super::read_text(path)?;
    parse(&text).map_err(|e| e.in_file(path))
}
