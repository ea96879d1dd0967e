//! The student comparator for search (see [`net`]): the evaluation net's feature
//! transformer gives each position its code (copied from `--value`, kept as it is), and a
//! small head that sees both codes learns which position is better from pairs labelled by
//! the evaluation search's scores ([`pairs`]): siblings one and two plies apart and random
//! positions of the same game, targets `sigmoid((s_a − s_b) / K)`. One stage of Adam with a
//! warm-up and a cosine decay; each epoch a fresh random subset of the pairs; the epoch with
//! the best validation pair accuracy is kept.
//!
//! Pair accuracy counts the pairs whose scores differ by at least `--margin` centipawns and
//! whose better position the student names. The card also gives it on `--holdout`
//! datasets (never trained on), and, with `--teacher`, the thesis comparator's on the same
//! pairs, and both on the thesis's result pairs (a position from a game White won against
//! one from a game Black won).

pub mod net;
pub mod pairs;

use std::path::{Path, PathBuf};

use anyhow::Context;
use burn::tensor::Device;
use deepchess_core::arch::{
    STUDENT_HEAD_STACK, STUDENT_HIDDEN, VALUE_CENTIPAWNS_PER_UNIT, VALUE_FT_STACK, VALUE_OUT_STACK,
};
use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Model, ModelKind, Split};
use serde::{Deserialize, Serialize};

use crate::data::{DataFile, epoch_order, epoch_order_for};
use crate::nn::adam::Adam;
use crate::nn::params::Params;
use crate::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Schedule, Score, Stage, Trainer, Validation,
};
use crate::trainers::comparator::{self, Pair};
use net::CodedPair;
use pairs::{ScoredPair, game_pairs};

/// Hyper-parameters of `deepchess train student`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct StudentOptions {
    /// Directory holding the `value` model whose feature transformer gives the codes (and
    /// whose output layer the student keeps for scores).
    #[arg(long, value_name = "DIR")]
    pub value: PathBuf,
    /// Epochs.
    #[arg(long, default_value_t = 4)]
    pub epochs: u32,
    /// Pairs per batch.
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Peak learning rate (Adam).
    #[arg(long, default_value_t = 2e-3)]
    pub lr: f64,
    /// Hidden width H of the head.
    #[arg(long, default_value_t = STUDENT_HIDDEN)]
    pub hidden: usize,
    /// Training pairs per epoch (a fresh random subset each epoch).
    #[arg(long, default_value_t = 200_000)]
    pub pairs_per_epoch: usize,
    /// Centipawns K in the target `sigmoid((s_a − s_b) / K)`.
    #[arg(long, default_value_t = 100.0)]
    pub scale: f64,
    /// Scores are clamped to ±this many centipawns (mates at the bound).
    #[arg(long, default_value_t = 2000)]
    pub max_score: i32,
    /// Pairs whose scores differ by less than this many centipawns do not count in the
    /// pair accuracy.
    #[arg(long, default_value_t = 20)]
    pub margin: i32,
    /// Validation pairs measured after every epoch (the first of a seeded shuffle).
    #[arg(long, default_value_t = 20_000)]
    pub validation_pairs: usize,
    /// Datasets never trained on whose validation and training games are measured in the
    /// card (repeat the option for several).
    #[arg(long, value_name = "DIR")]
    #[serde(default)]
    pub holdout: Vec<PathBuf>,
    /// A second dataset whose pairs are mixed into every epoch (for example a `prepare`
    /// output of self-play games: positions of one game one or two plies apart and at
    /// random), `--mix-fraction` of the epoch's pairs.
    #[arg(long, value_name = "DIR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<PathBuf>,
    /// Share of each epoch's training pairs drawn from `--mix`.
    #[arg(long, default_value_t = DEFAULT_MIX_FRACTION)]
    #[serde(default = "default_mix_fraction")]
    pub mix_fraction: f64,
    /// Directory holding the thesis `comparator`, measured on the same pairs in the card.
    #[arg(long, value_name = "DIR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher: Option<PathBuf>,
    /// Seed of initialisation, pairs and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Share of an epoch's pairs from `--mix` unless `--mix-fraction` says otherwise.
