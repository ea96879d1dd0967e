//! `deepchess bench train`: siamese-comparator training throughput (pairs per second)
//! on the CPU, with the sparse first layer and, for reference in the same run, with the
//! first layer as a dense matrix product in burn; `deepchess bench train-value`: the
//! evaluation net's training throughput (positions per second).

use std::time::Instant;

use deepchess_core::arch::ValueInputLayout;
use deepchess_core::features::{PERSPECTIVE_FEATURES, SIDE_TO_MOVE};
use deepchess_core::{FEATURE_COUNT, ModelKind, SparseFeatures};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::{Chess, Position};

use crate::device::DeviceChoice;
use crate::nn::adam::Adam;
use crate::nn::graph::Input;
use crate::nn::loss::cross_entropy;
use crate::nn::params::Params;
use crate::nn::perspective::{self, PerspectiveBatch, side_to_move_view};
use crate::nn::sparse::SparseBatch;
use crate::nn::step::{Shards, step};
use crate::trainers::comparator;

/// Throughput of one way of running the first layer.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// `sparse` or `dense`.
    pub first_layer: String,
    /// Training pairs per second (forward, backward and Adam update).
    pub pairs_per_second: f64,
    /// Batches timed.
    pub batches: usize,
}

/// Positions from seeded random games (realistic sparsity: 20 to 37 active features).
pub fn random_positions(count: usize, seed: u64) -> Vec<SparseFeatures> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    let mut pos = Chess::default();
    while out.len() < count {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.halfmoves() > 60 || rng.random_range(0..120) == 0 {
            pos = Chess::default();
            continue;
        }
        pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        out.push(SparseFeatures::from_position(&pos));
    }
    out
}

/// Times `batches` comparator training steps of `batch` pairs (after one warm-up step),
/// cut into shards of `shard_rows` pairs, with the first layer sparse and then dense, on
/// `device`.
pub fn bench_train(
    batch: usize,
    batches: usize,
    shard_rows: usize,
    device: DeviceChoice,
) -> anyhow::Result<Vec<Throughput>> {
    let positions = random_positions(2 * batch * 4, 7);
    let device = device.device()?.autodiff();
    let mut results = Vec::new();
    for dense in [false, true] {
        let mut params = Params::init(ModelKind::Comparator.default_stacks(), 0);
        let mut adam = Adam::default();
        let mut timed = 0.0;
        for b in 0..=batches {
            let start = (b % 4) * 2 * batch;
            let first: SparseBatch = positions[start..start + batch].iter().copied().collect();
            let second: SparseBatch = positions[start + batch..start + 2 * batch].iter().copied().collect();
            let labels: Vec<usize> = (0..batch).map(|k| (k + b) % 2).collect();
            let t = Instant::now();
            let shards = Shards { rows: batch, per_shard: shard_rows };
            step(
                &mut params,
                &mut adam,
                1e-4,
                &device,
                shards,
                |_| true,
                |g, rows| {
                    let (first, second) = (first.slice(rows.clone()), second.slice(rows.clone()));
                    let out = if dense {
                        let mut both = first.clone();
                        both.append(&second);
                        let x = g.constant(both.to_dense(FEATURE_COUNT), 2 * rows.len(), FEATURE_COUNT);
                        let codes = g.stack("encoder", Input::Dense(x));
                        comparator::head(g, codes, rows.len())
                    } else {
                        comparator::logits(g, &first, &second)
                    };
                    Ok((cross_entropy(g, out, &labels[rows]), ()))
                },
            )?;
            if b > 0 {
                timed += t.elapsed().as_secs_f64();
            }
        }
        results.push(Throughput {
            first_layer: if dense { "dense" } else { "sparse" }.into(),
            pairs_per_second: (batch * batches) as f64 / timed.max(1e-9),
            batches,
        });
    }
    Ok(results)
}

/// Runs [`bench_train`] and formats its result as `deepchess bench train` prints it: one
/// line per first-layer kind, then `pairs_per_second=<sparse> dense_pairs_per_second=<dense>
/// speedup=<ratio> batch=<n> shard_rows=<n> threads=<n>`.
pub fn bench_train_report(
    batch: usize,
    batches: usize,
    shard_rows: usize,
    device: DeviceChoice,
) -> anyhow::Result<String> {
    let results = bench_train(batch, batches, shard_rows, device)?;
    let mut out = String::new();
    for r in &results {
        out += &format!(
            "comparator training on {device}, {} first layer: {:.0} pairs/s ({} batches of {batch} in shards of {shard_rows})\n",
            r.first_layer, r.pairs_per_second, r.batches
        );
    }
    let (sparse, dense) = (results[0].pairs_per_second, results[1].pairs_per_second);
    out += &format!(
        "pairs_per_second={sparse:.0} dense_pairs_per_second={dense:.0} speedup={:.2} batch={batch} shard_rows={shard_rows} threads={}\n",
        sparse / dense,
        rayon::current_num_threads()
    );
    Ok(out)
}

/// Times `batches` training steps of the evaluation net of width `width` on `batch`
/// positions each (after one warm-up step): forward pass, gradients, AdamW update and
/// clipping, as `deepchess train value` runs them. Returns positions per second.
pub fn bench_train_value(width: usize, batch: usize, batches: usize) -> f64 {
    let positions = random_positions(batch * 4, 11);
    let batches_in_memory: Vec<PerspectiveBatch> = positions
        .chunks(batch)
        .map(|chunk| {
            let mut b = PerspectiveBatch::new();
            for (k, f) in chunk.iter().enumerate() {
                let black = f.as_slice().binary_search(&(SIDE_TO_MOVE as u16)).is_ok();
                let pieces = f.as_slice().iter().copied().filter(|&i| usize::from(i) < PERSPECTIVE_FEATURES);
                let turn = if black { shakmaty::Color::Black } else { shakmaty::Color::White };
                b.push(&side_to_move_view(pieces, turn), (k % 3) as f32 / 2.0);
            }
            b
        })
        .collect();
    let mut params = perspective::init(width, 1, 0);
    let mut adam = Adam::default();
    let mut timed = 0.0;
    for b in 0..=batches {
        let t = Instant::now();
        let (_, grads) = perspective::loss_and_gradients(&params, ValueInputLayout::Plain, &batches_in_memory[b % 4]);
        adam.update_with_weight_decay(&mut params, &grads, 1e-3, 0.01);
        perspective::clip(&mut params);
        if b > 0 {
            timed += t.elapsed().as_secs_f64();
        }
    }
    (batch * batches) as f64 / timed.max(1e-9)
}
