//! WfCommons WfFormat JSON. (Being written.)
use crate::error::{Error, Result};
use crate::model::Dag;
pub fn parse(_text: &str, _name: &str) -> Result<Dag> {
    Err(Error::Usage("WfCommons input is not supported yet".into()))
}
