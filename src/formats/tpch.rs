//! Decima TPC-H JSON. (Being written.)
use crate::error::{Error, Result};
use crate::model::Dag;
pub fn parse(_text: &str, _name: &str, _query: Option<u32>, _executors: u32) -> Result<Vec<Dag>> {
    Err(Error::Usage("TPC-H input is not supported yet".into()))
}
