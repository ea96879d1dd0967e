//! The siamese comparator of DeepChess: the Pos2Vec encoder (initialised from a trained
//! autoencoder) applied with shared weights to both positions of a pair, the two codes
//! concatenated and fed to a 200-400-200-100-2 head; softmax index 0 means "the first
//! position is the one from the game White won". Pairs are (White-won position,
//! Black-won position) in random order, drawn afresh every epoch; validation pairs come
//! only from validation games and are fixed. The best-validation parameters are kept.

use std::path::Path;

use burn::tensor::{Device, Tensor};
use deepchess_core::arch::{COMPARATOR_FIRST_BETTER, COMPARATOR_HEAD_LAYERS};
use deepchess_core::{Activation, Content, Model, ModelKind, Split, StackSpec};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::data::{DataFile, rng};
use crate::nn::adam::Adam;
use crate::nn::graph::{Graph, Input, to_vec};
use crate::nn::loss::{cross_entropy, cross_entropy_values};
use crate::nn::params::Params;
use crate::nn::sparse::SparseBatch;
use crate::nn::step::{Shards, step};
use crate::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Score, Stage, Tally, Trainer, Validation,
};
use crate::trainers::autoencoder;

/// Hyper-parameters of `deepchess train comparator`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct ComparatorOptions {
    /// Directory holding the `pos2vec` model the encoder starts from (without it the
    /// encoder starts from random weights, to measure what pre-training brings).
    #[arg(long)]
    pub pos2vec: Option<std::path::PathBuf>,
    /// Epochs.
    #[arg(long, default_value_t = 10)]
    pub epochs: u32,
    /// Training pairs per epoch, drawn afresh each epoch.
    #[arg(long, default_value_t = 1_000_000)]
    pub pairs_per_epoch: usize,
    /// Validation pairs (from validation games only, fixed).
    #[arg(long, default_value_t = 50_000)]
    pub validation_pairs: usize,
    /// Pairs per batch.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Adam learning rate (thesis 0.0003 constant; DeepChess 0.01 decaying ×0.99).
    #[arg(long, default_value_t = 3e-4)]
    pub lr: f64,
    /// Learning-rate factor per epoch.
    #[arg(long, default_value_t = 1.0)]
    pub lr_decay: f64,
    /// Colour-flip augmentation: each training pair is, with probability ½, replaced by
    /// its mirror (board flipped, colours swapped: the Black-won position flipped becomes
    /// the White-won one).
    #[arg(long)]
    pub flip: bool,
    /// Measure on positions split at random instead of by game (for comparison with the
    /// thesis and paper only): a seeded tenth of the training file's positions is held out
    /// and validation pairs are drawn from it; the validation games are not used.
    #[arg(long)]
    pub random_split: bool,
    /// Fraction of each epoch's training pairs labelled by the engines' `[%eval]` scores
    /// instead of by game result: two positions with evaluations at least `--eval-margin`
    /// apart, from any game (drawn ones too when the dataset was prepared with `--draws`);
    /// the one the engine preferred for White plays the part of the White-won position.
    /// 0 trains as the thesis did. Validation pairs are always result pairs.
    #[arg(long, default_value_t = 0.0, value_parser = fraction)]
    pub eval_pairs: f64,
    /// Smallest evaluation difference (centipawns) of an eval-labelled pair.
    #[arg(long, default_value_t = 100)]
    pub eval_margin: u16,
    /// Head layer widths between the concatenated codes and the 2 outputs.
    #[arg(long, value_delimiter = ',', default_values_t = COMPARATOR_HEAD_LAYERS[1..COMPARATOR_HEAD_LAYERS.len() - 1].to_vec())]
    pub head_hidden: Vec<usize>,
    /// Encoder widths when no --pos2vec is given.
    #[arg(long, value_delimiter = ',', default_values_t = deepchess_core::arch::POS2VEC_LAYERS[1..].to_vec())]
    pub encoder_hidden: Vec<usize>,
    /// Seed of initialisation and pair drawing.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// One pair: record indices of the White-won and the Black-won position, whether the
/// White-won one comes first, and whether the pair is colour-flipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// Record of the position from a game White won.
    pub white_won: usize,
    /// Record of the position from a game Black won.
    pub black_won: usize,
    /// The White-won position is shown first.
    pub white_first: bool,
    /// Both positions are colour-flipped (and so swap roles).
    pub flipped: bool,
}