const DEFAULT_MIX_FRACTION: f64 = 0.25;

fn default_mix_fraction() -> f64 {
    DEFAULT_MIX_FRACTION
}

/// Purpose of the random stream that draws the `--mix` pairs (see [`crate::data::rng`]).
const MIX_STREAM: u64 = 43;
/// Purpose of the random stream that shuffles the `--mix` pairs in with the others.
const MIX_SHUFFLE_STREAM: u64 = 44;

impl StudentOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(
            (1..=64).contains(&self.hidden),
            "--hidden must be in 1..=64 (what the engine loads), got {}",
            self.hidden
        );
        anyhow::ensure!(self.scale > 0.0 && self.scale.is_finite(), "--scale must be positive, got {}", self.scale);
        anyhow::ensure!(self.max_score > 0, "--max-score must be positive, got {}", self.max_score);
        anyhow::ensure!(self.margin >= 0, "--margin must not be negative, got {}", self.margin);
        anyhow::ensure!(self.pairs_per_epoch > 0, "--pairs-per-epoch must be at least 1");
        anyhow::ensure!(self.validation_pairs > 0, "--validation-pairs must be at least 1");
        anyhow::ensure!(
            (0.0..1.0).contains(&self.mix_fraction),
            "--mix-fraction must be in 0..1, got {}",
            self.mix_fraction
        );
        run::check_loop_options(self.batch, self.lr, None)
    }
}

/// The scored pairs of one split of a dataset.
pub struct PairSet {
    file: DataFile,
    pairs: Vec<ScoredPair>,
}

impl PairSet {
    /// The pairs of `split` of the `moves` dataset in `dir`.
    pub fn open(dir: &Path, split: Split, options: &StudentOptions) -> anyhow::Result<PairSet> {
        let file = DataFile::open(dir, Content::Moves, split)?;
        let pairs = game_pairs(&file, options.max_score, options.seed);
        eprintln!("{}: {} pairs of scored positions", file.path.display(), pairs.len());
        Ok(PairSet { file, pairs })
    }

    /// The first `count` pairs of a seeded shuffle (the same for every run with the seed).
    fn sample(&self, count: usize, seed: u64) -> Vec<ScoredPair> {
        epoch_order(self.pairs.len(), Some(count), seed, u32::MAX).into_iter().map(|i| self.pairs[i]).collect()
    }

    /// Codes and targets of `pairs` (records of this set).
    fn coded(&self, params: &Params, pairs: &[ScoredPair], scale: f64) -> anyhow::Result<Vec<CodedPair>> {
        pairs.iter().map(|p| self.coded_pair(params, p, scale)).collect()
    }

    /// Codes and target of one pair of this set.
    fn coded_pair(&self, params: &Params, pair: &ScoredPair, scale: f64) -> anyhow::Result<CodedPair> {
        let code = |i: usize| -> anyhow::Result<Vec<f32>> {
            let features = self
                .file
                .get(i)
                .features()
                .map_err(|e| anyhow::anyhow!("{}: record {i}: {e}", self.file.path.display()))?;
            Ok(net::code(params, &features))
        };
        Ok(CodedPair { a: code(pair.a)?, b: code(pair.b)?, target: pair.target(scale) })
    }
}

/// Loss over all pairs and accuracy over those whose scores differ by at least `margin`.
fn measure(params: &Params, set: &PairSet, pairs: &[ScoredPair], options: &StudentOptions) -> anyhow::Result<Score> {
    let coded = set.coded(params, pairs, options.scale)?;
    let (mut loss, mut right, mut counted) = (0.0, 0usize, 0usize);
    for (pair, c) in pairs.iter().zip(&coded) {
        let z = net::logit(params, &c.a, &c.b);
        loss += net::bce(z, c.target);
        if pair.diff.abs() >= options.margin {
            counted += 1;
            right += usize::from((z > 0.0) == (pair.diff > 0));
        }
    }
    Ok(Score { loss: loss / pairs.len().max(1) as f64, accuracy: Some(right as f64 / counted.max(1) as f64) })
}

