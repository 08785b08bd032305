//! The graph neural network both learned schedulers embed their observations with, and the
//! stage-score network on top of it, forward and hand-written backward. Decima
//! (`online::decima::net`) and LACHESIS (`hetero::lachesis::net`) differ only in their feature
//! widths, in LACHESIS's edge term and in the score network's hidden widths, so one encoder
//! parameterised by those serves both and the backward pass exists once.
//!
//! Shapes (F node features, A edge features, D = 8 embedding, H = 16 hidden units; tanh hidden
//! layers, linear outputs):
//! * prep: F -> H -> D lifts x_v to the embedding width, so that "+ x_v" adds vectors of one size;
//! * node level: e_v = g_n(sum over children u of f_n(e_u)) + prep(x_v), plus h(sum over v's
//!   out-edges of a_vu) with edge features, and e_v = prep(x_v) for a node without children;
//!   f_n, g_n: D -> H -> D, h: A -> H -> D;
//! * job level: y_i = g_j(sum over nodes v of job i of f_j([x_v, e_v])); f_j: F + D -> H -> D,
//!   g_j: D -> H -> D;
//! * global level: z = g_g(sum over jobs i of f_g(y_i)); f_g, g_g: D -> H -> D;
//! * stage score q([x_v, e_v, y_i, z]): F + 3D -> hidden widths -> 1, one per candidate.
//!
//! Every sum runs in a fixed order (children, nodes, jobs and candidates in observation order),
//! so the same weights and observation give the same bits whichever caller asks; Decima's
//! embedding cache relies on that ([`Gnn::embed_nodes`] and [`Gnn::embed_job`] work on one
//! job's nodes as well as on all of them).

use std::ops::Range;

use super::Mlp;

/// Embedding width.
pub const D: usize = 8;
/// Hidden width of the GNN's MLPs.
pub const H: usize = 16;

/// What the encoder reads of an observation: nodes grouped by job (each job's nodes contiguous,
/// a child after its parents), their features, children and the candidates to score.
pub trait Graph {
    /// Node count.
    fn nodes(&self) -> usize;
    /// Node v's features (the encoder's node-feature width).
    fn x(&self, v: usize) -> &[f64];
    /// Node v's children (node indices, among v's job's nodes), in a fixed order.
    fn children(&self, v: usize) -> impl ExactSizeIterator<Item = usize> + '_;
    /// Adds the features of v's out-edges to `sum`, children in [`Graph::children`]'s order.
    /// Only called when the encoder has edge features.
    fn add_edge_features(&self, _v: usize, _sum: &mut [f64]) {}
    /// Whether some node of the observation has v as a child.
    fn has_parent(&self, v: usize) -> bool;
    /// Job count.
    fn jobs(&self) -> usize;
    /// Nodes of job i.
    fn nodes_of(&self, i: usize) -> Range<usize>;
    /// The job (index into the observation's jobs) of node v.
    fn job_of(&self, v: usize) -> usize;
    /// Nodes to score, in order.
    fn cand(&self) -> &[u32];
}

/// The [`Graph`] methods every observation type implements alike, from the fields and inherent
/// methods both models' observations have (`x`, `has_parent`, `job_of`, `cand`, `jobs()`,
/// `nodes_of()`), for use inside an `impl Graph` block that adds `children` (and edge features).
/// A macro rather than default methods: a trait cannot name its implementors' fields.
macro_rules! graph_accessors {
    () => {
        fn nodes(&self) -> usize {
            self.x.len()
        }

        fn x(&self, v: usize) -> &[f64] {
            &self.x[v]
        }

        fn has_parent(&self, v: usize) -> bool {
            self.has_parent[v]
        }

        fn jobs(&self) -> usize {
            Self::jobs(self)
        }

        fn nodes_of(&self, i: usize) -> std::ops::Range<usize> {
            Self::nodes_of(self, i)
        }

        fn job_of(&self, v: usize) -> usize {
            self.job_of[v] as usize
        }

        fn cand(&self) -> &[u32] {
            &self.cand
        }
    };
}
pub(crate) use graph_accessors;

/// `s` as an embedding.
pub fn to_arr(s: &[f64]) -> [f64; D] {
    let mut out = [0.0; D];
    out.copy_from_slice(s);
    out
}

/// `dst += src`, element by element.
pub fn add(dst: &mut [f64; D], src: &[f64]) {
    for (x, y) in dst.iter_mut().zip(src) {
        *x += y;
    }
}

