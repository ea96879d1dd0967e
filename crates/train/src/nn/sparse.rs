//! The sparse first layer: at most ~37 of the 773 inputs of a position are non-zero
//! (all are 0 or 1), so `x · W + b` is the bias plus the sum of the active rows of `W`,
//! and the weight gradient touches only those rows. Done by hand on `f32` slices; the
//! dense layers after it run in burn.

use deepchess_core::SparseFeatures;
use rayon::prelude::*;

/// A batch of sparse inputs in compressed-row form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseBatch {
    /// Active feature indices of all rows, one row after the other.
    pub indices: Vec<u16>,
    /// Row `r` is `indices[offsets[r]..offsets[r + 1]]`.
    pub offsets: Vec<usize>,
}

impl SparseBatch {
    /// An empty batch.
    pub fn new() -> SparseBatch {
        SparseBatch { indices: Vec::new(), offsets: vec![0] }
    }

    /// Appends a row.
    pub fn push(&mut self, active: &[u16]) {
        self.indices.extend_from_slice(active);
        self.offsets.push(self.indices.len());
    }

    /// Appends every row of `other`.
    pub fn append(&mut self, other: &SparseBatch) {
        for r in 0..other.rows() {
            self.push(other.row(r));
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Active indices of row `r`.
    pub fn row(&self, r: usize) -> &[u16] {
        &self.indices[self.offsets[r]..self.offsets[r + 1]]
    }

    /// Rows `range` as a batch of their own.
    pub fn slice(&self, range: std::ops::Range<usize>) -> SparseBatch {
        let mut out = SparseBatch::new();
        for r in range {
            out.push(self.row(r));
        }
        out
    }

    /// The rows as a dense 0/1 matrix `[rows, width]`, row-major.
    pub fn to_dense(&self, width: usize) -> Vec<f32> {
        let mut out = vec![0.0; self.rows() * width];
        for r in 0..self.rows() {
            for &i in self.row(r) {
                out[r * width + usize::from(i)] = 1.0;
            }
        }
        out
    }
}

impl FromIterator<SparseFeatures> for SparseBatch {
    fn from_iter<T: IntoIterator<Item = SparseFeatures>>(iter: T) -> Self {
        let mut batch = SparseBatch::new();
        for f in iter {
            batch.push(f.as_slice());
        }
        batch
    }
}

/// Forward: `out[r] = bias + Σ weight[i]` over the active `i` of row `r`; `weight` is
/// `[inputs, outputs]` row-major. Returns `[rows, outputs]` row-major.
pub fn forward(batch: &SparseBatch, weight: &[f32], bias: &[f32]) -> Vec<f32> {
    let outputs = bias.len();
    let mut out = vec![0.0; batch.rows() * outputs];
    out.par_chunks_mut(outputs).enumerate().for_each(|(r, row)| {
        row.copy_from_slice(bias);
        for &i in batch.row(r) {
            let w = &weight[usize::from(i) * outputs..][..outputs];
            for (o, w) in row.iter_mut().zip(w) {
                *o += w;
            }
        }
    });
    out
}

/// Backward: given the gradient of the layer's output `[rows, outputs]`, returns the
/// weight gradient `[inputs, outputs]` (non-zero only on active rows) and the bias
/// gradient. Columns are split between threads, so no two threads write the same value.
pub fn backward(batch: &SparseBatch, grad_out: &[f32], inputs: usize, outputs: usize) -> (Vec<f32>, Vec<f32>) {
    let mut grad_w = vec![0.0; inputs * outputs];
    let mut grad_b = vec![0.0; outputs];
    let threads = rayon::current_num_threads().max(1);
    let width = outputs.div_ceil(threads).max(16);
    let mut column_blocks: Vec<(usize, Vec<f32>, Vec<f32>)> = (0..outputs)
        .step_by(width)
        .map(|start| {
            let len = width.min(outputs - start);
            (start, vec![0.0; inputs * len], vec![0.0; len])
        })
        .collect();
    column_blocks.par_iter_mut().for_each(|(start, gw, gb)| {
        let len = gb.len();
        for r in 0..batch.rows() {
            let g = &grad_out[r * outputs + *start..][..len];
            for (b, g) in gb.iter_mut().zip(g) {
                *b += g;
            }
            for &i in batch.row(r) {
                let w = &mut gw[usize::from(i) * len..][..len];
                for (w, g) in w.iter_mut().zip(g) {
                    *w += g;
                }
            }
        }
    });
    for (start, gw, gb) in column_blocks {
        let len = gb.len();
        grad_b[start..start + len].copy_from_slice(&gb);
        for i in 0..inputs {
            grad_w[i * outputs + start..][..len].copy_from_slice(&gw[i * len..][..len]);
        }
    }
    (grad_w, grad_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense_matmul(x: &[f32], w: &[f32], rows: usize, inputs: usize, outputs: usize) -> Vec<f32> {
        let mut out = vec![0.0; rows * outputs];
        for r in 0..rows {
            for i in 0..inputs {
                for o in 0..outputs {
                    out[r * outputs + o] += x[r * inputs + i] * w[i * outputs + o];
                }
            }
        }
        out
    }

    #[test]
    fn sparse_layer_matches_the_dense_product_forward_and_backward() {
        let (inputs, outputs) = (40, 37);
        let mut batch = SparseBatch::new();
        batch.push(&[0, 5, 39]);
        batch.push(&[]);
        batch.push(&[5, 6, 7, 20]);
        let w: Vec<f32> = (0..inputs * outputs).map(|k| (k as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..outputs).map(|k| k as f32 * 0.1).collect();
        let x = batch.to_dense(inputs);
        let out = forward(&batch, &w, &b);
        let expected = dense_matmul(&x, &w, 3, inputs, outputs);
        for r in 0..3 {
            for o in 0..outputs {
                assert!((out[r * outputs + o] - expected[r * outputs + o] - b[o]).abs() < 1e-5);
            }
        }
        let g: Vec<f32> = (0..3 * outputs).map(|k| (k as f32 * 0.11).cos()).collect();
        let (gw, gb) = backward(&batch, &g, inputs, outputs);
        for i in 0..inputs {
            for o in 0..outputs {
                let want: f32 = (0..3).map(|r| x[r * inputs + i] * g[r * outputs + o]).sum();
                assert!((gw[i * outputs + o] - want).abs() < 1e-5, "dW[{i},{o}]");
            }
        }
        for o in 0..outputs {
            let want: f32 = (0..3).map(|r| g[r * outputs + o]).sum();
            assert!((gb[o] - want).abs() < 1e-5);
        }
    }
}