/// The thesis comparator's accuracy on the same pairs (those differing by `margin`).
fn teacher_accuracy(
    teacher: &Params,
    device: &Device,
    set: &PairSet,
    pairs: &[ScoredPair],
    margin: i32,
) -> anyhow::Result<f64> {
    let as_result_pairs: Vec<Pair> = pairs
        .iter()
        .filter(|p| p.diff.abs() >= margin)
        .map(|p| {
            let (better, worse) = if p.diff > 0 { (p.a, p.b) } else { (p.b, p.a) };
            Pair { white_won: better, black_won: worse, white_first: p.a == better, flipped: false }
        })
        .collect();
    Ok(comparator::evaluate(teacher, device, &set.file, &as_result_pairs)?.accuracy())
}

/// The student's accuracy on the thesis's result pairs of the `positions` dataset in `dir`.
fn result_pair_accuracy(params: &Params, dir: &Path, count: usize) -> anyhow::Result<(f64, DataFile, Vec<Pair>)> {
    let file = DataFile::open(dir, Content::Positions, Split::Validation)?;
    let (white, black) = comparator::decisive(&file);
    let pairs = comparator::measurement_pairs(&white, &black, count)?;
    let mut right = 0;
    for pair in &pairs {
        let code = |i: usize| file.get(i).features().map(|f| net::code(params, &f));
        let (w, b) = (code(pair.white_won)?, code(pair.black_won)?);
        right += usize::from(net::logit(params, &w, &b) > 0.0);
    }
    Ok((right as f64 / pairs.len().max(1) as f64, file, pairs))
}

/// The student's [`Trainer`].
pub struct StudentTrainer {
    options: StudentOptions,
    data: PathBuf,
    train: PairSet,
    /// The training pairs of `--mix` (indices past `train`'s in a pass).
    mix: Option<PairSet>,
    validation: PairSet,
    validation_pairs: Vec<ScoredPair>,
    /// Centipawns per logit unit of the `--value` net (its output layer is kept).
    value_scale: f64,
}

impl StudentTrainer {
    /// Checks the options and draws the pairs of `data`.
    pub fn new(data: &Path, options: &StudentOptions) -> anyhow::Result<StudentTrainer> {
        options.check()?;
        let train = PairSet::open(data, Split::Train, options)?;
        let validation = PairSet::open(data, Split::Validation, options)?;
        anyhow::ensure!(
            !train.pairs.is_empty() && !validation.pairs.is_empty(),
            "--data {}: the student needs scored positions ([%eval] comments) in training and validation games, found {} and {} pairs",
            data.display(),
            train.pairs.len(),
            validation.pairs.len()
        );
        let validation_pairs = validation.sample(options.validation_pairs, options.seed);
        let mix = options
            .mix
            .as_ref()
            .map(|dir| PairSet::open(dir, Split::Train, options).with_context(|| format!("--mix {}", dir.display())))
            .transpose()?;
        if let (Some(dir), Some(set)) = (&options.mix, &mix) {
            anyhow::ensure!(!set.pairs.is_empty(), "--mix {}: no scored pairs in its training games", dir.display());
        }
        let value_scale = value_model(&options.value)?.card.output[VALUE_CENTIPAWNS_PER_UNIT]
            .as_f64()
            .filter(|k| *k > 0.0 && k.is_finite())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--value {}: the card gives no positive output.{VALUE_CENTIPAWNS_PER_UNIT}",
                    options.value.display()
                )
            })?;
        Ok(StudentTrainer {
            options: options.clone(),
            data: data.to_path_buf(),
            train,
            mix,
            validation,
            validation_pairs,
            value_scale,
        })
    }

    /// Pairs of `--data`'s training games: a pass's indices below this are theirs, the
    /// rest `--mix`'s.
    pub fn training_pairs(&self) -> usize {
        self.train.pairs.len()
    }

    /// The training pair at `index` of a pass: `train`'s, then `mix`'s.
    fn pair(&self, index: usize) -> (&PairSet, ScoredPair) {
        match index.checked_sub(self.train.pairs.len()) {
            Some(i) => {
                let mix = self.mix.as_ref().expect("indices past the training pairs are the mix's");
                (mix, mix.pairs[i])
            }
            None => (&self.train, self.train.pairs[index]),
        }
    }
}