/// Where each MLP of the encoder and the score network sits in the parameter vector.
#[derive(Clone, Debug)]
pub struct Gnn {
    prep: Mlp,
    f_node: Mlp,
    g_node: Mlp,
    h_edge: Option<Mlp>,
    f_job: Mlp,
    g_job: Mlp,
    f_glob: Mlp,
    g_glob: Mlp,
    q: Mlp,
    /// Node features.
    f: usize,
}

/// The records of the node level of a range of nodes (indices local to the range).
pub struct NodeLevel {
    prep_at: Vec<usize>,
    fn_at: Vec<usize>,
    gn_at: Vec<usize>,
    h_at: Vec<usize>,
    /// The node embeddings e_v.
    pub e: Vec<[f64; D]>,
}

/// The records of one job's job level.
pub struct JobLevel {
    /// f_j's record of each node of the job.
    fj_at: Vec<usize>,
    gj_at: usize,
    /// The job embedding y_i.
    pub y: [f64; D],
    fg_at: usize,
    /// The job's term f_g(y_i) of the global sum.
    pub fg: [f64; D],
}

/// Everything the forward pass computed for one observation, kept for the backward pass.
pub struct Pass {
    /// The MLP records (callers may append their own heads' records).
    pub a: Vec<f64>,
    prep_at: Vec<usize>,
    fn_at: Vec<usize>,
    gn_at: Vec<usize>,
    h_at: Vec<usize>,
    fj_at: Vec<usize>,
    gj_at: Vec<usize>,
    /// Job embeddings.
    pub y: Vec<[f64; D]>,
    fg_at: Vec<usize>,
    gg_at: usize,
    /// The global summary.
    pub z: [f64; D],
    q_at: Vec<usize>,
    /// One score per candidate of the observation.
    pub q: Vec<f64>,
}

impl Pass {
    /// A pass that carries only the scores, job embeddings and global summary (and the record
    /// buffer a caller's heads append to), without the records a backward pass would need.
    pub fn scores_only(a: Vec<f64>, y: Vec<[f64; D]>, z: [f64; D], q: Vec<f64>) -> Pass {
        Pass {
            a,
            prep_at: Vec::new(),
            fn_at: Vec::new(),
            gn_at: Vec::new(),
            h_at: Vec::new(),
            fj_at: Vec::new(),
            gj_at: Vec::new(),
            y,
            fg_at: Vec::new(),
            gg_at: usize::MAX,
            z,
            q_at: Vec::new(),
            q,
        }
    }
}

/// Gradients with respect to the node embeddings, job embeddings and global summary, which the
/// score heads fill and [`Gnn::backward_embed`] carries down to the parameters.
pub struct EmbedGrad {
    pub de: Vec<[f64; D]>,
    pub dy: Vec<[f64; D]>,
    pub dz: [f64; D],
}

impl Gnn {
    /// The encoder for `f` node features and `edge` edge features (None: no edge term), with a
    /// score network of hidden widths `score_hidden`, at `*off` (which moves past it). The MLPs
    /// are laid out prep, f_n, g_n, [h], f_j, g_j, f_g, g_g, q.
    pub fn new(off: &mut usize, f: usize, edge: Option<usize>, score_hidden: &[usize]) -> Gnn {
        let prep = Mlp::new(off, &[f, H, D]);
        let f_node = Mlp::new(off, &[D, H, D]);
        let g_node = Mlp::new(off, &[D, H, D]);
        let h_edge = edge.map(|a| Mlp::new(off, &[a, H, D]));
        let f_job = Mlp::new(off, &[f + D, H, D]);
        let g_job = Mlp::new(off, &[D, H, D]);
        let f_glob = Mlp::new(off, &[D, H, D]);
        let g_glob = Mlp::new(off, &[D, H, D]);
        let q_sizes: Vec<usize> =
            std::iter::once(f + 3 * D).chain(score_hidden.iter().copied()).chain(std::iter::once(1)).collect();
        let q = Mlp::new(off, &q_sizes);
        Gnn { prep, f_node, g_node, h_edge, f_job, g_job, f_glob, g_glob, q, f }
    }

    /// The MLPs in parameter order (for initialization).
    pub fn mlps(&self) -> Vec<&Mlp> {
        let mut m = vec![&self.prep, &self.f_node, &self.g_node];
        m.extend(&self.h_edge);
        m.extend([&self.f_job, &self.g_job, &self.f_glob, &self.g_glob, &self.q]);
        m
    }