impl Pair {
    /// The class the comparator should predict: index 0 when the first position shown is
    /// the better one for White.
    pub fn label(&self) -> usize {
        // flipped, the Black-won record becomes the White-won position
        if self.white_first != self.flipped { COMPARATOR_FIRST_BETTER } else { 1 - COMPARATOR_FIRST_BETTER }
    }

    /// Records shown first and second.
    pub fn shown(&self) -> (usize, usize) {
        if self.white_first { (self.white_won, self.black_won) } else { (self.black_won, self.white_won) }
    }
}

impl ComparatorOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(self.pairs_per_epoch > 0, "--pairs-per-epoch must be at least 1");
        anyhow::ensure!(self.validation_pairs > 0, "--validation-pairs must be at least 1");
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.eval_pairs),
            "--eval-pairs must be in 0..=1, got {}",
            self.eval_pairs
        );
        anyhow::ensure!(self.lr_decay > 0.0 && self.lr_decay.is_finite(), "--lr-decay must be positive");
        for (option, widths) in [("--head-hidden", &self.head_hidden), ("--encoder-hidden", &self.encoder_hidden)] {
            anyhow::ensure!(widths.iter().all(|&w| w > 0), "{option} must list widths of at least 1, got {widths:?}");
        }
        anyhow::ensure!(!self.encoder_hidden.is_empty(), "--encoder-hidden must list at least one width");
        run::check_loop_options(self.batch, self.lr, None)
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("expected a fraction between 0 and 1, got {s:?}")),
    }
}

/// Positions with an engine evaluation: record indices and evaluations (centipawns for
/// White, mate scores as stored).
pub fn evaluated(file: &DataFile) -> (Vec<usize>, Vec<i16>) {
    (0..file.len()).filter_map(|i| file.get(i).eval().map(|e| (i, e))).unzip()
}

/// `count` eval-labelled pairs: two positions of `evaluated` whose evaluations differ by
/// at least `margin`, the higher one in the White-won role. Seeded like [`draw_pairs`].
pub fn draw_eval_pairs(
    evaluated: &(Vec<usize>, Vec<i16>),
    margin: u16,
    count: usize,
    seed: u64,
    epoch: u32,
    flip: bool,
) -> anyhow::Result<Vec<Pair>> {
    let (records, evals) = evaluated;
    if records.len() < 2 {
        anyhow::bail!("--eval-pairs needs positions with [%eval] scores (found {})", records.len());
    }
    let mut r = rng(seed, epoch, 4);
    let mut pairs = Vec::with_capacity(count);
    let mut tries = 0u64;
    while pairs.len() < count {
        tries += 1;
        if tries > 1000 + 100 * count as u64 {
            anyhow::bail!("--eval-margin {margin}: almost no two positions have evaluations that far apart");
        }
        let (a, b) = (r.random_range(0..records.len()), r.random_range(0..records.len()));
        if (i32::from(evals[a]) - i32::from(evals[b])).unsigned_abs() < u32::from(margin) {
            continue;
        }
        let (better, worse) = if evals[a] > evals[b] { (a, b) } else { (b, a) };
        pairs.push(Pair {
            white_won: records[better],
            black_won: records[worse],
            white_first: r.random(),
            flipped: flip && r.random(),
        });
    }
    Ok(pairs)
}

/// One epoch's training pairs: result pairs, with a fraction `options.eval_pairs`
/// replaced by eval-labelled ones, shuffled together.
fn training_pairs(
    white: &[usize],
    black: &[usize],
    evaluated: &(Vec<usize>, Vec<i16>),
    options: &ComparatorOptions,
    epoch: u32,
) -> anyhow::Result<Vec<Pair>> {
    use rand::seq::SliceRandom;
    let n_eval = (options.pairs_per_epoch as f64 * options.eval_pairs).round() as usize;
    let mut pairs = if n_eval < options.pairs_per_epoch {
        draw_pairs(white, black, options.pairs_per_epoch - n_eval, options.seed, Draw::Epoch(epoch), options.flip)?
    } else {
        Vec::new()
    };
    if n_eval > 0 {
        pairs.extend(draw_eval_pairs(evaluated, options.eval_margin, n_eval, options.seed, epoch, options.flip)?);
        pairs.shuffle(&mut rng(options.seed, epoch, 5));
    }
    Ok(pairs)
}

/// Indices of the positions from White-won and from Black-won games.
pub fn decisive(file: &DataFile) -> (Vec<usize>, Vec<usize>) {
    let (mut white, mut black) = (Vec::new(), Vec::new());
    for i in 0..file.len() {
        match file.get(i).result() {
            1 => white.push(i),
            -1 => black.push(i),
            _ => {}
        }
    }
    (white, black)
}

