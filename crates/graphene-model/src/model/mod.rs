//! Plain data: DAGs of stages and tasks, clusters of machines, schedules.

mod cluster;
mod dag;
pub mod paths;
mod resources;
mod schedule;
mod workload;

pub use cluster::{Cluster, ClusterSpec, GroupLink, MachineGroup, Network};
pub use dag::{Dag, DagBuilder, EdgeKind, Stage, StageEdge, StageId, StageSpec, Task, TaskId, TaskSpec};
pub use resources::{ResVec, CAPACITY_EPS, MAX_RESOURCES};
pub use schedule::{Placement, Schedule};
pub use workload::{Job, Workload};
