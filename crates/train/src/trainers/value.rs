//! The evaluation net (NNUE-style perspective net, see [`crate::nn::perspective`]),
//! trained on the `moves` dataset's scored positions.
//!
//! Target, from the side to move's view: `t = λ · result + (1 − λ) · sigmoid(score / K)`
//! (`λ` = `--result-weight`, `K` = `--scale`, the `--init` net's, or fitted to the training data); loss
//! `(sigmoid(o) − t)²`; AdamW with a linear warm-up and a cosine decay over the run; the
//! output weights clipped to what the engine's 16-bit quantisation holds. The model of the
//! last epoch is written (nets are chosen by games, not by validation loss).

use std::path::{Path, PathBuf};

use anyhow::Context;
use burn::tensor::Device;
use deepchess_core::arch::{
    VALUE_CENTIPAWNS_PER_UNIT, VALUE_FT_QUANT, VALUE_FT_STACK, VALUE_FT_WIDTH, VALUE_INPUT_LAYOUT,
    VALUE_MAX_OUTPUT_BUCKETS, VALUE_OUT_QUANT, VALUE_OUT_STACK, ValueInputLayout,
};
use deepchess_core::features::PERSPECTIVE_FEATURES;
use deepchess_core::{Content, Model, ModelKind, SparseFeatures, Split};
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use crate::data::{DataFile, epoch_order};
use crate::eval_positions::{EvalPositions, FilterCounts, PositionFilters, Target, fit_scale};
use crate::mix::{self, Mix, MixOptions, MixStream, Source};
use crate::nn::adam::Adam;
use crate::nn::factoriser;
use crate::nn::params::Params;
use crate::nn::perspective::{self, PerspectiveBatch, side_to_move_view};
use crate::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Schedule, Score, Stage, Trainer, Validation,
};

/// Hyper-parameters of `deepchess train value`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct ValueOptions {
    /// Epochs (passes over the training positions, or `--positions-per-epoch` of them).
    #[arg(long, default_value_t = 20)]
    pub epochs: u32,
    /// Positions per batch.
    #[arg(long, default_value_t = 16_384)]
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
    /// Weight λ of the game result in the target (the score gets 1 − λ); 0 played best on
    /// the TCEC data (docs/RESULTS.md).
    #[arg(long, default_value_t = 0.0)]
    pub result_weight: f64,
    /// Centipawns K per logit unit in `sigmoid(score / K)`; fitted to the training
    /// positions' results when absent.
    #[arg(long)]
    pub scale: Option<f64>,
    /// Width N of the feature transformer (a multiple of 16).
    #[arg(long, default_value_t = VALUE_FT_WIDTH)]
    pub width: usize,
    /// Use at most this many training positions per epoch (a fresh random subset each epoch).
    #[arg(long)]
    pub positions_per_epoch: Option<usize>,
    /// Seed of initialisation and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Further dataset directories (`deepchess datagen` or `prepare` output) whose positions
    /// join those of `--data`, split for split; repeat the option for several (self-play
    /// generations next to the TCEC games).
    #[arg(long = "extra-data", value_name = "DIR")]
    #[serde(default)]
    pub extra_data: Vec<PathBuf>,
    /// Directory holding a trained `value` model the run starts from instead of fresh
    /// weights (a warm start: the next generation fine-tuned from the best net so far);
    /// its width must be the run's `--width`.
    #[arg(long, value_name = "DIR")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
    /// Output buckets B: the output layer `[2N, B]` has one column per range of piece
    /// counts (8: bullet's `(pieces − 2) / 4`, chosen by games); a
    /// single-output `--init` net is copied into every bucket.
    #[arg(long, default_value_t = 8)]
    #[serde(default = "single_output")]
    pub output_buckets: usize,
    /// Horizontal mirroring of the inputs: each perspective sees its own king on files
    /// a–d, the board mirrored a ↔ h when the king stands on files e–h (the card's
    /// `input_layout`); an `--init` net must have the same layout.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mirror: bool,
    /// King buckets on top of `--mirror` (which it implies): four sets of 768 inputs, the
    /// perspective's own king on a1–b1, c1–d1, the second rank or beyond (seen from its
    /// side, after mirroring) picking the set (`input_layout`
    /// `horizontal_mirror_king_buckets4`); a mirrored `--init` net without buckets is copied
    /// into every bucket.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub king_buckets: bool,
    /// With `--king-buckets`: train the buckets with a factoriser, a shared `[768, N]`
    /// added to every bucket's rows and learnt from every position, folded into the
    /// buckets when the model is written (bullet's factorised first layer).
    #[arg(long, requires = "king_buckets")]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub factoriser: bool,
    /// PGN files with `[%eval]` streamed into the training mix, each `FILE[:WEIGHT]` (weight
    /// 1 by default; 2 takes each position twice an epoch, 0.5 a seeded half, 0 drops the
    /// file): more sources beside a PGN `--data`, or new weights for its files. `--data` may
    /// be such a file, or a directory of them (`data/selfplay`: every `*.pgn*` file there).
    #[arg(long, value_name = "FILE[:WEIGHT]", num_args = 1..)]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<Source>,
    /// Positions in the shuffle buffer of a streamed mix (default 262,144).
    #[arg(long, value_name = "N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_buffer: Option<usize>,
    /// Share of a streamed mix's games held out for validation, by a hash of each game as
    /// `prepare` splits (default 0.05).
    #[arg(long, value_name = "F")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_validation_fraction: Option<f64>,
    /// Which positions are used.
    #[command(flatten)]
    #[serde(flatten)]
    pub filters: PositionFilters,
}

