//! The policy net (see [`crate::nn::policy`]): one logit per move, from-square and
//! to-square as the side to move sees the board, trained on the `moves` dataset's played
//! moves by cross-entropy over each position's legal moves. AdamW with a linear warm-up and
//! a cosine decay over the run; the epoch with the best validation top-1 is kept.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use deepchess_core::arch::{POLICY_FT_STACK, POLICY_FT_WIDTH, POLICY_MOVES_STACK};
use deepchess_core::features::PERSPECTIVE_FEATURES;
use deepchess_core::move_label::policy_index;
use deepchess_core::{Content, Model, ModelKind, Split};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::{Color, Position};

use crate::data::{DataFile, epoch_order, refuse_empty};
use crate::nn::adam::Adam;
use crate::nn::params::Params;
use crate::nn::perspective::side_to_move_view;
use crate::nn::policy::{self, PolicyBatch};
use crate::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Schedule, Score, Stage, Trainer, Validation,
};

/// Hyper-parameters of `deepchess train policy`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct PolicyOptions {
    /// Epochs (passes over the training positions, or `--positions-per-epoch` of them).
    #[arg(long, default_value_t = 4)]
    pub epochs: u32,
    /// Positions per batch.
    #[arg(long, default_value_t = 4096)]
    pub batch: usize,
    /// Peak learning rate (AdamW).
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Learning rate at the end of the cosine decay, as a fraction of `--lr`.
    #[arg(long, default_value_t = 0.02)]
    pub final_lr: f64,
    /// Batches of linear warm-up from 0 to `--lr`.
    #[arg(long, default_value_t = 100)]
    pub warmup: u64,
    /// AdamW's decoupled weight decay.
    #[arg(long, default_value_t = 0.01)]
    pub weight_decay: f64,
    /// Width H of the feature transformer (a multiple of 16).
    #[arg(long, default_value_t = POLICY_FT_WIDTH)]
    pub width: usize,
    /// Use at most this many training positions per epoch (a fresh random subset each epoch).
    #[arg(long)]
    pub positions_per_epoch: Option<usize>,
    /// Score at most this many validation positions (the first ones of the split).
    #[arg(long, default_value_t = 200_000)]
    pub validation_positions: usize,
    /// Seed of initialisation and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Directory holding a trained `policy` model the run starts from instead of fresh
    /// weights; its width must be the run's `--width`.
    #[arg(long, value_name = "DIR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
}

impl PolicyOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(
            self.width > 0 && self.width.is_multiple_of(16),
            "--width must be a positive multiple of 16, got {}",
            self.width
        );
        anyhow::ensure!((0.0..=1.0).contains(&self.final_lr), "--final-lr must be in 0..=1, got {}", self.final_lr);
        anyhow::ensure!(
            (0.0..1.0).contains(&self.weight_decay),
            "--weight-decay must be in 0..1, got {}",
            self.weight_decay
        );
        anyhow::ensure!(self.validation_positions > 0, "--validation-positions must be at least 1");
        run::check_loop_options(self.batch, self.lr, self.positions_per_epoch)
    }
}

/// Record `i` of `file` as a row: the side to move's features, the distinct legal move
/// indices in increasing order, and where the played move is among them.
pub fn row(file: &DataFile, i: usize) -> anyhow::Result<(Vec<u16>, Vec<u16>, usize)> {
    let at = || format!("{}: record {i}", file.path.display());
    let record = file.get(i);
    let position = record.position().map_err(|e| anyhow::anyhow!("{}: {e}", at()))?;
    let played = record
        .played()
        .map_err(|e| anyhow::anyhow!("{}: {e}", at()))?
        .ok_or_else(|| anyhow::anyhow!("{} has no played move", at()))?;
    let turn = position.turn();
    let flip = if turn == Color::White { 0 } else { 56 };
    let target = ((played.from as usize ^ flip) * 64 + (played.label.to as usize ^ flip)) as u16;
    let mut moves: Vec<u16> =
        position.legal_moves().iter().filter_map(|m| policy_index(m, turn)).map(|m| m as u16).collect();
    moves.sort_unstable();
    moves.dedup();
    let place = moves
        .binary_search(&target)
        .map_err(|_| anyhow::anyhow!("{}: the played move is not legal in the position", at()))?;
    let features = record.features().map_err(|e| anyhow::anyhow!("{}: {e}", at()))?;
    let pieces = features.as_slice().iter().copied().filter(|&f| usize::from(f) < PERSPECTIVE_FEATURES);
    Ok((side_to_move_view(pieces, turn), moves, place))
}

/// Records `indices` of `file` as a batch (rows built in parallel, kept in order).
pub fn batch(file: &DataFile, indices: &[usize]) -> anyhow::Result<PolicyBatch> {
    let rows: Vec<_> = indices.par_iter().map(|&i| row(file, i)).collect::<anyhow::Result<_>>()?;
    let mut out = PolicyBatch::new();
    for (features, moves, target) in &rows {
        out.push(features, moves, *target);
    }
    Ok(out)
}