/// Which set of pairs a draw makes: each has its own random stream, so that every set is
/// reproducible and none repeats another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Draw {
    /// The training pairs of an epoch (from 0; a run never reaches the two last numbers,
    /// the streams of the validation and training-sample pairs).
    Epoch(u32),
    /// The fixed validation pairs.
    Validation,
    /// The training pairs measured with the final model.
    TrainingSample,
    /// The pairs of every measurement outside training ([`measurement_pairs`]).
    Measurement,
}

impl Draw {
    /// The generator stream of the draw (the measurement pairs have always shared the
    /// first epoch's stream, under their own seed).
    fn stream(self) -> u32 {
        match self {
            Draw::Epoch(epoch) => epoch,
            Draw::Validation => u32::MAX,
            Draw::TrainingSample => u32::MAX - 1,
            Draw::Measurement => 0,
        }
    }
}

/// Seed of the measurement pairs.
const MEASUREMENT_SEED: u64 = 0;

/// `count` pairs drawn uniformly from `white` × `black` with a generator seeded by `seed`
/// and `draw`; each pair colour-flipped with probability ½ when `flip`.
pub fn draw_pairs(
    white: &[usize],
    black: &[usize],
    count: usize,
    seed: u64,
    draw: Draw,
    flip: bool,
) -> anyhow::Result<Vec<Pair>> {
    if white.is_empty() || black.is_empty() {
        anyhow::bail!(
            "pairs need positions from both White-won and Black-won games (found {} and {})",
            white.len(),
            black.len()
        );
    }
    let mut r = rng(seed, draw.stream(), 2);
    Ok((0..count)
        .map(|_| Pair {
            white_won: white[r.random_range(0..white.len())],
            black_won: black[r.random_range(0..black.len())],
            white_first: r.random(),
            flipped: flip && r.random(),
        })
        .collect())
}

/// The fixed pairs every measurement outside training draws (`deepchess eval`, the value
/// net's accuracy as a comparator): the same pairs for every network and run.
pub fn measurement_pairs(white: &[usize], black: &[usize], count: usize) -> anyhow::Result<Vec<Pair>> {
    draw_pairs(white, black, count, MEASUREMENT_SEED, Draw::Measurement, false)
}

/// The two batches of positions shown for `pairs`.
pub fn pair_batches(file: &DataFile, pairs: &[Pair]) -> anyhow::Result<(SparseBatch, SparseBatch)> {
    let first: Vec<usize> = pairs.iter().map(|p| p.shown().0).collect();
    let second: Vec<usize> = pairs.iter().map(|p| p.shown().1).collect();
    Ok((file.features(&first, |k| pairs[k].flipped)?, file.features(&second, |k| pairs[k].flipped)?))
}

/// Comparator logits `[pairs, 2]` in a graph.
pub fn logits(g: &mut Graph<'_>, first: &SparseBatch, second: &SparseBatch) -> Tensor<2> {
    let n = first.rows();
    let mut both = first.clone();
    both.append(second);
    let codes = g.stack("encoder", Input::Sparse(&both));
    head(g, codes, n)
}

/// The head on the codes `[2n, code]` of the first positions then the second ones.
pub fn head(g: &mut Graph<'_>, codes: Tensor<2>, n: usize) -> Tensor<2> {
    let joined = Tensor::cat(vec![codes.clone().narrow(0, 0, n), codes.narrow(0, n, n)], 1);
    g.stack("head", Input::Dense(joined))
}

/// Loss and accuracy on `pairs`.
pub fn evaluate(params: &Params, device: &Device, file: &DataFile, pairs: &[Pair]) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    for chunk in pairs.chunks(2048) {
        let (a, b) = pair_batches(file, chunk)?;
        let out = to_vec(logits(&mut Graph::inference(params, device), &a, &b));
        let labels: Vec<usize> = chunk.iter().map(Pair::label).collect();
        let correct = out.chunks(2).zip(&labels).filter(|(o, l)| usize::from(o[1] > o[0]) == **l).count();
        tally.add(cross_entropy_values(&out, 2, &labels), correct as f64, chunk.len());
    }
    Ok(tally)
}

/// Removes a seeded random tenth of `indices` and returns it.
fn hold_out(indices: &mut Vec<usize>, seed: u64) -> Vec<usize> {
    use rand::seq::SliceRandom;
    indices.shuffle(&mut rng(seed, 0, 3));
    let held = indices.split_off(indices.len() - indices.len() / 10);
    indices.sort_unstable();
    held
}

