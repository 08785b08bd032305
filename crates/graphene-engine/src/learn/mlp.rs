//! A tanh MLP whose weights live at an offset of one flat parameter vector, and whose forward
//! pass appends its activations to a flat record buffer that the backward pass reads.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One MLP's place in the flat parameter vector and its layer widths. Hidden layers are tanh,
/// the output linear. Layer l's weights are stored row-major (one row per output unit), then its
/// biases.
#[derive(Clone, Debug)]
pub struct Mlp {
    off: usize,
    sizes: Vec<usize>,
}

impl Mlp {
    /// An MLP with layer widths `sizes` at `*off`, which moves past its parameters.
    pub fn new(off: &mut usize, sizes: &[usize]) -> Mlp {
        let m = Mlp { off: *off, sizes: sizes.to_vec() };
        *off += m.len();
        m
    }

    /// Parameter count.
    pub fn len(&self) -> usize {
        self.sizes.windows(2).map(|w| w[0] * w[1] + w[1]).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    fn record_len(&self) -> usize {
        self.sizes.iter().sum()
    }

    pub fn out_dim(&self) -> usize {
        *self.sizes.last().expect("an MLP has layers")
    }

    /// Appends the record [input, hidden activations..., output] to `a`; returns where it starts.
    pub fn forward(&self, p: &[f64], input: &[f64], a: &mut Vec<f64>) -> usize {
        debug_assert_eq!(input.len(), self.sizes[0]);
        let start = a.len();
        a.extend_from_slice(input);
        let layers = self.sizes.len() - 1;
        let mut w = self.off;
        let mut in_off = start;
        for l in 0..layers {
            let (ni, no) = (self.sizes[l], self.sizes[l + 1]);
            let out_off = a.len();
            a.resize(out_off + no, 0.0);
            let (head, tail) = a.split_at_mut(out_off);
            let inp = &head[in_off..in_off + ni];
            let bias = w + ni * no;
            for (o, slot) in tail.iter_mut().enumerate() {
                let row = &p[w + o * ni..w + (o + 1) * ni];
                let s = p[bias + o] + row.iter().zip(inp).map(|(a, b)| a * b).sum::<f64>();
                *slot = if l + 1 < layers { s.tanh() } else { s };
            }
            w = bias + no;
            in_off = out_off;
        }
        start
    }

    /// The output of the record starting at `start`.
    pub fn output<'a>(&self, a: &'a [f64], start: usize) -> &'a [f64] {
        let end = start + self.record_len();
        &a[end - self.out_dim()..end]
    }

    /// Adds d(out . dout)/d(params) to `g` and d(out . dout)/d(input) to `din`.
    pub fn backward(&self, p: &[f64], a: &[f64], start: usize, dout: &[f64], g: &mut [f64], din: &mut [f64]) {
        let layers = self.sizes.len() - 1;
        let mut act = Vec::with_capacity(layers + 1);
        let mut wo = Vec::with_capacity(layers);
        let (mut at, mut w) = (start, self.off);
        for l in 0..layers {
            act.push(at);
            wo.push(w);
            at += self.sizes[l];
            w += self.sizes[l] * self.sizes[l + 1] + self.sizes[l + 1];
        }
        let mut delta = dout.to_vec();
        for l in (0..layers).rev() {
            let (ni, no) = (self.sizes[l], self.sizes[l + 1]);
            let inp = &a[act[l]..act[l] + ni];
            let (w, bias) = (wo[l], wo[l] + ni * no);
            let mut dinp = vec![0.0; ni];
            for (o, &d) in delta.iter().enumerate() {
                if d == 0.0 {
                    continue;
                }
                g[bias + o] += d;
                let row = w + o * ni;
                for i in 0..ni {
                    g[row + i] += d * inp[i];
                    dinp[i] += p[row + i] * d;
                }
            }
            if l > 0 {
                for (d, h) in dinp.iter_mut().zip(inp) {
                    *d *= 1.0 - h * h;
                }
            } else {
                for (x, d) in din.iter_mut().zip(&dinp) {
                    *x += d;
                }
            }
            delta = dinp;
        }
    }
}

/// Glorot-uniform weights and zero biases for `mlps` (in that order, one ChaCha8 stream from
/// `seed`) in a vector of `len` parameters.
pub fn glorot_init(mlps: &[&Mlp], len: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut p = vec![0.0; len];
    for m in mlps {
        let mut w = m.off;
        for win in m.sizes.windows(2) {
            let (ni, no) = (win[0], win[1]);
            let a = (6.0 / (ni + no) as f64).sqrt();
            for x in &mut p[w..w + ni * no] {
                *x = rng.gen_range(-a..a);
            }
            w += ni * no + no;
        }
    }
    p
}
