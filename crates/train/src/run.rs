//! What every training run shares: its output directory, checkpoints and `--resume`,
//! per-epoch metrics, progress bars, one optimisation step, and the model card.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use burn::tensor::{Device, Tensor};
use deepchess_core::ModelCard;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use crate::device::DeviceChoice;
use crate::metrics::{self, EpochMetrics};
use crate::nn::adam::Adam;
use crate::nn::graph::{Graph, to_vec};
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
    /// Start afresh even if the run directory holds a checkpoint or a model.
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// Continue the run from its last checkpoint (same options; `--epochs` may be raised).
    #[arg(long)]
    pub resume: bool,
    /// Where burn computes: `cpu` (the flex backend) or, in a build with the `wgpu`
    /// feature, `wgpu`, `wgpu:cpu`, `wgpu:discrete[:N]`, `wgpu:integrated[:N]`.
    #[arg(long, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
}

/// A training run in progress.
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// Its state, saved after every epoch.
    pub state: Checkpoint,
    /// The device gradients are computed on.
    pub device: Device,
}

impl Run {
    /// Opens the run directory: resumes from its checkpoint with `--resume`, otherwise
    /// starts from `init()` (refusing to overwrite an earlier run without `--force`).
    /// `options` are recorded; a resumed run must have the same ones, except `epochs`.
    pub fn open(args: &RunArgs, options: &impl Serialize, init: impl FnOnce() -> anyhow::Result<Params>) -> anyhow::Result<Run> {
        let options = serde_json::to_value(options)?;
        let checkpoint = args.out.join(CHECKPOINT_FILE);
        let device = args.device.device()?.autodiff();
        if args.resume {
            let state = Checkpoint::load(&checkpoint).context("--resume")?;
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
            eprintln!("resuming {} after epoch {}", args.out.display(), state.epoch);
            return Ok(Run { dir: args.out.clone(), state, device });
        }
        if !args.force && args.out.join(CHECKPOINT_FILE).exists() {
            anyhow::bail!("{} already holds a run (use --resume to continue it or --force to start afresh)", args.out.display());
        }
        std::fs::create_dir_all(&args.out).with_context(|| format!("--out {}", args.out.display()))?;
        let state = Checkpoint { epoch: 0, params: init()?, adam: Adam::default(), best: None, history: Vec::new(), options };
        Ok(Run { dir: args.out.clone(), state, device })
    }

    /// Records a finished epoch: its metric rows, the best parameters if `score` (higher is
    /// better) beats the best so far, then the checkpoint, metrics.csv and metrics.png.
    pub fn end_epoch(&mut self, rows: Vec<EpochMetrics>, score: Option<f64>) -> anyhow::Result<()> {
        self.state.epoch += 1;
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
        if let Some(score) = score
            && self.state.best.as_ref().is_none_or(|(b, _)| score > *b)
        {
            self.state.best = Some((score, self.state.params.clone()));
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

/// Runs `step` over `order` in batches of `batch` with a progress bar (rate and ETA);
/// returns the tally and the samples per second.
pub fn epoch_loop(
    label: &str,
    order: &[usize],
    batch: usize,
    mut step: impl FnMut(&[usize]) -> anyhow::Result<(f64, f64)>,
) -> anyhow::Result<(Tally, f64)> {
    let bar = progress_bar(label, order.len() as u64);
    let started = Instant::now();
    let mut tally = Tally::default();
    for chunk in order.chunks(batch.max(1)) {
        let (loss, correct) = step(chunk)?;
        if !loss.is_finite() {
            anyhow::bail!("{label}: the loss became {loss} (lower the learning rate)");
        }
        tally.add(loss, correct, chunk.len());
        bar.inc(chunk.len() as u64);
        bar.set_message(format!("loss {:.4}", tally.mean_loss()));
    }
    bar.finish_and_clear();
    Ok((tally, order.len() as f64 / started.elapsed().as_secs_f64().max(1e-9)))
}

/// A progress bar with rate and ETA (hidden when standard error is not a terminal).
pub fn progress_bar(label: &str, len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {per_sec} ETA {eta} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}

/// One Adam step: runs `forward` in a graph over `params` where `trainable` tensors get
/// gradients, back-propagates the loss it returns, updates the parameters. Returns the
/// loss and whatever `forward` returned besides.
pub fn step<T>(
    params: &mut Params,
    adam: &mut Adam,
    lr: f64,
    device: &Device,
    trainable: impl Fn(&str) -> bool,
    forward: impl FnOnce(&mut Graph<'_>) -> anyhow::Result<(Tensor<1>, T)>,
) -> anyhow::Result<(f64, T)> {
    let (grads, loss, extra) = {
        let mut graph = Graph::new(params, device, trainable);
        let (loss, extra) = forward(&mut graph)?;
        let value = f64::from(to_vec(loss.clone())[0]);
        let g = loss.backward();
        (graph.gradients(&g), value, extra)
    };
    adam.update(params, &grads, lr as f32);
    Ok((loss, extra))
}

/// The git commit of the working tree the trainer runs in, if any.
pub fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git").args(["rev-parse", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Fills the training metadata of a model card.
pub fn fill_card(card: &mut ModelCard, data: &Path, summary: serde_json::Value, options: &serde_json::Value, epochs: u32, metrics: serde_json::Value) {
    card.data = serde_json::json!({ "dataset": data.display().to_string(), "counts": summary });
    card.hyperparameters = options.clone();
    card.epochs = epochs;
    card.metrics = metrics;
    card.git_commit = git_commit();
}

/// The `summary.json` of a prepared dataset (counts and source files), or null.
pub fn data_summary(dir: &Path) -> serde_json::Value {
    std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|s| serde_json::json!({ "inputs": s["inputs"], "games": s["games"], "positions": s["positions"], "moves": s["moves"], "options": s["options"] }))
        .unwrap_or(serde_json::Value::Null)
}

/// Learning rate of `epoch` (from 0): `lr × decay^epoch`.
pub fn lr_at(lr: f64, decay: f64, epoch: u32) -> f64 {
    lr * decay.powi(epoch as i32)
}
