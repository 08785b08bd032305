//! Cluster files and the `--capacity` flag.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::ClusterSpec;

pub fn parse(text: &str) -> Result<ClusterSpec> {
    serde_json::from_str(text).map_err(|e| Error::from_json(&e))
}

pub fn load(path: &Path) -> Result<ClusterSpec> {
    let text = super::read_text(path)?;
    parse(&text).map_err(|e| e.in_file(path))
}

/// Parses `cpu=16,mem=64,disk=200,net=1250`.
pub fn parse_capacity(s: &str) -> Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--capacity: '{part}' is not NAME=VALUE")))?;
        let value: f64 = v
            .trim()
            .parse()
            .map_err(|_| Error::Usage(format!("--capacity: '{v}' for {k} is not a number")))?;
        if !value.is_finite() || value < 0.0 {
            return Err(Error::Usage(format!("--capacity: {k}={value} must be a finite number >= 0")));
        }
        if out.insert(k.trim().to_string(), value).is_some() {
            return Err(Error::Usage(format!("--capacity: {k} is given twice")));
        }
    }
    if out.is_empty() {
        return Err(Error::Usage("--capacity: no resources given".into()));
    }
    Ok(out)
}
