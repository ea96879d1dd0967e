//! The seven move predictors of the thesis: one net 773-48-6 for the type of the piece
//! that moves, six nets 773-48-64 for the destination square of each piece type; leaky
//! ReLU, softmax, cross-entropy, Adam. Each net trains on its own shuffled stream of the
//! `moves` dataset (the square nets on the moves of their piece type only).

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use deepchess_core::arch::{MOVEPRED_PIECE_LAYERS, MOVEPRED_SQUARE_LAYERS, MOVEPRED_SQUARE_STACKS};
use deepchess_core::{Activation, Content, Model, ModelKind, MoveLabel, Split, StackSpec};
use serde::{Deserialize, Serialize};
use shakmaty::Position;

use crate::data::{DataFile, epoch_order, refuse_empty, splitmix64};
use crate::nn::adam::Adam;
use crate::nn::graph::{Graph, Input, to_vec};
use crate::nn::loss::{cross_entropy, cross_entropy_values, rank};
use crate::nn::params::Params;
use crate::nn::step::{Shards, step};
use crate::run::{self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Score, Stage, Trainer, Validation};

/// Stack names: the piece net, then the square nets in piece order P N B R Q K.
pub fn stack_names() -> Vec<&'static str> {
    std::iter::once("piece").chain(MOVEPRED_SQUARE_STACKS).collect()
}

/// Hyper-parameters of `deepchess train movepred`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct MovepredOptions {
    /// Epochs.
    #[arg(long, default_value_t = 3)]
    pub epochs: u32,
    /// Positions per batch.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Adam learning rate (the thesis's 0.0003).
    #[arg(long, default_value_t = 3e-4)]
    pub lr: f64,
    /// Learning-rate factor per epoch.
    #[arg(long, default_value_t = 1.0)]
    pub lr_decay: f64,
    /// Hidden width of every net.
    #[arg(long, default_value_t = MOVEPRED_PIECE_LAYERS[1])]
    pub hidden: usize,
    /// Use at most this many training positions per net and epoch.
    #[arg(long)]
    pub positions_per_epoch: Option<usize>,
    /// Colour-flip augmentation: each training position is, with probability ½ (drawn
    /// afresh each epoch), mirrored with colours swapped, its destination square mirrored
    /// too (the piece type is unchanged).
    #[arg(long)]
    pub flip: bool,
    /// Seed of initialisation and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Directory holding trained move predictors the run starts from instead of fresh
    /// weights (a warm start: the committed predictors fine-tuned on self-play moves);
    /// their hidden width must be the run's `--hidden`.
    #[arg(long, value_name = "DIR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
}

impl MovepredOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(self.hidden > 0, "--hidden must be at least 1");
        anyhow::ensure!(self.lr_decay > 0.0 && self.lr_decay.is_finite(), "--lr-decay must be positive");
        run::check_loop_options(self.batch, self.lr, self.positions_per_epoch)
    }
}

/// The label of net `net` (0 = piece net, 1 + p = square net of piece p) for a move,
/// in the colour-flipped position when `flipped` (the destination mirrored top to bottom).
fn label(net: usize, m: MoveLabel, flipped: bool) -> usize {
    match net {
        0 => usize::from(m.piece),
        _ if flipped => usize::from(m.to) ^ 56,
        _ => usize::from(m.to),
    }
}

/// Whether record `i` is colour-flipped in `epoch`: a seeded coin per record and epoch.
fn flipped_in_epoch(i: usize, seed: u64, epoch: u32) -> bool {
    splitmix64((i as u64) ^ seed.rotate_left(17) ^ (u64::from(epoch) << 40)) & 1 == 1
}

fn record_label(file: &DataFile, i: usize) -> anyhow::Result<MoveLabel> {
    let played = file.get(i).played().map_err(|e| anyhow::anyhow!("{}: record {i}: {e}", file.path.display()))?;
    played.map(|p| p.label).ok_or_else(|| anyhow::anyhow!("{}: record {i} has no played move", file.path.display()))
}

/// Record indices of `file` each net learns from: all for the piece net, those of its
/// piece type for a square net.
pub fn net_indices(file: &DataFile) -> anyhow::Result<Vec<Vec<usize>>> {
    let mut out = vec![Vec::new(); 7];
    for i in 0..file.len() {
        let m = record_label(file, i)?;
        out[0].push(i);
        out[1 + usize::from(m.piece)].push(i);
    }
    Ok(out)
}

