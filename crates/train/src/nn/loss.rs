//! Losses (as burn tensors, for back-propagation) and ranking metrics (on plain values).

use burn::tensor::{Tensor, activation};

use super::graph::Graph;

/// Mean cross-entropy of `logits` `[rows, classes]` against class `labels`.
pub fn cross_entropy(graph: &Graph<'_>, logits: Tensor<2>, labels: &[usize]) -> Tensor<1> {
    let [rows, classes] = logits.dims();
    let mut onehot = vec![0.0; rows * classes];
    for (r, &l) in labels.iter().enumerate() {
        onehot[r * classes + l] = 1.0;
    }
    let onehot = graph.constant(onehot, rows, classes);
    (activation::log_softmax(logits, 1) * onehot).sum().neg().div_scalar(rows as f64)
}

/// Mean squared error over all elements.
pub fn mse(prediction: Tensor<2>, target: Tensor<2>) -> Tensor<1> {
    (prediction - target).square().mean()
}

/// Mean cross-entropy of row-major `logits` `[rows, classes]` (plain values).
pub fn cross_entropy_values(logits: &[f32], classes: usize, labels: &[usize]) -> f64 {
    let total: f64 = logits
        .chunks(classes)
        .zip(labels)
        .map(|(row, &l)| {
            let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
            sum.ln() - f64::from(row[l] - max)
        })
        .sum();
    total / labels.len().max(1) as f64
}

/// Rank of `row[label]` among `row` (0 = the highest; ties count against the label).
pub fn rank(row: &[f32], label: usize) -> usize {
    row.iter().enumerate().filter(|&(i, &v)| i != label && v >= row[label]).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_cross_entropy_values() {
        assert_eq!(rank(&[0.1, 0.5, 0.3], 1), 0);
        assert_eq!(rank(&[0.1, 0.5, 0.3], 0), 2);
        let ce = cross_entropy_values(&[0.0, 0.0], 2, &[1]);
        assert!((ce - std::f64::consts::LN_2).abs() < 1e-9);
    }
}
