//! Demand profiles. (Being written.)
use crate::error::{Error, Result};
use crate::model::Dag;
pub struct Profile;
impl Profile {
    pub fn by_name(name: &str) -> Result<Profile> {
        Err(Error::Usage(format!("unknown demand profile '{name}'")))
    }
    pub fn default_for(_f: super::Format) -> Profile {
        Profile
    }
    pub fn apply(&self, dag: &Dag, _seed: u64) -> Dag {
        dag.clone()
    }
}