/// Per-net validation figures.
#[derive(Clone, Debug, Serialize)]
pub struct NetScores {
    /// Stack name.
    pub net: String,
    /// Mean cross-entropy.
    pub loss: f64,
    /// Top-1, top-3, top-5 accuracy.
    pub top: [f64; 3],
    /// Positions.
    pub positions: usize,
}

/// Logits of `stack` for records `indices`.
fn net_logits(
    params: &Params,
    device: &Device,
    stack: &str,
    file: &DataFile,
    indices: &[usize],
) -> anyhow::Result<Vec<f32>> {
    let mut out = Vec::new();
    for chunk in indices.chunks(4096) {
        let batch = file.features(chunk, |_| false)?;
        out.extend(to_vec(Graph::inference(params, device).stack(stack, Input::Sparse(&batch))));
    }
    Ok(out)
}

/// Loss and top-1/3/5 of every net on `file`.
pub fn evaluate_nets(
    params: &Params,
    device: &Device,
    file: &DataFile,
    indices: &[Vec<usize>],
) -> anyhow::Result<Vec<NetScores>> {
    stack_names()
        .into_iter()
        .enumerate()
        .map(|(net, name)| {
            let classes = params.stack(name).output();
            let logits = net_logits(params, device, name, file, &indices[net])?;
            let labels: Vec<usize> = indices[net]
                .iter()
                .map(|&i| record_label(file, i).map(|m| label(net, m, false)))
                .collect::<anyhow::Result<_>>()?;
            let mut hits = [0usize; 3];
            for (row, &l) in logits.chunks(classes).zip(&labels) {
                let r = rank(row, l);
                for (h, k) in hits.iter_mut().zip([1, 3, 5]) {
                    *h += usize::from(r < k);
                }
            }
            let n = labels.len().max(1) as f64;
            Ok(NetScores {
                net: name.to_string(),
                loss: cross_entropy_values(&logits, classes, &labels),
                top: hits.map(|h| h as f64 / n),
                positions: labels.len(),
            })
        })
        .collect()
}

/// Accuracy of the combined legal-move predictor `P(piece) · P(square | piece)` over
/// the legal moves of each position (moves sharing a label share a score).
#[derive(Clone, Debug, Serialize)]
pub struct JointScores {
    /// Top-1, top-3, top-5 accuracy.
    pub top: [f64; 3],
    /// Positions.
    pub positions: usize,
}

