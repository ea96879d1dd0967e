//! One optimiser step of the burn-graph trainers, data-parallel over fixed-size shards.
//!
//! A batch is cut into shards of [`SHARD_ROWS`] rows ([`Shards`]); each shard builds its
//! own [`Graph`], runs forward and backward on a thread of its own, and yields gradients of
//! its share of the batch's mean loss; the shards' gradients are summed in shard order and Adam takes
//! one step. The result is the full batch's gradient (up to the order of float sums), and
//! it does not depend on the number of threads, since the shards are fixed by the batch.
//! Threads then spend their time in whole forward and backward passes rather than
//! waiting on each other at every operation of one large graph (`deepchess bench train
//! --shard-rows` measures the choice of [`SHARD_ROWS`]).

use std::collections::BTreeMap;
use std::ops::Range;

use burn::tensor::{Device, Tensor};
use rayon::prelude::*;

use super::adam::Adam;
use super::graph::{Graph, to_vec};
use super::params::Params;

/// Rows (pairs or positions, as the trainer counts them) per shard in training.
pub const SHARD_ROWS: usize = 250;

/// How a batch is cut: `rows` rows in shards of `per_shard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shards {
    /// Rows in the batch.
    pub rows: usize,
    /// Rows per shard (the last shard may hold fewer).
    pub per_shard: usize,
}

impl Shards {
    /// A batch of `rows` rows in shards of [`SHARD_ROWS`], as the trainers cut it.
    pub fn of(rows: usize) -> Shards {
        Shards { rows, per_shard: SHARD_ROWS }
    }

    /// The shards' row ranges, in order.
    pub fn ranges(self) -> Vec<Range<usize>> {
        let step = self.per_shard.max(1);
        (0..self.rows).step_by(step).map(|start| start..(start + step).min(self.rows)).collect()
    }
}

/// One training step on a batch cut into `shards`: `forward` builds the graph of the
/// rows in its range and returns their mean loss and anything else the trainer wants
/// back (one value per shard, in order); the tensors for which `trainable(name)` holds
/// get gradients, and Adam updates them with learning rate `lr`. Returns the batch's mean
/// loss and the shards' values.
pub fn step<T: Send>(
    params: &mut Params,
    adam: &mut Adam,
    lr: f64,
    device: &Device,
    shards: Shards,
    trainable: impl Fn(&str) -> bool + Sync,
    forward: impl Fn(&mut Graph<'_>, Range<usize>) -> anyhow::Result<(Tensor<1>, T)> + Sync,
) -> anyhow::Result<(f64, Vec<T>)> {
    let rows = shards.rows;
    anyhow::ensure!(rows > 0, "a training step needs at least one row");
    let shared: &Params = params;
    let results = shards
        .ranges()
        .into_par_iter()
        .map(|range| {
            let share = range.len() as f64 / rows as f64;
            let mut graph = Graph::new(shared, device, &trainable);
            let (loss, extra) = forward(&mut graph, range)?;
            let loss = loss.mul_scalar(share);
            let value = f64::from(to_vec(loss.clone())[0]);
            let grads = loss.backward();
            Ok((graph.gradients(&grads), value, extra))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut loss = 0.0;
    let mut extras = Vec::with_capacity(results.len());
    let mut total: Option<BTreeMap<String, Vec<f32>>> = None;
    for (grads, value, extra) in results {
        loss += value;
        extras.push(extra);
        match &mut total {
            None => total = Some(grads),
            Some(total) => add_gradients(total, grads),
        }
    }
    adam.update(params, &total.unwrap_or_default(), lr as f32);
    Ok((loss, extras))
}

/// Adds `more` into `total`, tensor by tensor.
fn add_gradients(total: &mut BTreeMap<String, Vec<f32>>, more: BTreeMap<String, Vec<f32>>) {
    for (name, g) in more {
        match total.get_mut(&name) {
            Some(acc) => acc.par_chunks_mut(4096).zip(g.par_chunks(4096)).for_each(|(a, g)| {
                a.iter_mut().zip(g).for_each(|(a, g)| *a += g);
            }),
            None => {
                total.insert(name, g);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use deepchess_core::{Activation, StackSpec};

    use super::*;
    use crate::device::DeviceChoice;
    use crate::nn::graph::Input;
    use crate::nn::loss::cross_entropy;
    use crate::nn::sparse::SparseBatch;

    /// Parameters after two steps of a small sparse-input stack on 150 rows cut into
    /// shards of `per_shard`, and the losses of the two steps.
    fn two_steps(per_shard: usize) -> (Params, Vec<f64>) {
        let device = DeviceChoice::Cpu.device().unwrap().autodiff();
        let mut params = Params::init(vec![StackSpec::new("s", &[40, 16, 8, 3], Activation::Relu)], 5);
        let mut adam = Adam::default();
        let mut batch = SparseBatch::new();
        for r in 0..150u16 {
            batch.push(&[r % 40, (r * 7 + 3) % 40, (r * 13 + 11) % 40]);
        }
        let labels: Vec<usize> = (0..150).map(|r| (r * 5 % 7) % 3).collect();
        let losses = (0..2)
            .map(|_| {
                let shards = Shards { rows: 150, per_shard };
                let (loss, logits) = step(
                    &mut params,
                    &mut adam,
                    0.01,
                    &device,
                    shards,
                    |_| true,
                    |g, rows| {
                        let logits = g.stack("s", Input::Sparse(&batch.slice(rows.clone())));
                        Ok((cross_entropy(g, logits.clone(), &labels[rows.clone()]), rows.len()))
                    },
                )
                .unwrap();
                assert_eq!(logits.iter().sum::<usize>(), 150, "one value per shard, covering the batch");
                loss
            })
            .collect();
        (params, losses)
    }

    #[test]
    fn sharded_steps_equal_one_graph_over_the_whole_batch() {
        let (whole, whole_losses) = two_steps(150);
        for per_shard in [1, 64, 100] {
            let (sharded, losses) = two_steps(per_shard);
            for (a, b) in whole_losses.iter().zip(&losses) {
                assert!((a - b).abs() < 1e-5, "loss {a} against {b} in shards of {per_shard}");
            }
            for (name, w) in &whole.values {
                let s = &sharded.values[name];
                let worst = w.iter().zip(s).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
                // Adam moves each weight by about lr = 0.01 a step; float order moves it by ~1e-5
                assert!(worst < 1e-4, "{name} differs by {worst} in shards of {per_shard}");
            }
        }
        assert_ne!(whole.values, Params::init(whole.stacks.clone(), 5).values, "the steps changed the parameters");
    }

    #[test]
    fn sharded_steps_do_not_depend_on_the_number_of_threads() {
        let with = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| two_steps(64))
        };
        assert_eq!(with(1), with(3), "the same parameters and losses, bit for bit");
    }

    #[test]
    fn shards_cover_the_batch_in_order() {
        let cut = |rows, per_shard| Shards { rows, per_shard }.ranges();
        assert_eq!(cut(1, 64), vec![0..1]);
        assert_eq!(cut(64, 64), vec![0..64]);
        assert_eq!(cut(131, 64), vec![0..64, 64..128, 128..131]);
        assert_eq!(Shards::of(3 * SHARD_ROWS).ranges().len(), 3);
    }
}