    /// The node level of `nodes` (whole jobs: every child of one of them is among them), their
    /// records appended to `a`.
    pub fn embed_nodes(&self, p: &[f64], g: &impl Graph, nodes: Range<usize>, a: &mut Vec<f64>) -> NodeLevel {
        let base = nodes.start;
        let n = nodes.len();
        let prep_at: Vec<usize> = nodes.map(|v| self.prep.forward(p, g.x(v), a)).collect();
        let mut e = vec![[0.0; D]; n];
        let mut fn_at = vec![usize::MAX; n];
        let mut gn_at = vec![usize::MAX; n];
        let mut h_at = vec![usize::MAX; n];
        let mut ea = vec![0.0; self.h_edge.as_ref().map_or(0, |h| h.sizes()[0])];
        // A child has a higher index than its parents, so a reverse sweep sees every child
        // before its parents.
        for l in (0..n).rev() {
            let v = base + l;
            let kids = g.children(v);
            let mut ev = to_arr(self.prep.output(a, prep_at[l]));
            if kids.len() > 0 {
                let mut s = [0.0; D];
                for u in kids {
                    add(&mut s, self.f_node.output(a, fn_at[u - base]));
                }
                gn_at[l] = self.g_node.forward(p, &s, a);
                add(&mut ev, self.g_node.output(a, gn_at[l]));
                if let Some(h) = &self.h_edge {
                    ea.fill(0.0);
                    g.add_edge_features(v, &mut ea);
                    h_at[l] = h.forward(p, &ea, a);
                    add(&mut ev, h.output(a, h_at[l]));
                }
            }
            e[l] = ev;
            if g.has_parent(v) {
                fn_at[l] = self.f_node.forward(p, &ev, a);
            }
        }
        NodeLevel { prep_at, fn_at, gn_at, h_at, e }
    }

    /// The job level of the job whose nodes are `nodes`, with embeddings `e` (one per node of
    /// `nodes`), its records appended to `a`. `inp` is scratch.
    pub fn embed_job(
        &self,
        p: &[f64],
        g: &impl Graph,
        nodes: Range<usize>,
        e: &[[f64; D]],
        a: &mut Vec<f64>,
        inp: &mut Vec<f64>,
    ) -> JobLevel {
        let f = self.f;
        inp.resize(f + D, 0.0);
        let mut s = [0.0; D];
        let mut fj_at = Vec::with_capacity(nodes.len());
        for (v, ev) in nodes.zip(e) {
            inp[..f].copy_from_slice(g.x(v));
            inp[f..f + D].copy_from_slice(ev);
            let at = self.f_job.forward(p, &inp[..f + D], a);
            add(&mut s, self.f_job.output(a, at));
            fj_at.push(at);
        }
        let gj_at = self.g_job.forward(p, &s, a);
        let y = to_arr(self.g_job.output(a, gj_at));
        let fg_at = self.f_glob.forward(p, &y, a);
        let fg = to_arr(self.f_glob.output(a, fg_at));
        JobLevel { fj_at, gj_at, y, fg_at, fg }
    }

    /// The global summary z from the sum of the jobs' f_g terms; returns (its record, z).
    pub fn summarize(&self, p: &[f64], zs: &[f64; D], a: &mut Vec<f64>) -> (usize, [f64; D]) {
        let at = self.g_glob.forward(p, zs, a);
        (at, to_arr(self.g_glob.output(a, at)))
    }

    /// The score of a node with features `x` and embedding `e` in a job with embedding `y`;
    /// returns (its record, the score). `inp` is scratch.
    #[allow(clippy::too_many_arguments)]
    pub fn score(
        &self,
        p: &[f64],
        x: &[f64],
        e: &[f64; D],
        y: &[f64; D],
        z: &[f64; D],
        a: &mut Vec<f64>,
        inp: &mut Vec<f64>,
    ) -> (usize, f64) {
        let f = self.f;
        inp.resize(f + 3 * D, 0.0);
        inp[..f].copy_from_slice(x);
        inp[f..f + D].copy_from_slice(e);
        inp[f + D..f + 2 * D].copy_from_slice(y);
        inp[f + 2 * D..f + 3 * D].copy_from_slice(z);
        let at = self.q.forward(p, &inp[..f + 3 * D], a);
        (at, self.q.output(a, at)[0])
    }