/// Validation figures of the policy net.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PolicyScores {
    /// Mean cross-entropy of the played moves.
    pub loss: f64,
    /// Share of positions whose played move is the most probable, among the 3 and the 5
    /// most probable.
    pub top: [f64; 3],
    /// Positions.
    pub positions: usize,
}

/// Loss and top-1/3/5 of `params` on the first `limit` records of `file`.
pub fn evaluate(params: &Params, file: &DataFile, limit: usize) -> anyhow::Result<PolicyScores> {
    let indices: Vec<usize> = (0..file.len().min(limit)).collect();
    let (mut loss, mut hits) = (0.0, [0usize; 3]);
    for chunk in indices.chunks(16_384) {
        let rows = batch(file, chunk)?;
        for (r, p) in policy::probabilities(params, &rows).iter().enumerate() {
            let t = rows.targets[r] as usize;
            loss -= f64::from(p[t].max(1e-30).ln());
            let rank = p.iter().enumerate().filter(|&(k, &q)| k != t && q >= p[t]).count();
            for (h, k) in hits.iter_mut().zip([1, 3, 5]) {
                *h += usize::from(rank < k);
            }
        }
    }
    let n = indices.len().max(1) as f64;
    Ok(PolicyScores { loss: loss / n, top: hits.map(|h| h as f64 / n), positions: indices.len() })
}

/// The policy net's [`Trainer`]: one stage, one pass an epoch over the shuffled records.
pub struct PolicyTrainer {
    options: PolicyOptions,
    train: DataFile,
    validation: DataFile,
}

impl PolicyTrainer {
    /// Opens the `moves` datasets of `data`.
    pub fn new(data: &Path, options: &PolicyOptions) -> anyhow::Result<PolicyTrainer> {
        options.check()?;
        let train = DataFile::open(data, Content::Moves, Split::Train)?;
        let validation = DataFile::open(data, Content::Moves, Split::Validation)?;
        refuse_empty(&train, &validation)?;
        Ok(PolicyTrainer { options: options.clone(), train, validation })
    }
}

impl Trainer for PolicyTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Policy
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn other_inputs(&self) -> Vec<(&'static str, PathBuf)> {
        self.options.init.iter().map(|d| ("--init", d.clone())).collect()
    }

    fn init(&self) -> anyhow::Result<Params> {
        let Some(dir) = &self.options.init else { return Ok(policy::init(self.options.width, self.options.seed)) };
        let model =
            Model::load(dir, ModelKind::Policy).map_err(|e| anyhow::anyhow!("--init {}: {e}", dir.display()))?;
        let params = Params::from_model(&model);
        let width = policy::width(&params);
        anyhow::ensure!(
            width == self.options.width,
            "--init {}: the policy net there is {width} wide, the run asks --width {}",
            dir.display(),
            self.options.width
        );
        Ok(params)
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        let schedule = Schedule::WarmupCosine { lr: o.lr, warmup: o.warmup, min_lr: o.lr * o.final_lr };
        vec![Stage { epochs: o.epochs, batch: o.batch, schedule }]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let n = self.train.len();
        let limit = self.options.positions_per_epoch.unwrap_or(n).min(n);
        Ok(vec![Pass { name: "policy".to_string(), order: epoch_order(n, Some(limit), self.options.seed, at.epoch) }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let rows = self::batch(&self.train, batch.indices)?;
        let (loss, correct, grads) = policy::loss_and_gradients(params, &rows);
        adam.update_with_weight_decay(params, &grads, batch.lr as f32, self.options.weight_decay as f32);
        Ok(BatchResult { loss, correct: Some(correct) })
    }

    fn validate(&mut self, params: &Params, _: &Device, _: &EpochAt) -> anyhow::Result<Validation> {
        let val = evaluate(params, &self.validation, self.options.validation_positions)?;
        Ok(Validation::one(Score { loss: val.loss, accuracy: Some(val.top[0]) }, Some(val.top[0])))
    }

    fn card(&mut self, params: &Params, _: &Device, _: &Finished<'_>) -> anyhow::Result<Card> {
        let val = evaluate(params, &self.validation, self.options.validation_positions)?;
        let report = format!(
            "validation: loss {:.4}, top-1 {:.2}%, top-3 {:.2}%, top-5 {:.2}% ({} positions)",
            val.loss,
            100.0 * val.top[0],
            100.0 * val.top[1],
            100.0 * val.top[2],
            val.positions
        );
        Ok(Card {
            kind: ModelKind::Policy,
            stacks: vec![POLICY_FT_STACK.to_string(), POLICY_MOVES_STACK.to_string()],
            output: serde_json::json!({
                "moves": "logit of each move index (from-square × 64 + to-square, both as the side to move sees the board: mirrored top to bottom for Black; castling = the king's destination; promotions share their squares' index), softmax over the legal moves",
            }),
            metrics: serde_json::json!({ "validation": val }),
            report,
        })
    }
}

/// Trains the policy net (see [`PolicyTrainer`]); writes `policy.safetensors` +
/// `policy.json` into the run directory, prints the report and returns the model.
pub fn train(args: &RunArgs, options: &PolicyOptions) -> anyhow::Result<Model> {
    run::train(args, &mut PolicyTrainer::new(&args.data, options)?)
}
