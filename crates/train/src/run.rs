//! The one training loop every trainer runs in ([`train`]): the run directory, `--resume`
//! and `--force`, stages and epochs, the learning-rate schedule, progress bars, metrics,
//! the best parameters with their epoch, and the final model with its card.
//!
//! A trainer ([`Trainer`]) says what its run is (options, initial parameters, stages with
//! their epochs and [`Schedule`]), which records each epoch visits ([`Pass`]), how one batch
//! updates the parameters (any way it likes: burn graphs through
//! [`crate::nn::step::step`], or
//! gradients computed by hand), how the parameters score on validation, and what the model
//! card says.

mod schedule;

use schedule::epoch_at;
pub use schedule::{EpochAt, Schedule, ScheduleAt, Stage};

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use burn::tensor::Device;
use deepchess_core::{Model, ModelCard, ModelKind};
use indicatif::{ProgressBar, ProgressStyle};

use crate::checkpoint::{Best, CHECKPOINT_FILE, Checkpoint};
use crate::device::DeviceChoice;
use crate::guard;
use crate::metrics::{self, EpochMetrics};
use crate::nn::adam::Adam;
use crate::nn::params::Params;

/// Options every `deepchess train` subcommand takes.
#[derive(Clone, Debug, clap::Args)]
pub struct RunArgs {
    /// Prepared dataset directory (`deepchess prepare --out`).
    #[arg(long)]
    pub data: PathBuf,
    /// Run directory: checkpoint, metrics.csv, metrics.png and the final model.
    #[arg(long)]
    pub out: PathBuf,
    /// Start afresh even if the run directory holds a checkpoint or a model (of a run of
    /// the same network; never another network's run or an input).
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// Continue the run from its last checkpoint (same options and data; `--epochs` may be
    /// raised).
    #[arg(long)]
    pub resume: bool,
    /// Where burn computes: `cpu` (the flex backend) or, in a build with the `wgpu`
    /// feature, `wgpu`, `wgpu:cpu`, `wgpu:discrete[:N]`, `wgpu:integrated[:N]`.
    #[arg(long, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
    /// Git commit of the build, recorded in the model card (set by the `deepchess` binary
    /// from its build; `None` records none).
    #[arg(skip)]
    pub git_commit: Option<String>,
}

/// One walk of an epoch through training items, with its own progress bar and metrics row.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    /// The row's `stage` column and the progress bar's label (for example `value`).
    pub name: String,
    /// The items in the order they are trained, cut into the stage's batches for
    /// [`Trainer::step`].
    pub order: Vec<usize>,
}

/// One batch handed to [`Trainer::step`].
pub struct Batch<'a> {
    /// The batch's items (a chunk of the pass's order).
    pub indices: &'a [usize],
    /// Which pass of the epoch: an index into what [`Trainer::passes`] returned.
    pub pass: usize,
    /// The epoch.
    pub at: EpochAt,
    /// Learning rate from the stage's schedule.
    pub lr: f64,
    /// The device, with autodiff, for trainers that use a burn graph ([`step`]).
    pub device: &'a Device,
}

/// What one batch step measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchResult {
    /// Mean loss over the batch (before the update).
    pub loss: f64,
    /// Correct predictions in the batch, where accuracy means something.
    pub correct: Option<usize>,
}

/// Validation loss and accuracy of one network or stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Validation loss.
    pub loss: f64,
    /// Validation accuracy, where it means something.
    pub accuracy: Option<f64>,
}

/// What [`Trainer::validate`] found after an epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    /// One score per pass of the epoch, in order.
    pub passes: Vec<Score>,
    /// Rows that only measure (no training loss), named, after the passes' rows.
    pub extra: Vec<(String, Score)>,
    /// What selects the best epoch (higher is better); `None` keeps no best parameters and
    /// the model is the last epoch's.
    pub metric: Option<f64>,
}

impl Validation {
    /// The validation of a one-pass epoch.
    pub fn one(score: Score, metric: Option<f64>) -> Validation {
        Validation { passes: vec![score], extra: Vec::new(), metric }
    }
}

/// What a finished run tells [`Trainer::card`].
pub struct Finished<'a> {
    /// The epoch (from 1) whose parameters the model holds, when the run selects one.
    pub best_epoch: Option<u32>,
    /// Epochs trained.
    pub epochs: u32,
    /// Metrics rows of every epoch.
    pub history: &'a [EpochMetrics],
}