/// The comparator's [`Trainer`]: one stage; each epoch one pass over freshly drawn pairs;
/// the epoch with the best validation accuracy is kept.
pub struct ComparatorTrainer {
    options: ComparatorOptions,
    train: DataFile,
    validation: DataFile,
    /// Training positions from White-won and from Black-won games.
    white: Vec<usize>,
    black: Vec<usize>,
    /// Training positions with an engine evaluation (for `--eval-pairs`).
    evaluated: (Vec<usize>, Vec<i16>),
    validation_pairs: Vec<Pair>,
    /// The current epoch's training pairs (the passes' items index them).
    pairs: Vec<Pair>,
}

impl ComparatorTrainer {
    /// Opens the datasets of `data` and draws the validation pairs.
    pub fn new(data: &Path, options: &ComparatorOptions) -> anyhow::Result<ComparatorTrainer> {
        options.check()?;
        let train = DataFile::open(data, Content::Positions, Split::Train)?;
        let validation = DataFile::open(data, Content::Positions, Split::Validation)?;
        let (mut white, mut black) = decisive(&train);
        anyhow::ensure!(
            !white.is_empty() && !black.is_empty(),
            "{}: no training pair: result pairs need positions from both White-won and Black-won games, found {} and {}",
            train.path.display(),
            white.len(),
            black.len()
        );
        let (vw, vb) = if options.random_split {
            (hold_out(&mut white, options.seed), hold_out(&mut black, options.seed))
        } else {
            decisive(&validation)
        };
        anyhow::ensure!(
            !vw.is_empty() && !vb.is_empty(),
            "{}: validation pairs need positions from both White-won and Black-won games, found {} and {}: the best epoch could not be chosen; prepare with a --validation-fraction above 0 (or use --random-split)",
            if options.random_split { train.path.display() } else { validation.path.display() },
            vw.len(),
            vb.len()
        );
        let validation =
            if options.random_split { DataFile::open(data, Content::Positions, Split::Train)? } else { validation };
        let validation_pairs = draw_pairs(&vw, &vb, options.validation_pairs, options.seed, Draw::Validation, false)?;
        let evaluated = if options.eval_pairs == 0.0 {
            (Vec::new(), Vec::new())
        } else if options.random_split {
            // the held-out positions stay out of the eval-labelled pairs too
            let held: std::collections::HashSet<usize> = vw.iter().chain(&vb).copied().collect();
            let (records, evals) = evaluated(&train);
            records.into_iter().zip(evals).filter(|(i, _)| !held.contains(i)).unzip()
        } else {
            evaluated(&train)
        };
        Ok(ComparatorTrainer {
            options: options.clone(),
            train,
            validation,
            white,
            black,
            evaluated,
            validation_pairs,
            pairs: Vec::new(),
        })
    }
}