fn softmax(row: &[f32]) -> Vec<f32> {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let e: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
    let s: f32 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

/// See [`JointScores`].
pub fn evaluate_joint(params: &Params, device: &Device, file: &DataFile) -> anyhow::Result<JointScores> {
    let all: Vec<usize> = (0..file.len()).collect();
    let names = stack_names();
    let mut hits = [0usize; 3];
    for chunk in all.chunks(4096) {
        let piece = net_logits(params, device, names[0], file, chunk)?;
        let squares: Vec<Vec<f32>> =
            names[1..].iter().map(|n| net_logits(params, device, n, file, chunk)).collect::<anyhow::Result<_>>()?;
        for (k, &i) in chunk.iter().enumerate() {
            let played = record_label(file, i)?;
            let pos =
                file.get(i).position().map_err(|e| anyhow::anyhow!("{}: record {i}: {e}", file.path.display()))?;
            let p_piece = softmax(&piece[k * 6..][..6]);
            let p_square: Vec<Vec<f32>> = squares.iter().map(|s| softmax(&s[k * 64..][..64])).collect();
            let mut labels: Vec<MoveLabel> =
                pos.legal_moves().iter().filter_map(|m| MoveLabel::from_move(m, pos.turn())).collect();
            labels.sort_by_key(|l| (l.piece, l.to));
            labels.dedup();
            let score =
                |l: &MoveLabel| p_piece[usize::from(l.piece)] * p_square[usize::from(l.piece)][usize::from(l.to)];
            let mine = score(&played);
            let r = labels.iter().filter(|l| **l != played && score(l) >= mine).count();
            for (h, k) in hits.iter_mut().zip([1, 3, 5]) {
                *h += usize::from(r < k);
            }
        }
    }
    let n = file.len().max(1) as f64;
    Ok(JointScores { top: hits.map(|h| h as f64 / n), positions: file.len() })
}

/// The per-net table (thesis tables 4.4 and 4.5).
pub fn table(scores: &[NetScores]) -> String {
    let mut out = format!("{:<14} {:>9} {:>8} {:>8} {:>8} {:>9}\n", "net", "positions", "top1", "top3", "top5", "loss");
    for s in scores {
        out += &format!(
            "{:<14} {:>9} {:>7.2}% {:>7.2}% {:>7.2}% {:>9.4}\n",
            s.net,
            s.positions,
            100.0 * s.top[0],
            100.0 * s.top[1],
            100.0 * s.top[2],
            s.loss
        );
    }
    out
}

/// The move predictors' [`Trainer`]: one stage; each epoch one pass per net over its own
/// shuffled records; the epoch with the best mean validation top-1 of the seven nets is kept.
pub struct MovepredTrainer {
    options: MovepredOptions,
    train: DataFile,
    validation: DataFile,
    /// Record indices each net learns from ([`net_indices`]), in training and validation.
    train_indices: Vec<Vec<usize>>,
    validation_indices: Vec<Vec<usize>>,
}

impl MovepredTrainer {
    /// Opens the datasets of `data`.
    pub fn new(data: &Path, options: &MovepredOptions) -> anyhow::Result<MovepredTrainer> {
        options.check()?;
        let train = DataFile::open(data, Content::Moves, Split::Train)?;
        let validation = DataFile::open(data, Content::Moves, Split::Validation)?;
        refuse_empty(&train, &validation)?;
        let train_indices = net_indices(&train)?;
        let validation_indices = net_indices(&validation)?;
        Ok(MovepredTrainer { options: options.clone(), train, validation, train_indices, validation_indices })
    }
}

impl Trainer for MovepredTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Movepred
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn other_inputs(&self) -> Vec<(&'static str, PathBuf)> {
        self.options.init.iter().map(|d| ("--init", d.clone())).collect()
    }

    fn init(&self) -> anyhow::Result<Params> {
        if let Some(dir) = &self.options.init {
            let model =
                Model::load(dir, ModelKind::Movepred).map_err(|e| anyhow::anyhow!("--init {}: {e}", dir.display()))?;
            let params = Params::from_model(&model);
            let hidden = params.stack("piece").layers[1];
            anyhow::ensure!(
                hidden == self.options.hidden,
                "--init {}: the move predictors there are {hidden} wide, the run asks --hidden {}",
                dir.display(),
                self.options.hidden
            );
            return Ok(params);
        }
        let stacks: Vec<StackSpec> = stack_names()
            .iter()
            .enumerate()
            .map(|(net, n)| {
                let out = if net == 0 { MOVEPRED_PIECE_LAYERS[2] } else { MOVEPRED_SQUARE_LAYERS[2] };
                StackSpec::new(n, &[MOVEPRED_PIECE_LAYERS[0], self.options.hidden, out], Activation::LeakyRelu)
            })
            .collect();
        Ok(Params::init(stacks, self.options.seed))
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        vec![Stage::exponential(o.epochs, o.batch, o.lr, o.lr_decay)]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let o = &self.options;
        Ok(stack_names()
            .into_iter()
            .zip(&self.train_indices)
            .enumerate()
            .map(|(net, (name, indices))| Pass {
                name: name.to_string(),
                order: epoch_order(indices.len(), o.positions_per_epoch, o.seed + net as u64, at.epoch)
                    .into_iter()
                    .map(|k| indices[k])
                    .collect(),
            })
            .collect())
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let (net, chunk, epoch) = (batch.pass, batch.indices, batch.at.epoch);
        let name = stack_names()[net];
        let prefix = format!("{name}.");
        let flips: Vec<bool> =
            chunk.iter().map(|&i| self.options.flip && flipped_in_epoch(i, self.options.seed, epoch)).collect();
        let features = self.train.features(chunk, |k| flips[k])?;
        let labels: Vec<usize> = chunk
            .iter()
            .zip(&flips)
            .map(|(&i, &f)| record_label(&self.train, i).map(|m| label(net, m, f)))
            .collect::<anyhow::Result<_>>()?;
        let (loss, logits) = step(
            params,
            adam,
            batch.lr,
            batch.device,
            Shards::of(chunk.len()),
            |t| t.starts_with(&prefix),
            |g, rows| {
                let logits = g.stack(name, Input::Sparse(&features.slice(rows.clone())));
                Ok((cross_entropy(g, logits.clone(), &labels[rows]), to_vec(logits)))
            },
        )?;
        let logits = logits.concat();
        let classes = logits.len() / labels.len();
        let correct = logits.chunks(classes).zip(&labels).filter(|(row, l)| rank(row, **l) == 0).count();
        Ok(BatchResult { loss, correct: Some(correct) })
    }

    fn validate(&mut self, params: &Params, device: &Device, _: &EpochAt) -> anyhow::Result<Validation> {
        let val = evaluate_nets(params, device, &self.validation, &self.validation_indices)?;
        let mean_top1 = val.iter().map(|v| v.top[0]).sum::<f64>() / val.len() as f64;
        let passes = val.iter().map(|v| Score { loss: v.loss, accuracy: Some(v.top[0]) }).collect();
        Ok(Validation { passes, extra: Vec::new(), metric: Some(mean_top1) })
    }

    fn card(&mut self, params: &Params, device: &Device, _: &Finished<'_>) -> anyhow::Result<Card> {
        let val = evaluate_nets(params, device, &self.validation, &self.validation_indices)?;
        let joint = evaluate_joint(params, device, &self.validation)?;
        let report = format!(
            "{}joint_top1={:.4} joint_top3={:.4} joint_top5={:.4} positions={}",
            table(&val),
            joint.top[0],
            joint.top[1],
            joint.top[2],
            joint.positions
        );
        Ok(Card {
            kind: ModelKind::Movepred,
            stacks: stack_names().into_iter().map(String::from).collect(),
            output: serde_json::json!({
                "piece": "logits of the moving piece type P N B R Q K (softmax)",
                "square.*": "logits of the destination square a1=0..h8=63 for that piece type; castling = the king's destination",
            }),
            metrics: serde_json::json!({ "validation": val, "joint_legal": joint }),
            report,
        })
    }
}

