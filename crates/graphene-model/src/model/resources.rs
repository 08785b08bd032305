//! Fixed-size resource vectors.
//!
//! A fixed array keeps every vector operation branch-free and allocation-free in the placement
//! loops; the few unused dimensions stay zero and cost nothing in comparisons.

use serde::{Deserialize, Serialize};

/// Most resource dimensions a DAG may name (cores, memory, disk, network and a few spares).
pub const MAX_RESOURCES: usize = 8;

/// Relative slack when comparing a sum of demands with a capacity, so that sums of decimal
/// demands such as 0.1 + 0.2 do not spuriously exceed 0.3.
pub const CAPACITY_EPS: f64 = 1e-9;

#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct ResVec(pub [f64; MAX_RESOURCES]);

impl ResVec {
    pub const ZERO: ResVec = ResVec([0.0; MAX_RESOURCES]);

    pub fn from_slice(values: &[f64]) -> ResVec {
        let mut v = ResVec::ZERO;
        v.0[..values.len()].copy_from_slice(values);
        v
    }

    #[inline]
    pub fn add(&self, other: &ResVec) -> ResVec {
        let mut out = *self;
        for i in 0..MAX_RESOURCES {
            out.0[i] += other.0[i];
        }
        out
    }

    #[inline]
    pub fn add_assign(&mut self, other: &ResVec) {
        for i in 0..MAX_RESOURCES {
            self.0[i] += other.0[i];
        }
    }

    #[inline]
    pub fn sub_assign(&mut self, other: &ResVec) {
        for i in 0..MAX_RESOURCES {
            self.0[i] -= other.0[i];
        }
    }

    #[inline]
    pub fn scale(&self, k: f64) -> ResVec {
        let mut out = *self;
        for x in out.0.iter_mut() {
            *x *= k;
        }
        out
    }

    /// True when `self + extra` stays within `cap` on every dimension not masked out.
    #[inline]
    pub fn fits_with(&self, extra: &ResVec, cap: &ResVec, checked: &[bool; MAX_RESOURCES]) -> bool {
        for i in 0..MAX_RESOURCES {
            if checked[i] && self.0[i] + extra.0[i] > cap.0[i] * (1.0 + CAPACITY_EPS) + CAPACITY_EPS {
                return false;
            }
        }
        true
    }

    /// True when this demand fits an empty machine of capacity `cap` on every dimension.
    #[inline]
    pub fn fits_in(&self, cap: &ResVec) -> bool {
        ResVec::ZERO.fits_with(self, cap, &[true; MAX_RESOURCES])
    }

    #[inline]
    pub fn dot(&self, other: &ResVec) -> f64 {
        let mut s = 0.0;
        for i in 0..MAX_RESOURCES {
            s += self.0[i] * other.0[i];
        }
        s
    }

    /// Each dimension divided by the matching capacity (0 where the capacity is 0).
    #[inline]
    pub fn normalized_by(&self, cap: &ResVec) -> ResVec {
        let mut out = ResVec::ZERO;
        for i in 0..MAX_RESOURCES {
            if cap.0[i] > 0.0 {
                out.0[i] = self.0[i] / cap.0[i];
            }
        }
        out
    }

    pub fn max_component(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&x| x == 0.0)
    }
}