impl Trainer for StudentTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Student
    }

    fn other_inputs(&self) -> Vec<(&'static str, PathBuf)> {
        std::iter::once(("--value", self.options.value.clone()))
            .chain(self.options.mix.iter().map(|d| ("--mix", d.clone())))
            .chain(self.options.teacher.iter().map(|d| ("--teacher", d.clone())))
            .chain(self.options.holdout.iter().map(|d| ("--holdout", d.clone())))
            .collect()
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn init(&self) -> anyhow::Result<Params> {
        let mut params = Params::from_model(&value_model(&self.options.value)?);
        params.stacks.iter_mut().for_each(|s| s.final_activation = s.name == VALUE_FT_STACK);
        Ok(net::with_head(params, self.options.hidden, self.options.seed))
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        let schedule = Schedule::WarmupCosine { lr: o.lr, warmup: 50, min_lr: o.lr * 0.05 };
        vec![Stage { epochs: o.epochs, batch: o.batch, schedule }]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let o = &self.options;
        let n = self.train.pairs.len();
        let Some(mix) = &self.mix else {
            let order = epoch_order(n, Some(o.pairs_per_epoch.min(n)), o.seed, at.epoch);
            return Ok(vec![Pass { name: "student".into(), order }]);
        };
        // Each set's share drawn apart, then the two shuffled together.
        let from_mix = ((o.pairs_per_epoch as f64 * o.mix_fraction).round() as usize).min(mix.pairs.len());
        let from_train = (o.pairs_per_epoch - from_mix).min(n);
        let mut both = epoch_order(n, Some(from_train), o.seed, at.epoch);
        let drawn = epoch_order_for(mix.pairs.len(), Some(from_mix), o.seed, at.epoch, MIX_STREAM);
        both.extend(drawn.into_iter().map(|i| n + i));
        let shuffle = epoch_order_for(both.len(), None, o.seed, at.epoch, MIX_SHUFFLE_STREAM);
        let order = shuffle.into_iter().map(|i| both[i]).collect();
        Ok(vec![Pass { name: "student".into(), order }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let coded = batch
            .indices
            .iter()
            .map(|&i| {
                let (set, pair) = self.pair(i);
                set.coded_pair(params, &pair, self.options.scale)
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let (loss, correct, grads) = net::loss_and_gradients(params, &coded);
        adam.update(params, &grads, batch.lr as f32);
        Ok(BatchResult { loss, correct: Some(correct) })
    }

    fn validate(&mut self, params: &Params, _: &Device, _: &EpochAt) -> anyhow::Result<Validation> {
        let score = measure(params, &self.validation, &self.validation_pairs, &self.options)?;
        Ok(Validation::one(score, score.accuracy))
    }

    fn card(&mut self, params: &Params, device: &Device, run: &Finished<'_>) -> anyhow::Result<Card> {
        let o = &self.options;
        let teacher = o
            .teacher
            .as_ref()
            .map(|dir| {
                Model::load(dir, ModelKind::Comparator)
                    .map(|m| Params::from_model(&m))
                    .map_err(|e| anyhow::anyhow!("--teacher {}: {e}", dir.display()))
            })
            .transpose()?;
        let measured = Measured { params, device, teacher: teacher.as_ref(), options: o };
        let mut rows = vec![measured.row(&self.data, &self.validation, &self.validation_pairs)?];
        for dir in &o.holdout {
            let set =
                PairSet::open(dir, Split::Validation, o).with_context(|| format!("--holdout {}", dir.display()))?;
            let pairs = set.sample(o.validation_pairs, o.seed);
            rows.push(measured.row(dir, &set, &pairs)?);
        }
        let report = format!(
            "best epoch {}: {}",
            run.best_epoch.unwrap_or(0),
            rows.iter().map(serde_json::Value::to_string).collect::<Vec<_>>().join("; ")
        );
        Ok(Card {
            kind: ModelKind::Student,
            stacks: vec![VALUE_FT_STACK.into(), VALUE_OUT_STACK.into(), STUDENT_HEAD_STACK.into()],
            output: serde_json::json!({
                "meaning": "logit that the first position is better for White: h(b0 + F a + S b) - h(b0 + F b + S a), h(u) = w . clamp(u, 0, 1); F the first C rows of head.0, S the next C",
                "code": "C = 2N + 1: SCReLU of White's accumulator, SCReLU of Black's (ft, the value net's, kept), 1 when Black is to move",
                "target": format!("sigmoid((s_a - s_b) / {}), s White's [%eval] score clamped to +-{}", o.scale, o.max_score),
                VALUE_CENTIPAWNS_PER_UNIT: self.value_scale,
                "out": "the value net's output layer, kept: scores of the code's positions",
            }),
            metrics: serde_json::json!({ "pair_accuracy": rows, "margin_cp": o.margin }),
            report,
        })
    }
}

/// What the card measures with: the student, the teacher and the options.
struct Measured<'a> {
    params: &'a Params,
    device: &'a Device,
    teacher: Option<&'a Params>,
    options: &'a StudentOptions,
}

impl Measured<'_> {
    /// Pair accuracies of the student and the teacher on the search-labelled `pairs` of
    /// `set` and on the result pairs of the validation games of `dir`.
    fn row(&self, dir: &Path, set: &PairSet, pairs: &[ScoredPair]) -> anyhow::Result<serde_json::Value> {
        let o = self.options;
        let student = measure(self.params, set, pairs, o)?.accuracy;
        let teacher = self.teacher.map(|t| teacher_accuracy(t, self.device, set, pairs, o.margin)).transpose()?;
        // Result pairs need the `positions` dataset of `dir` (`prepare` writes it; a
        // `siblings` output has none).
        let positions = dir.join(file_name(Content::Positions, Split::Validation));
        let (result_pairs, student_result, teacher_result) = if positions.exists() {
            let (student_result, file, result_pairs) = result_pair_accuracy(self.params, dir, o.validation_pairs)?;
            let teacher_result = self
                .teacher
                .map(|t| comparator::evaluate(t, self.device, &file, &result_pairs).map(|t| t.accuracy()))
                .transpose()?;
            (result_pairs.len(), Some(student_result), teacher_result)
        } else {
            eprintln!("{}: no positions dataset, so no result pairs measured", dir.display());
            (0, None, None)
        };
        let row = serde_json::json!({
            "data": dir.display().to_string(),
            "search_pairs": pairs.len(),
            "student_search_pairs": student,
            "teacher_search_pairs": teacher,
            "result_pairs": result_pairs,
            "student_result_pairs": student_result,
            "teacher_result_pairs": teacher_result,
        });
        eprintln!("{row}");
        Ok(row)
    }
}

/// The `value` model in `dir` (`--value`).
fn value_model(dir: &Path) -> anyhow::Result<Model> {
    let model = Model::load(dir, ModelKind::Value).map_err(|e| anyhow::anyhow!("--value {}: {e}", dir.display()))?;
    // the student's codes index the plain layout (as the engine's student net reads them)
    let layout = model.card.value_input_layout().map_err(|e| anyhow::anyhow!("--value {}: {e}", dir.display()))?;
    anyhow::ensure!(
        layout == deepchess_core::arch::ValueInputLayout::Plain,
        "--value {}: the value net's input layout is {}; the student's codes need a plain one",
        dir.display(),
        layout.name()
    );
    Ok(model)
}

/// Trains the student (see [`StudentTrainer`]); writes `student.safetensors` +
/// `student.json` into the run directory and returns the model.
pub fn train(args: &RunArgs, options: &StudentOptions) -> anyhow::Result<Model> {
    run::train(args, &mut StudentTrainer::new(&args.data, options)?)
}
