//! Adam (Kingma & Ba), as PyTorch computes it, over named flat parameter buffers.
//!
//! The optimiser is ours rather than burn's so that its whole state (moments and step
//! count) lives next to the parameters in one checkpoint and `--resume` continues a run
//! bit for bit, and so that the sparse first layer's gradient (built by hand, see
//! [`super::sparse`]) goes through the same update as every other tensor.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::params::Params;

/// Exponential decay of the first moment.
pub const BETA1: f32 = 0.9;
/// Exponential decay of the second moment.
pub const BETA2: f32 = 0.999;
/// Added to the root of the second moment.
pub const EPSILON: f32 = 1e-8;

/// Adam's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adam {
    /// Updates done so far, per tensor (as PyTorch counts them per parameter).
    pub steps: BTreeMap<String, u64>,
    /// First moments by tensor name.
    pub m: BTreeMap<String, Vec<f32>>,
    /// Second moments by tensor name.
    pub v: BTreeMap<String, Vec<f32>>,
}

impl Adam {
    /// Applies one update with learning rate `lr` to every tensor that has a gradient.
    pub fn update(&mut self, params: &mut Params, grads: &BTreeMap<String, Vec<f32>>, lr: f32) {
        self.update_with_weight_decay(params, grads, lr, 0.0)
    }

    /// AdamW (Loshchilov & Hutter), as PyTorch computes it: every parameter with a gradient
    /// first shrinks by `lr × weight_decay` of itself, then takes Adam's step.
    pub fn update_with_weight_decay(
        &mut self,
        params: &mut Params,
        grads: &BTreeMap<String, Vec<f32>>,
        lr: f32,
        weight_decay: f32,
    ) {
        let keep = 1.0 - lr * weight_decay;
        for (name, g) in grads {
            let t = self.steps.entry(name.clone()).or_insert(0);
            *t += 1;
            let (c1, c2) = (1.0 - BETA1.powi(*t as i32), 1.0 - BETA2.powi(*t as i32));
            let p = params.values.get_mut(name).unwrap_or_else(|| panic!("gradient for unknown tensor `{name}`"));
            let m = self.m.entry(name.clone()).or_insert_with(|| vec![0.0; p.len()]);
            let v = self.v.entry(name.clone()).or_insert_with(|| vec![0.0; p.len()]);
            assert_eq!(g.len(), p.len(), "gradient of `{name}` has the wrong length");
            p.par_chunks_mut(4096)
                .zip(m.par_chunks_mut(4096))
                .zip(v.par_chunks_mut(4096))
                .zip(g.par_chunks(4096))
                .for_each(|(((p, m), v), g)| {
                    for i in 0..p.len() {
                        m[i] = BETA1 * m[i] + (1.0 - BETA1) * g[i];
                        v[i] = BETA2 * v[i] + (1.0 - BETA2) * g[i] * g[i];
                        p[i] = p[i] * keep - lr * (m[i] / c1) / ((v[i] / c2).sqrt() + EPSILON);
                    }
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::{Activation, StackSpec};

    #[test]
    fn first_step_moves_each_weight_by_lr_against_its_gradient() {
        let mut params = Params::init(vec![StackSpec::new("s", &[2, 1], Activation::Relu)], 1);
        let before = params.clone();
        let grads = BTreeMap::from([("s.0.weight".to_string(), vec![3.0, -0.5])]);
        let mut adam = Adam::default();
        adam.update(&mut params, &grads, 0.01);
        let (a, b) = (before.get("s.0.weight"), params.get("s.0.weight"));
        assert!((a[0] - b[0] - 0.01).abs() < 1e-6 && (b[1] - a[1] - 0.01).abs() < 1e-6);
        assert_eq!(params.get("s.0.bias"), before.get("s.0.bias"), "no gradient, no change");
    }
}
