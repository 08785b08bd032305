//! `decima`: Decima (Mao et al., SIGCOMM'19, "Learning Scheduling Algorithms for Data Processing
//! Clusters"), a scheduling policy learned by reinforcement learning, adapted to this
//! simulator's multi-resource machines and heartbeats.
//!
//! * [`features`]: the state, one node per unfinished stage of every active job.
//! * [`net`]: the graph neural network (node, job and global levels, each with its own f and
//!   g) and the stage and limit scores, forward and hand-written backward.
//! * [`cache`]: job embeddings reused between actions (inference speed, same scores).
//! * [`memo`]: leftovers known to fit nothing (skips scans, same decisions).
//! * [`policy`]: the online policy (greedy by default, sampling during training).
//! * [`train`]: REINFORCE with input-dependent baselines, curriculum, Adam, entropy bonus.
//! * [`model`]: the weights file, and the model trained for this repository.
//! * [`setting`]: the cluster and job mix a model was trained for, and how a run differs.
//!
//! # Actions, executors and limits
//!
//! Decima hands out interchangeable executors. An action ⟨v, l_i⟩ picks stage v and a limit
//! l_i on the executors of v's job i; executors go to v until i holds l_i, and executors that
//! finish a task stay on their stage while it has tasks. l_i must exceed what i holds, so every
//! action places at least one executor.
//!
//! Here a machine reports free cores, memory, disk and network at a heartbeat; tasks of
//! different stages ask for different amounts. The mapping:
//! * **What a job holds** is its dominant share of the cluster: the largest, over the resources
//!   held to capacity, of its running tasks' requested demand over the cluster total. With
//!   one-slot tasks this is executors / cluster size, Decima's count up to a constant; with
//!   multi-resource tasks it counts a 4-core task as four 1-core ones, as a limit on a job's
//!   footprint should.
//! * **Limit levels** are l = k / 20 of the cluster for k = 1..19, and "no limit" (k = 20).
//!   Decima's levels are executor counts 1..N (N = 50 or 100 executors in the paper); 20
//!   evenly spaced shares keep the score function's work per action fixed whatever the cluster
//!   size (1,000 Alibaba machines would otherwise mean thousands of levels), at a resolution of
//!   5% of the cluster: 8 cores on the experiments' 10 x 16-core cluster, 2 to 8 tasks.
//!   Only levels above the job's current share are offered (the paper's rule), and the
//!   unlimited level always is, so the softmax over levels is never empty.
//! * **An action on machine m** picks runnable tasks of v, lowest id first, while they fit
//!   what is left of m's free resources and the job's share (counting tasks just picked) is
//!   below l; the first always goes, so every action launches at least one task. v's stage is
//!   then *committed*: at later heartbeats, freed resources first go back to committed stages
//!   of each job (arrival order) up to the job's limit, as Decima's executors stay on their
//!   stage, and a stage is uncommitted once every task of it is launched. Then the agent acts
//!   again, until no runnable task fits m.
//! * **Candidates** (the stage softmax's mask) are the stages with a runnable task that fits
//!   m's free resources, not just the runnable ones: a stage that cannot place a task on m
//!   would break the "at least one task per action" rule. Which machine is asking is part of
//!   the state (node features 5 and 6).
//! * **Scheduling events.** Decima calls the agent when the set of runnable stages changes and
//!   executors are free. Here it is called at any heartbeat where a runnable task still fits
//!   after the committed stages took their share: free resources appear when tasks end, and a
//!   heartbeat is where this simulator offers them.
//!
//! # Other departures from the paper, and why
//!
//! * The GNN lifts x_v to the embedding width with a small MLP before message passing (as
//!   decima-sim does) and uses tanh rather than leaky ReLU (see [`net`]).
//! * Stage fit and demand are node features and a job's remaining work a job feature: Decima's
//!   executors need no packing, our machines do.
//! * Training: reward-to-go from the action on (exact integral of jobs in system), advantages
//!   normalized per iteration, rollouts cut at a memoryless τ: see [`train`]. The budget is what
//!   two CPU cores give in minutes, not the paper's days on a GPU cluster.
//! * Inference is greedy (argmax, ties to the earlier job and lower stage) for deterministic
//!   replays; the paper samples at test time as well.

pub mod cache;
pub mod features;
pub mod memo;
pub mod model;
pub mod net;
pub mod policy;
pub mod setting;
pub mod train;

pub use model::Model;
pub use policy::{ActionLog, Decima};
pub use setting::{RunShape, Setting};
pub use train::{train, train_from, train_with, HeldOut, IterStats, TrainConfig, TrainWaves, Trained};