/// Default of `--shuffle-buffer`.
pub const DEFAULT_SHUFFLE_BUFFER: usize = 262_144;
/// Default of `--mix-validation-fraction`.
pub const DEFAULT_MIX_VALIDATION_FRACTION: f64 = 0.05;

/// The output buckets of runs from before `--output-buckets`.
fn single_output() -> usize {
    1
}

impl ValueOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(
            (1..=VALUE_MAX_OUTPUT_BUCKETS).contains(&self.output_buckets),
            "--output-buckets must be in 1..={VALUE_MAX_OUTPUT_BUCKETS}, got {}",
            self.output_buckets
        );
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
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.result_weight),
            "--result-weight must be in 0..=1, got {}",
            self.result_weight
        );
        anyhow::ensure!(self.scale.is_none_or(|k| k > 0.0 && k.is_finite()), "--scale must be positive");
        anyhow::ensure!(self.shuffle_buffer.is_none_or(|n| n > 0), "--shuffle-buffer must be at least 1");
        anyhow::ensure!(
            self.mix_validation_fraction.is_none_or(|f| (0.0..1.0).contains(&f)),
            "--mix-validation-fraction must be in 0..1"
        );
        run::check_loop_options(self.batch, self.lr, self.positions_per_epoch)
    }
}

/// Validation figures of the evaluation net.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ValueScores {
    /// Mean of `(sigmoid(o) − t)²`.
    pub loss: f64,
    /// Positions.
    pub positions: usize,
}

impl ValueOptions {
    /// The input layout the options ask for.
    pub fn layout(&self) -> ValueInputLayout {
        match (self.king_buckets, self.mirror) {
            (true, _) => ValueInputLayout::MirrorKingBuckets,
            (false, true) => ValueInputLayout::HorizontalMirror,
            (false, false) => ValueInputLayout::Plain,
        }
    }
}

/// Loss of `params` (inputs indexed by `layout`) over every position of `positions`.
pub fn evaluate(params: &Params, layout: ValueInputLayout, positions: &EvalPositions, target: &Target) -> ValueScores {
    let indices: Vec<usize> = (0..positions.len()).collect();
    let mut total = 0.0;
    for chunk in indices.chunks(65_536) {
        let batch = positions.batch(chunk, target);
        let logits = perspective::logits(params, layout, &batch);
        total += logits
            .iter()
            .zip(&batch.targets)
            .map(|(o, t)| f64::from((1.0 / (1.0 + (-o).exp()) - t).powi(2)))
            .sum::<f64>();
    }
    ValueScores { loss: total / positions.len().max(1) as f64, positions: positions.len() }
}