/// What a trainer puts into the final model; the driver adds the data, options, epochs,
/// git commit and `best_epoch` to the card, saves the model, then prints `report`.
pub struct Card {
    /// Model kind.
    pub kind: ModelKind,
    /// The stacks the model holds, in order.
    pub stacks: Vec<String>,
    /// The card's description of the outputs.
    pub output: serde_json::Value,
    /// The card's metrics (a JSON object).
    pub metrics: serde_json::Value,
    /// Lines printed on standard output once the model is saved.
    pub report: String,
}

/// A network's training, as the driver [`train`] runs it.
pub trait Trainer {
    /// The network trained (what `--force` may replace in the run directory).
    fn kind(&self) -> ModelKind;

    /// Dataset directories read besides `--data` (`--extra-data`): recorded with `--data`
    /// in the checkpoint, and never a run directory.
    fn extra_data(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Other input directories, with their option (`--pos2vec`): never a run directory.
    fn other_inputs(&self) -> Vec<(&'static str, PathBuf)> {
        Vec::new()
    }

    /// The options, recorded in the checkpoint and the card (a resumed run must have the
    /// same, except `epochs`).
    fn options(&self) -> anyhow::Result<serde_json::Value>;

    /// The parameters a fresh run starts from.
    fn init(&self) -> anyhow::Result<Params>;

    /// The stages, in order (most trainers have one).
    fn stages(&self) -> Vec<Stage>;

    /// The passes of epoch `at` (most trainers have one: the epoch's shuffled records).
    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>>;

    /// Trains on one batch: updates `params` (and `adam`, if it is used) and returns the
    /// batch's loss and correct predictions.
    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult>;

    /// Scores `params` on validation after epoch `at` (`device` without autodiff).
    fn validate(&mut self, params: &Params, device: &Device, at: &EpochAt) -> anyhow::Result<Validation>;

    /// The model's card for the final parameters `params` (the best epoch's, or the last's,
    /// as [`exported`](Self::exported) gives them).
    fn card(&mut self, params: &Params, device: &Device, run: &Finished<'_>) -> anyhow::Result<Card>;

    /// The parameters the model is written with: those trained, less what only training
    /// uses (the evaluation net's factoriser, folded into the weights it factors).
    fn exported(&self, params: &Params) -> Params {
        params.clone()
    }
}

/// Refuses the loop options no run can use (`--batch 0`, a rate that is not positive,
/// `--positions-per-epoch 0`), naming the option; every trainer's options check calls it.
pub fn check_loop_options(batch: usize, lr: f64, positions_per_epoch: Option<usize>) -> anyhow::Result<()> {
    anyhow::ensure!(batch > 0, "--batch must be at least 1");
    anyhow::ensure!(lr > 0.0 && lr.is_finite(), "--lr must be positive, got {lr}");
    anyhow::ensure!(positions_per_epoch != Some(0), "--positions-per-epoch must be at least 1");
    Ok(())
}

/// Runs `trainer` in the run directory `args.out`: resumes from its checkpoint with
/// `--resume` (refusing to overwrite an earlier run without `--force`, and to resume
/// with other options or data), trains every
/// stage's epochs (saving the checkpoint, metrics.csv and metrics.png after each), then
/// writes the model (the best epoch's parameters, or the last epoch's when the validation
/// gives no metric), prints the trainer's report and returns the model.
pub fn train(args: &RunArgs, trainer: &mut impl Trainer) -> anyhow::Result<Model> {
    let stages = trainer.stages();
    let options = trainer.options()?;
    let inputs = Inputs { kind: trainer.kind(), extra_data: trainer.extra_data(), others: trainer.other_inputs() };
    let mut run = Run::open(args, &inputs, options, || trainer.init())?;
    let inference = run.device.clone().inner();
    while let Some(at) = epoch_at(&stages, run.state.epoch) {
        let stage = stages[at.stage];
        if at.stage_epoch == 0 {
            // set at the start of a stage rather than at the end of the previous one, so
            // that a run resumed at a stage boundary does the same
            run.state.adam = Adam::default();
        }
        let passes = trainer.passes(&at)?;
        if passes.iter().all(|p| p.order.is_empty()) {
            anyhow::bail!(
                "--data {}: no training item in epoch {}: nothing to train on",
                args.data.display(),
                at.epoch + 1
            );
        }
        let mut trained = Vec::with_capacity(passes.len());
        for (k, pass) in passes.iter().enumerate() {
            trained.push(train_pass(trainer, &mut run, stage, at, k, pass)?);
        }
        let validation = trainer.validate(&run.state.params, &inference, &at)?;
        run.end_epoch(trained, validation)?;
    }
    if run.state.epoch == 0 {
        anyhow::bail!("no epoch to train: raise --epochs");
    }
    let (params, best_epoch) = match &run.state.best {
        Some(best) => (trainer.exported(&best.params), Some(best.epoch)),
        None => (trainer.exported(&run.state.params), None),
    };
    let card = trainer.card(
        &params,
        &inference,
        &Finished { best_epoch, epochs: run.state.epoch, history: &run.state.history },
    )?;
    let mut metrics = card.metrics;
    if let (Some(epoch), Some(object)) = (best_epoch, metrics.as_object_mut()) {
        object.insert("best_epoch".into(), epoch.into());
    }
    let stacks: Vec<&str> = card.stacks.iter().map(String::as_str).collect();
    let mut model = params.to_model(card.kind, &stacks, |c| {
        c.output = card.output;
        fill_card(c, args, &run.state.options, run.state.epoch, metrics);
    })?;
    model.save(&run.dir)?;
    println!("{}", card.report);
    Ok(model)
}

/// One pass trained: its name, loss and accuracy, learning rate of its last batch and
/// items per second.
struct TrainedPass {
    name: String,
    tally: Tally,
    accuracy: bool,
    lr: f64,
    rate: f64,
}

/// Trains `trainer` on pass number `k` of epoch `at`, batch by batch, with a progress bar.
fn train_pass(
    trainer: &mut impl Trainer,
    run: &mut Run,
    stage: Stage,
    at: EpochAt,
    k: usize,
    pass: &Pass,
) -> anyhow::Result<TrainedPass> {
    let bar = progress_bar(&pass.name, pass.order.len() as u64);
    let started = Instant::now();
    let size = stage.batch.max(1);
    let batches = pass.order.len().div_ceil(size);
    let lr_at =
        |b: usize| stage.schedule.lr(ScheduleAt { epoch: at.stage_epoch, epochs: at.stage_epochs, batch: b, batches });
    let mut tally = Tally::default();
    let mut accuracy = true;
    for (b, indices) in pass.order.chunks(size).enumerate() {
        let batch = Batch { indices, pass: k, at, lr: lr_at(b), device: &run.device };
        let result = trainer.step(&batch, &mut run.state.params, &mut run.state.adam)?;
        if !result.loss.is_finite() {
            anyhow::bail!("{}: the loss became {} (lower the learning rate)", pass.name, result.loss);
        }
        accuracy &= result.correct.is_some();
        tally.add(result.loss, result.correct.unwrap_or(0) as f64, indices.len());
        bar.inc(indices.len() as u64);
        bar.set_message(format!("loss {:.4}", tally.mean_loss()));
    }
    bar.finish_and_clear();
    let rate = pass.order.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    Ok(TrainedPass { name: pass.name.clone(), tally, accuracy, lr: lr_at(batches.saturating_sub(1)), rate })
}

/// What a trainer reads and writes, as the run directory's checks need it.
struct Inputs {
    kind: ModelKind,
    extra_data: Vec<PathBuf>,
    others: Vec<(&'static str, PathBuf)>,
}

/// Whether `--force` may start afresh in `out`, which holds files of a run: only when they
/// are a run of the same network (by the checkpoint's record, or, for checkpoints of
/// earlier versions, by the models beside it) and the model there is a deepchess model.
fn check_replaceable(out: &Path, kind: ModelKind) -> anyhow::Result<()> {
    let refuse = |what: String| {
        anyhow::anyhow!("--force: {} {what}; --force replaces only a previous run of `{}`", out.display(), kind.name())
    };
    let checkpoint = out.join(CHECKPOINT_FILE);
    let recorded = if checkpoint.exists() {
        Checkpoint::peek_kind(&checkpoint)
            .map_err(|e| refuse(format!("holds {CHECKPOINT_FILE} that is not ours ({e})")))?
    } else {
        None
    };
    if let Some(other) = recorded.filter(|&k| k != kind) {
        return Err(refuse(format!("holds a run of `{}` ({CHECKPOINT_FILE})", other.name())));
    }
    let card_kind = |k: ModelKind| -> Option<anyhow::Result<ModelKind>> {
        let path = out.join(format!("{}.json", k.name()));
        let bytes = std::fs::read(&path).ok()?;
        Some(
            serde_json::from_slice::<ModelCard>(&bytes)
                .map(|c| c.kind)
                .map_err(|e| refuse(format!("holds {} that is not a deepchess model card ({e})", path.display()))),
        )
    };
    if let Some(found) = card_kind(kind) {
        let found = found?;
        if found != kind {
            return Err(refuse(format!("holds {}.json, a `{}` model", kind.name(), found.name())));
        }
    } else if recorded.is_none() && checkpoint.exists() {
        // a checkpoint of an earlier version: the run's kind is that of the model beside it
        if let Some(other) = ModelKind::ALL.into_iter().find(|&k| k != kind && card_kind(k).is_some()) {
            return Err(refuse(format!("holds a run of `{}` ({}.json)", other.name(), other.name())));
        }
    }
    Ok(())
}

/// A training run in progress.
struct Run {
    /// The run directory.
    dir: PathBuf,
    /// Its state, saved after every epoch.
    state: Checkpoint,
    /// The device gradients are computed on (with autodiff).
    device: Device,
}

impl Run {
    /// Opens the run directory: resumes from its checkpoint with `--resume`, otherwise
    /// starts from `init()`. Refuses a run directory that is an input; without `--force`
    /// one holding a checkpoint, the model or metrics; with `--force` one holding another
    /// network's run. `options` and the data fingerprint are recorded; a resumed run must
    /// have the same ones (except `epochs`).
    fn open(
        args: &RunArgs,
        inputs: &Inputs,
        options: serde_json::Value,
        init: impl FnOnce() -> anyhow::Result<Params>,
    ) -> anyhow::Result<Run> {
        let out = &args.out;
        let checkpoint = out.join(CHECKPOINT_FILE);
        let data_dirs: Vec<PathBuf> = std::iter::once(args.data.clone()).chain(inputs.extra_data.clone()).collect();
        let named = std::iter::once(("--data", &args.data))
            .chain(inputs.extra_data.iter().map(|d| ("--extra-data", d)))
            .chain(inputs.others.iter().map(|(o, d)| (*o, d)));
        for (option, dir) in named {
            if guard::same_path(out, dir) {
                anyhow::bail!("--out {} is the {option} directory: give the run a directory of its own", out.display());
            }
        }
        if out.exists() && !out.is_dir() {
            anyhow::bail!("--out {}: exists and is not a directory (a run directory is needed)", out.display());
        }
        guard::sweep(out, |_| true)?;
        let fingerprint = guard::data_fingerprint(&data_dirs);
        let device = args.device.device()?.autodiff();
        if args.resume {
            let state = Checkpoint::load(&checkpoint).context("--resume")?;
            if let Some(kind) = state.kind
                && kind != inputs.kind
            {
                anyhow::bail!(
                    "--resume: {} is a run of `{}`, not of `{}`",
                    checkpoint.display(),
                    kind.name(),
                    inputs.kind.name()
                );
            }
            let strip = |v: &serde_json::Value| {
                let mut v = v.clone();
                if let Some(o) = v.as_object_mut() {
                    o.remove("epochs");
                }
                v
            };
            if strip(&state.options) != strip(&options) {
                anyhow::bail!(
                    "--resume: the options differ from the checkpoint's ({}):\n  checkpoint: {}\n  now:        {}",
                    checkpoint.display(),
                    state.options,
                    options
                );
            }
            if state.data.is_null() {
                eprintln!(
                    "note: {} predates the recording of its data: --data is not checked against it",
                    checkpoint.display()
                );
            } else if state.data != fingerprint {
                anyhow::bail!(
                    "--resume: the checkpoint {} was trained on {}, but this run reads {}: resume with the same --data, or start afresh with --force",
                    checkpoint.display(),
                    guard::describe_fingerprint(&state.data),
                    guard::describe_fingerprint(&fingerprint)
                );
            }
            eprintln!("resuming {} after epoch {}", out.display(), state.epoch);
            return Ok(Run { dir: out.clone(), state, device });
        }
        let name = inputs.kind.name();
        let run_files =
            [CHECKPOINT_FILE.to_string(), format!("{name}.json"), format!("{name}.safetensors"), "metrics.csv".into()];
        let existing: Vec<&String> = run_files.iter().filter(|f| out.join(f).exists()).collect();
        if !existing.is_empty() {
            let list = existing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            if !args.force {
                anyhow::bail!(
                    "{} already holds a run ({list}): use --resume to continue it or --force to start afresh",
                    out.display()
                );
            }
            check_replaceable(out, inputs.kind)?;
        }
        std::fs::create_dir_all(out).with_context(|| format!("--out {}", out.display()))?;
        let state = Checkpoint {
            epoch: 0,
            params: init()?,
            adam: Adam::default(),
            best: None,
            history: Vec::new(),
            options,
            kind: Some(inputs.kind),
            data: fingerprint,
        };
        Ok(Run { dir: out.clone(), state, device })
    }

    /// Records a finished epoch: one metrics row per pass (with its validation score) and
    /// per extra validation row, the best parameters if the validation metric beats the
    /// best so far, then the checkpoint, metrics.csv and metrics.png.
    fn end_epoch(&mut self, trained: Vec<TrainedPass>, validation: Validation) -> anyhow::Result<()> {
        if trained.len() != validation.passes.len() {
            anyhow::bail!(
                "the trainer validated {} passes of an epoch that had {}",
                validation.passes.len(),
                trained.len()
            );
        }
        self.state.epoch += 1;
        let epoch = self.state.epoch;
        let mut rows: Vec<EpochMetrics> = trained
            .into_iter()
            .zip(&validation.passes)
            .map(|(t, v)| EpochMetrics {
                epoch,
                stage: t.name,
                train_loss: Some(t.tally.mean_loss()),
                train_accuracy: t.accuracy.then(|| t.tally.accuracy()),
                validation_loss: v.loss,
                validation_accuracy: v.accuracy,
                lr: t.lr,
                samples_per_second: t.rate,
            })
            .collect();
        let (lr, rate) = rows.first().map_or((0.0, 0.0), |r| (r.lr, r.samples_per_second));
        rows.extend(validation.extra.into_iter().map(|(stage, v)| EpochMetrics {
            epoch,
            stage,
            train_loss: None,
            train_accuracy: None,
            validation_loss: v.loss,
            validation_accuracy: v.accuracy,
            lr,
            samples_per_second: rate,
        }));
        for r in &rows {
            eprintln!(
                "epoch {:>3} {:<16} train loss {}{} | validation loss {:.5}{} | lr {:.2e} | {:.0}/s",
                r.epoch,
                r.stage,
                r.train_loss.map_or("-".to_string(), |l| format!("{l:.5}")),
                r.train_accuracy.map(|a| format!(" acc {:.4}", a)).unwrap_or_default(),
                r.validation_loss,
                r.validation_accuracy.map(|a| format!(" acc {:.4}", a)).unwrap_or_default(),
                r.lr,
                r.samples_per_second
            );
        }
        self.state.history.extend(rows);
        if let Some(metric) = validation.metric
            && self.state.best.as_ref().is_none_or(|b| metric > b.metric)
        {
            self.state.best = Some(Best { epoch, metric, params: self.state.params.clone() });
        }
        self.state.save(&self.dir.join(CHECKPOINT_FILE))?;
        metrics::write(&self.dir, &self.state.history)
    }
}

/// Loss and accuracy accumulated over batches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Sum of per-sample losses.
    pub loss: f64,
    /// Correct predictions.
    pub correct: f64,
    /// Samples.
    pub count: usize,
}

impl Tally {
    /// Adds a batch: its mean loss, correct predictions and size.
    pub fn add(&mut self, mean_loss: f64, correct: f64, count: usize) {
        self.loss += mean_loss * count as f64;
        self.correct += correct;
        self.count += count;
    }

    /// Mean loss.
    pub fn mean_loss(&self) -> f64 {
        self.loss / self.count.max(1) as f64
    }

    /// Accuracy.
    pub fn accuracy(&self) -> f64 {
        self.correct / self.count.max(1) as f64
    }
}

/// A progress bar with rate and ETA (hidden when standard error is not a terminal).
fn progress_bar(label: &str, len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {per_sec} ETA {eta} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}

/// Fills the training metadata of a model card.
fn fill_card(
    card: &mut ModelCard,
    args: &RunArgs,
    options: &serde_json::Value,
    epochs: u32,
    metrics: serde_json::Value,
) {
    let data = &args.data;
    card.data = serde_json::json!({ "dataset": data.display().to_string(), "counts": data_summary(data) });
    card.hyperparameters = options.clone();
    card.epochs = epochs;
    card.metrics = metrics;
    card.git_commit = args.git_commit.clone();
}

/// The `summary.json` of a prepared dataset (counts and source files), or null.
fn data_summary(dir: &Path) -> serde_json::Value {
    std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|s| serde_json::json!({ "inputs": s["inputs"], "games": s["games"], "positions": s["positions"], "moves": s["moves"], "options": s["options"] }))
        .unwrap_or(serde_json::Value::Null)
}