    /// Embeddings and candidate scores of `g`, with every record kept.
    pub fn forward(&self, p: &[f64], g: &impl Graph) -> Pass {
        let n = g.nodes();
        let mut a = Vec::with_capacity(n * 200);
        let nl = self.embed_nodes(p, g, 0..n, &mut a);
        let jobs = g.jobs();
        let mut inp = Vec::new();
        let mut fj_at = vec![0; n];
        let mut gj_at = Vec::with_capacity(jobs);
        let mut y = Vec::with_capacity(jobs);
        let mut fg_at = Vec::with_capacity(jobs);
        let mut zs = [0.0; D];
        for i in 0..jobs {
            let nodes = g.nodes_of(i);
            let jl = self.embed_job(p, g, nodes.clone(), &nl.e[nodes.clone()], &mut a, &mut inp);
            fj_at[nodes].copy_from_slice(&jl.fj_at);
            gj_at.push(jl.gj_at);
            y.push(jl.y);
            fg_at.push(jl.fg_at);
            add(&mut zs, &jl.fg);
        }
        let (gg_at, z) = self.summarize(p, &zs, &mut a);
        let mut q_at = Vec::with_capacity(g.cand().len());
        let mut q = Vec::with_capacity(g.cand().len());
        for &c in g.cand() {
            let v = c as usize;
            let (at, s) = self.score(p, g.x(v), &nl.e[v], &y[g.job_of(v)], &z, &mut a, &mut inp);
            q.push(s);
            q_at.push(at);
        }
        let NodeLevel { prep_at, fn_at, gn_at, h_at, .. } = nl;
        Pass { a, prep_at, fn_at, gn_at, h_at, fj_at, gj_at, y, fg_at, gg_at, z, q_at, q }
    }

    /// Back-propagates the candidate-score gradient `dq` into `grad` (the score network's
    /// parameters) and into the returned embedding gradients.
    pub fn backward_scores(&self, p: &[f64], g: &impl Graph, pass: &Pass, dq: &[f64], grad: &mut [f64]) -> EmbedGrad {
        let f = self.f;
        let mut d = EmbedGrad { de: vec![[0.0; D]; g.nodes()], dy: vec![[0.0; D]; g.jobs()], dz: [0.0; D] };
        let mut din = vec![0.0; f + 3 * D];
        for (c, &dc) in dq.iter().enumerate() {
            if dc == 0.0 {
                continue;
            }
            let v = g.cand()[c] as usize;
            din.fill(0.0);
            self.q.backward(p, &pass.a, pass.q_at[c], &[dc], grad, &mut din);
            add(&mut d.de[v], &din[f..f + D]);
            add(&mut d.dy[g.job_of(v)], &din[f + D..f + 2 * D]);
            add(&mut d.dz, &din[f + 2 * D..]);
        }
        d
    }

    /// Back-propagates the embedding gradients `d` through the global, job and node levels into
    /// `grad`.
    pub fn backward_embed(&self, p: &[f64], g: &impl Graph, pass: &Pass, d: EmbedGrad, grad: &mut [f64]) {
        let f = self.f;
        let n = g.nodes();
        let a = &pass.a;
        let EmbedGrad { mut de, mut dy, dz } = d;
        let mut dsum = [0.0; D];
        self.g_glob.backward(p, a, pass.gg_at, &dz, grad, &mut dsum);
        let mut dfj = vec![0.0; f + D];
        for i in 0..g.jobs() {
            let mut din = [0.0; D];
            self.f_glob.backward(p, a, pass.fg_at[i], &dsum, grad, &mut din);
            add(&mut dy[i], &din);
            let mut ds = [0.0; D];
            self.g_job.backward(p, a, pass.gj_at[i], &dy[i], grad, &mut ds);
            for v in g.nodes_of(i) {
                dfj.fill(0.0);
                self.f_job.backward(p, a, pass.fj_at[v], &ds, grad, &mut dfj);
                add(&mut de[v], &dfj[f..]);
            }
        }
        // Parents before children: when node v is reached, every parent has sent its share.
        let mut dfn = vec![[0.0; D]; n];
        let mut sink = vec![0.0; f.max(self.h_edge.as_ref().map_or(0, |h| h.sizes()[0]))];
        for v in 0..n {
            if pass.fn_at[v] != usize::MAX && dfn[v].iter().any(|&x| x != 0.0) {
                let mut din = [0.0; D];
                self.f_node.backward(p, a, pass.fn_at[v], &dfn[v], grad, &mut din);
                add(&mut de[v], &din);
            }
            let dev = de[v];
            self.prep.backward(p, a, pass.prep_at[v], &dev, grad, &mut sink);
            if pass.gn_at[v] != usize::MAX {
                let mut ds = [0.0; D];
                self.g_node.backward(p, a, pass.gn_at[v], &dev, grad, &mut ds);
                if let Some(h) = &self.h_edge {
                    h.backward(p, a, pass.h_at[v], &dev, grad, &mut sink);
                }
                for u in g.children(v) {
                    add(&mut dfn[u], &ds);
                }
            }
        }
    }
}