/// White's logits of records `indices` of `file` (any content).
pub fn white_logits(
    params: &Params,
    layout: ValueInputLayout,
    file: &DataFile,
    indices: &[usize],
) -> anyhow::Result<Vec<f32>> {
    let mut batch = PerspectiveBatch::new();
    let mut white_to_move = Vec::with_capacity(indices.len());
    for &i in indices {
        let record = file.get(i);
        let features = record.features().with_context(|| format!("{}: record {i}", file.path.display()))?;
        let pieces = features.as_slice().iter().copied().filter(|&f| usize::from(f) < PERSPECTIVE_FEATURES);
        batch.push(&side_to_move_view(pieces, record.turn()), 0.5);
        white_to_move.push(record.turn() == shakmaty::Color::White);
    }
    let logits = perspective::logits(params, layout, &batch);
    Ok(logits.into_iter().zip(white_to_move).map(|(o, white)| if white { o } else { -o }).collect())
}

/// Share of `pairs` where the position from the game White won gets the higher score
/// (the evaluation net used as a comparator; a diagnostic).
pub fn pair_accuracy(
    params: &Params,
    layout: ValueInputLayout,
    file: &DataFile,
    pairs: &[crate::trainers::comparator::Pair],
) -> anyhow::Result<f64> {
    let w: Vec<usize> = pairs.iter().map(|p| p.white_won).collect();
    let b: Vec<usize> = pairs.iter().map(|p| p.black_won).collect();
    let (vw, vb) = (white_logits(params, layout, file, &w)?, white_logits(params, layout, file, &b)?);
    let right = vw.iter().zip(&vb).filter(|(w, b)| w > b).count();
    Ok(right as f64 / pairs.len().max(1) as f64)
}

/// The start position with one of White's pieces removed, to read the net's sense of material.
pub const MATERIAL_PROBES: [(&str, &str); 5] = [
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    ("no knight b1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1"),
    ("no bishop f1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQK1NR w KQkq - 0 1"),
    ("no rook a1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w Kkq - 0 1"),
    ("no queen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1"),
];

/// White's static score in centipawns of each of [`MATERIAL_PROBES`] (White to move).
pub fn material_probes(params: &Params, layout: ValueInputLayout, scale: f64) -> Vec<(String, f64)> {
    let mut batch = PerspectiveBatch::new();
    for (_, fen) in MATERIAL_PROBES {
        let setup: Fen = fen.parse().expect("valid probe FEN");
        let pos: Chess = setup.into_position(CastlingMode::Standard).expect("legal probe position");
        let features = SparseFeatures::from_position(&pos);
        let pieces = features.as_slice().iter().copied().filter(|&f| usize::from(f) < PERSPECTIVE_FEATURES);
        batch.push(&side_to_move_view(pieces, pos.turn()), 0.5);
    }
    let logits = perspective::logits(params, layout, &batch);
    MATERIAL_PROBES.iter().zip(logits).map(|((name, _), o)| (name.to_string(), f64::from(o) * scale)).collect()
}

/// Opens and filters the positions of one split of the dataset in `dir`, saying what the
/// filters kept.
/// The positions of `split` in every directory of `dirs`, filtered, in the order given.
pub fn load_all(
    dirs: &[&Path],
    split: Split,
    filters: &PositionFilters,
) -> anyhow::Result<(EvalPositions, FilterCounts)> {
    let mut all = (EvalPositions::default(), FilterCounts::default());
    for dir in dirs {
        let (positions, counts) = load(dir, split, filters)?;
        all.0.append(positions);
        all.1 += counts;
    }
    Ok(all)
}

/// The positions of `split` in the dataset directory `dir` that pass `filters`.
pub fn load(dir: &Path, split: Split, filters: &PositionFilters) -> anyhow::Result<(EvalPositions, FilterCounts)> {
    let file = DataFile::open(dir, Content::Moves, split)?;
    let (positions, counts) = EvalPositions::load(&file, filters)?;
    eprintln!(
        "{}: {} of {} records kept (no score {}, early {}, extreme score {}, noisy move {}, in check {})",
        file.path.display(),
        counts.kept,
        counts.records,
        counts.no_score,
        counts.early,
        counts.extreme_score,
        counts.noisy,
        counts.in_check
    );
    Ok((positions, counts))
}