/// Trains the seven nets (see [`MovepredTrainer`]); writes `movepred.safetensors` +
/// `movepred.json` into the run directory, prints the tables and returns the model.
pub fn train(args: &RunArgs, options: &MovepredOptions) -> anyhow::Result<Model> {
    run::train(args, &mut MovepredTrainer::new(&args.data, options)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::record::mirrored;
    use shakmaty::{CastlingMode, Chess, fen::Fen};

    #[test]
    fn flipped_labels_are_the_labels_of_the_mirrored_moves() {
        let fen = "r3k2r/pppq1ppp/2n2n2/3pp3/1b2P3/2NP1N2/PPPB1PPP/R3K2R w KQkq - 0 1";
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let mirror = mirrored(&pos);
        let mirror_labels: Vec<MoveLabel> =
            mirror.legal_moves().iter().map(|m| MoveLabel::from_move(m, mirror.turn()).unwrap()).collect();
        let moves = pos.legal_moves();
        assert!(moves.iter().any(|m| m.is_castle()));
        for m in &moves {
            let l = MoveLabel::from_move(m, pos.turn()).unwrap();
            let net = 1 + usize::from(l.piece);
            let expected = MoveLabel { piece: l.piece, to: label(net, l, true) as u8 };
            assert!(mirror_labels.contains(&expected), "{m:?}: {expected:?} is not a move of the mirrored position");
            assert_eq!(label(0, l, true), label(0, l, false));
        }
    }

    #[test]
    fn flip_coins_are_seeded_and_balanced() {
        let heads = (0..10_000).filter(|&i| flipped_in_epoch(i, 3, 1)).count();
        assert!((4_700..5_300).contains(&heads), "{heads}");
        assert!((0..64).any(|i| flipped_in_epoch(i, 3, 1) != flipped_in_epoch(i, 3, 2)));
        assert!((0..64).all(|i| flipped_in_epoch(i, 3, 1) == flipped_in_epoch(i, 3, 1)));
    }
}