impl Trainer for ComparatorTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Comparator
    }

    fn other_inputs(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        self.options.pos2vec.iter().map(|d| ("--pos2vec", d.clone())).collect()
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn init(&self) -> anyhow::Result<Params> {
        let options = &self.options;
        let mut params = match &options.pos2vec {
            Some(dir) => Params::from_model(
                &Model::load(dir, ModelKind::Pos2vec).map_err(|e| anyhow::anyhow!("--pos2vec: {e}"))?,
            ),
            None => Params::init(vec![autoencoder::stacks(&options.encoder_hidden).0], options.seed),
        };
        let code = params.stack("encoder").output();
        let head: Vec<usize> =
            std::iter::once(2 * code).chain(options.head_hidden.iter().copied()).chain([2]).collect();
        params
            .extend(Params::init(vec![StackSpec::new("head", &head, Activation::Relu)], options.seed.wrapping_add(1)));
        Ok(params)
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        vec![Stage::exponential(o.epochs, o.batch, o.lr, o.lr_decay)]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        self.pairs = training_pairs(&self.white, &self.black, &self.evaluated, &self.options, at.epoch)?;
        Ok(vec![Pass { name: "comparator".into(), order: (0..self.pairs.len()).collect() }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let chunk: Vec<Pair> = batch.indices.iter().map(|&i| self.pairs[i]).collect();
        let (a, b) = pair_batches(&self.train, &chunk)?;
        let labels: Vec<usize> = chunk.iter().map(Pair::label).collect();
        let (loss, out) = step(
            params,
            adam,
            batch.lr,
            batch.device,
            Shards::of(chunk.len()),
            |_| true,
            |g, rows| {
                let out = logits(g, &a.slice(rows.clone()), &b.slice(rows.clone()));
                Ok((cross_entropy(g, out.clone(), &labels[rows]), to_vec(out)))
            },
        )?;
        let out = out.concat();
        let correct = out.chunks(2).zip(&labels).filter(|(o, l)| usize::from(o[1] > o[0]) == **l).count();
        Ok(BatchResult { loss, correct: Some(correct) })
    }

    fn validate(&mut self, params: &Params, device: &Device, _: &EpochAt) -> anyhow::Result<Validation> {
        let val = evaluate(params, device, &self.validation, &self.validation_pairs)?;
        Ok(Validation::one(Score { loss: val.mean_loss(), accuracy: Some(val.accuracy()) }, Some(val.accuracy())))
    }

    fn card(&mut self, params: &Params, device: &Device, run: &Finished<'_>) -> anyhow::Result<Card> {
        let options = &self.options;
        let train_pairs =
            draw_pairs(&self.white, &self.black, options.validation_pairs, options.seed, Draw::TrainingSample, false)?;
        let train_scores = evaluate(params, device, &self.train, &train_pairs)?;
        let val = evaluate(params, device, &self.validation, &self.validation_pairs)?;
        let report = format!(
            "best epoch {}: validation accuracy ({} split)={:.4} training-pairs accuracy={:.4} pairs={}",
            run.best_epoch.unwrap_or(0),
            if options.random_split { "random-position" } else { "game" },
            val.accuracy(),
            train_scores.accuracy(),
            self.validation_pairs.len()
        );
        Ok(Card {
            kind: ModelKind::Comparator,
            stacks: vec!["encoder".into(), "head".into()],
            output: serde_json::json!({
                "meaning": "softmax over 2: index 0 = the first position of the pair is better for White (from the game White won)",
            }),
            metrics: serde_json::json!({
                "validation_split": if options.random_split { "random positions (--random-split)" } else { "games" },
                "validation_pair_accuracy": val.accuracy(),
                "validation_pair_loss": val.mean_loss(),
                "validation_pairs": self.validation_pairs.len(),
                "training_pair_accuracy": train_scores.accuracy(),
                "training_pairs_measured": train_pairs.len(),
            }),
            report,
        })
    }
}

/// Trains the comparator (see [`ComparatorTrainer`]); writes `comparator.safetensors` +
/// `comparator.json` into the run directory and returns the model.
pub fn train(args: &RunArgs, options: &ComparatorOptions) -> anyhow::Result<Model> {
    run::train(args, &mut ComparatorTrainer::new(&args.data, options)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_pairs_put_the_higher_evaluation_in_the_white_won_role() {
        let records: Vec<usize> = (0..50).collect();
        let evals: Vec<i16> = (0..50).map(|i| (i * 37 % 50) as i16 * 20 - 500).collect();
        let eval_of = |r: usize| i32::from(evals[r]);
        let evaluated = (records, evals.clone());
        let pairs = draw_eval_pairs(&evaluated, 150, 2000, 3, 1, true).unwrap();
        assert_eq!(pairs.len(), 2000);
        assert!(pairs.iter().all(|p| eval_of(p.white_won) >= eval_of(p.black_won) + 150));
        assert!(pairs.iter().any(|p| p.flipped) && pairs.iter().any(|p| !p.flipped));
        assert!(pairs.iter().any(|p| p.white_first) && pairs.iter().any(|p| !p.white_first));
        assert_eq!(pairs, draw_eval_pairs(&evaluated, 150, 2000, 3, 1, true).unwrap());
        assert_ne!(pairs, draw_eval_pairs(&evaluated, 150, 2000, 3, 2, true).unwrap());
    }

    #[test]
    fn eval_pairs_report_impossible_margins_and_missing_evaluations() {
        let err = draw_eval_pairs(&(vec![0, 1, 2], vec![0, 10, 20]), 100, 10, 0, 0, false).unwrap_err().to_string();
        assert!(err.contains("--eval-margin 100"), "{err}");
        let err = draw_eval_pairs(&(vec![], vec![]), 100, 10, 0, 0, false).unwrap_err().to_string();
        assert!(err.contains("[%eval]"), "{err}");
    }

    #[test]
    fn eval_pair_fraction_is_checked() {
        assert_eq!(fraction("0.25"), Ok(0.25));
        for bad in ["-0.1", "1.5", "half"] {
            assert!(fraction(bad).unwrap_err().contains(bad));
        }
    }
}