/// Where the training positions come from.
enum Training {
    /// Prepared datasets, held in memory.
    Held(EvalPositions),
    /// PGN files streamed, with the current epoch's stream.
    Streamed(Box<Mix>, Option<Box<MixStream>>),
}

/// The evaluation net's [`Trainer`]: one stage of AdamW with a linear warm-up and a cosine
/// decay over the run, gradients computed by hand ([`perspective::loss_and_gradients`]), the
/// output weights clipped after every step. No epoch is selected: the model is the last
/// epoch's (nets are chosen by games, not by validation loss).
pub struct ValueTrainer {
    options: ValueOptions,
    train: Training,
    validation: EvalPositions,
    /// What the filters kept, in training and validation.
    counts: (FilterCounts, FilterCounts),
    target: Target,
}

impl ValueTrainer {
    /// Checks the options, loads and filters the positions of `data` and fits the scale
    /// (unless `--scale` or the `--init` net gives it).
    pub fn new(data: &Path, options: &ValueOptions) -> anyhow::Result<ValueTrainer> {
        options.check()?;
        let sources = mix::sources(data, &options.mix)?;
        let (train, validation, train_counts, validation_counts) = if sources.is_empty() {
            let dirs: Vec<&Path> =
                std::iter::once(data).chain(options.extra_data.iter().map(PathBuf::as_path)).collect();
            let (train, train_counts) = load_all(&dirs, Split::Train, &options.filters)?;
            let (validation, validation_counts) = load_all(&dirs, Split::Validation, &options.filters)?;
            (Training::Held(train), validation, train_counts, validation_counts)
        } else {
            anyhow::ensure!(
                options.extra_data.is_empty(),
                "--extra-data joins prepared datasets, which are held in memory: with PGN files streamed, give those as --mix too"
            );
            let mut mix = Mix::open(
                &sources,
                MixOptions {
                    filters: options.filters.clone(),
                    seed: options.seed,
                    validation_fraction: options.mix_validation_fraction.unwrap_or(DEFAULT_MIX_VALIDATION_FRACTION),
                    shuffle_buffer: options.shuffle_buffer.unwrap_or(DEFAULT_SHUFFLE_BUFFER),
                },
            )?;
            let (validation, (train_counts, validation_counts)) = (std::mem::take(&mut mix.validation), mix.counts);
            (Training::Streamed(Box::new(mix), None), validation, train_counts, validation_counts)
        };
        anyhow::ensure!(
            train_counts.kept > 0,
            "--data {}: no training position passes the filters (the evaluation net needs scored positions: PGN with [%eval] comments)",
            data.display()
        );
        anyhow::ensure!(
            !validation.is_empty(),
            "--data {}: no validation position passes the filters (moves-validation.bin is empty or unscored): the validation loss would mean nothing; prepare with a --validation-fraction above 0",
            data.display()
        );
        let init_scale =
            options.init.as_deref().map(init_model).transpose()?.map(|model| model_scale(&model)).transpose()?;
        let (scale, source) = match (options.scale, init_scale, &train) {
            (Some(k), _, _) => (k, ""),
            (None, Some(k), _) => (k, " (the --init net's)"),
            (None, None, Training::Held(train)) => (fit_scale(train), " (fitted)"),
            (None, None, Training::Streamed(..)) => (fit_scale(&validation), " (fitted on the validation positions)"),
        };
        eprintln!("scale K = {scale:.1} centipawns per logit unit{source}");
        let target = Target { result_weight: options.result_weight, scale };
        Ok(ValueTrainer {
            options: options.clone(),
            train,
            validation,
            counts: (train_counts, validation_counts),
            target,
        })
    }

    /// The parameters a run starts from, with the buckets the options ask for: the
    /// `--init` net's (its output and king buckets spread as the options ask), or fresh ones.
    fn init_buckets(&self) -> anyhow::Result<Params> {
        match &self.options.init {
            Some(dir) => {
                let model = init_model(dir)?;
                let layout =
                    model.card.value_input_layout().map_err(|e| anyhow::anyhow!("--init {}: {e}", dir.display()))?;
                let bucketed_from_mirrored = layout == ValueInputLayout::HorizontalMirror
                    && self.options.layout() == ValueInputLayout::MirrorKingBuckets;
                anyhow::ensure!(
                    layout == self.options.layout() || bucketed_from_mirrored,
                    "--init {}: the value net there has the input layout {}, the run asks {}{}",
                    dir.display(),
                    layout.name(),
                    self.options.layout().name(),
                    if self.options.layout() == ValueInputLayout::Plain {
                        " (give --mirror for a mirrored net)"
                    } else {
                        ""
                    }
                );
                let params = Params::from_model(&model);
                let width = perspective::width(&params);
                anyhow::ensure!(
                    width == self.options.width,
                    "--init {}: the value net there has width {width}, the run asks --width {}",
                    dir.display(),
                    self.options.width
                );
                let params = perspective::with_output_buckets(params, self.options.output_buckets)
                    .map_err(|e| anyhow::anyhow!("--init {} with --output-buckets: {e}", dir.display()))?;
                perspective::with_king_buckets(params, self.options.layout())
                    .map_err(|e| anyhow::anyhow!("--init {} with --king-buckets: {e}", dir.display()))
            }
            None => {
                let params = perspective::init(self.options.width, self.options.output_buckets, self.options.seed);
                perspective::with_king_buckets(params, self.options.layout()).map_err(|e| anyhow::anyhow!(e))
            }
        }
    }
}

impl Trainer for ValueTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Value
    }

    fn extra_data(&self) -> Vec<PathBuf> {
        self.options.extra_data.clone()
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn other_inputs(&self) -> Vec<(&'static str, PathBuf)> {
        let mix = self.options.mix.iter().map(|s| ("--mix", s.path.clone()));
        self.options.init.iter().map(|d| ("--init", d.clone())).chain(mix).collect()
    }

    fn init(&self) -> anyhow::Result<Params> {
        let params = self.init_buckets()?;
        if self.options.factoriser {
            factoriser::with_factoriser(params).map_err(|e| anyhow::anyhow!(e))
        } else {
            Ok(params)
        }
    }

    fn exported(&self, params: &Params) -> Params {
        factoriser::fold(params)
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        let schedule = Schedule::WarmupCosine { lr: o.lr, warmup: o.warmup, min_lr: o.lr * o.final_lr };
        vec![Stage { epochs: o.epochs, batch: o.batch, schedule }]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let limit = self.options.positions_per_epoch;
        let order = match &mut self.train {
            Training::Held(train) => {
                let n = train.len();
                epoch_order(n, Some(limit.unwrap_or(n).min(n)), self.options.seed, at.epoch)
            }
            // the stream's positions in the order it gives them
            Training::Streamed(mix, stream) => {
                let n = usize::try_from(mix.epoch_positions(at.epoch))?;
                *stream = Some(Box::new(mix.stream(at.epoch)));
                (0..limit.unwrap_or(n).min(n)).collect()
            }
        };
        Ok(vec![Pass { name: "value".into(), order }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let positions = match &mut self.train {
            Training::Held(train) => train.batch(batch.indices, &self.target),
            Training::Streamed(mix, stream) => {
                let stream = stream.as_mut().context("a streamed epoch without its stream")?;
                let mut positions = PerspectiveBatch::new();
                for _ in batch.indices {
                    let (features, score, result) =
                        stream.next_position(mix)?.context("the mix ended before the epoch's count")?;
                    positions.push(&features, self.target.of(score, result));
                }
                positions
            }
        };
        let (loss, grads) = perspective::loss_and_gradients(params, self.options.layout(), &positions);
        adam.update_with_weight_decay(params, &grads, batch.lr as f32, self.options.weight_decay as f32);
        perspective::clip(params);
        Ok(BatchResult { loss, correct: None })
    }

    fn validate(&mut self, params: &Params, _: &Device, _: &EpochAt) -> anyhow::Result<Validation> {
        let val = evaluate(params, self.options.layout(), &self.validation, &self.target);
        Ok(Validation::one(Score { loss: val.loss, accuracy: None }, None))
    }

    fn card(&mut self, params: &Params, _: &Device, run: &Finished<'_>) -> anyhow::Result<Card> {
        let (options, scale) = (&self.options, self.target.scale);
        let layout = options.layout();
        let val = evaluate(params, layout, &self.validation, &self.target);
        let probes = material_probes(params, layout, scale);
        let start = probes[0].1;
        let drops: serde_json::Map<String, serde_json::Value> =
            probes[1..].iter().map(|(name, cp)| (name.clone(), serde_json::json!((start - cp).round()))).collect();
        let report = format!(
            "final epoch {}: validation loss={:.5} positions={} start={:+.0}cp material drop (cp) {}",
            run.epochs,
            val.loss,
            val.positions,
            start,
            probes[1..].iter().map(|(n, cp)| format!("{n}: {:.0}", start - cp)).collect::<Vec<_>>().join(", ")
        );
        Ok(Card {
            kind: ModelKind::Value,
            stacks: vec![VALUE_FT_STACK.into(), VALUE_OUT_STACK.into()],
            output: serde_json::json!({
                "meaning": "logit o of the side to move's expected score (win 1, draw 0.5, loss 0); centipawns = o * centipawns_per_unit",
                VALUE_CENTIPAWNS_PER_UNIT: scale,
                "target": format!("{} * result + {} * sigmoid(score / {scale:.1}), side to move's view; loss (sigmoid(o) - target)^2", options.result_weight, 1.0 - options.result_weight),
                "inputs": "768 per perspective: (own, opponent) x (P N B R Q K) x 64 squares, board mirrored for Black (and files a-h mirrored when the perspective's own king stands on files e-h, if input_layout is horizontal_mirror or horizontal_mirror_king_buckets4; under the latter the 768 rows repeat for four king buckets, the perspective's own king, seen from its side after mirroring, on a1-b1, c1-d1, the second rank or beyond choosing rows bucket * 768 on); ft shared by both perspectives; out over [SCReLU(side to move), SCReLU(opponent)]",
                VALUE_INPUT_LAYOUT: layout.name(),
                "output_buckets": format!("{} columns of out, the position's chosen by its number of pieces p (kings included): min((p - 2) * {} / 32, {})", options.output_buckets, options.output_buckets, options.output_buckets - 1),
                "quantisation": {
                    "by": "the engine, at load",
                    "ft": format!("weights and biases x {VALUE_FT_QUANT} as i16; SCReLU clips at {VALUE_FT_QUANT}"),
                    "out": format!("weights x Q as i16, Q the largest power of two from {VALUE_OUT_QUANT} up keeping them within +-127 (trained within +-127/{VALUE_OUT_QUANT}); biases x {VALUE_FT_QUANT} * Q as i32"),
                },
            }),
            metrics: serde_json::json!({
                "validation": val,
                "filters": { "train": self.counts.0, "validation": self.counts.1 },
                "material_drop_cp": drops,
                "start_position_cp": start.round(),
            }),
            report,
        })
    }
}

/// The value model a warm start (`--init`) begins from.
fn init_model(dir: &Path) -> anyhow::Result<Model> {
    Model::load(dir, ModelKind::Value).map_err(|e| anyhow::anyhow!("--init {}: {e}", dir.display()))
}

/// The centipawns per logit unit K recorded in a value model's card.
fn model_scale(model: &Model) -> anyhow::Result<f64> {
    model
        .card
        .centipawns_per_unit()
        .ok_or_else(|| anyhow::anyhow!("--init: the model card gives no positive output.{VALUE_CENTIPAWNS_PER_UNIT}"))
}

/// Trains the evaluation net (see [`ValueTrainer`]); writes `value.safetensors` +
/// `value.json` into the run directory and returns the model.
pub fn train(args: &RunArgs, options: &ValueOptions) -> anyhow::Result<Model> {
    run::train(args, &mut ValueTrainer::new(&args.data, options)?)
}
