//! The evaluation net for search: a wide sparse first layer then small dense layers with
//! clipped ReLU, one output `v`, a logit of White's expected score.
//!
//! Target: the game result from White's view as a score `s` (win 1, draw ½, loss 0),
//! blended with the engine evaluation the PGN gave the position where it has one:
//! `t = (1 − λ)·s + λ·sigmoid(eval_cp × 0.00368208)` (`λ` = `--eval-weight`). The loss is
//! the mean squared error between `sigmoid(v)` and `t`, so `v` is on the scale
//! `v × VALUE_CP_PER_LOGIT` = centipawns (lichess's win-probability scale).

use burn::tensor::{Device, activation};
use deepchess_core::arch::{VALUE_CP_PER_LOGIT, VALUE_LAYERS};
use deepchess_core::{Activation, Content, Model, ModelKind, Record, Split, StackSpec};
use serde::{Deserialize, Serialize};

use crate::data::{DataFile, epoch_order};
use crate::metrics::EpochMetrics;
use crate::nn::graph::{Graph, Input, to_vec};
use crate::nn::loss::mse;
use crate::nn::params::Params;
use crate::run::{Run, RunArgs, Tally, data_summary, epoch_loop, fill_card, lr_at, step};

/// Hyper-parameters of `deepchess train value`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct ValueOptions {
    /// Epochs.
    #[arg(long, default_value_t = 6)]
    pub epochs: u32,
    /// Positions per batch.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Adam learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// Learning-rate factor per epoch.
    #[arg(long, default_value_t = 0.8)]
    pub lr_decay: f64,
    /// Weight λ of the engine evaluation in the target (the game result gets 1 − λ).
    #[arg(long, default_value_t = 0.5)]
    pub eval_weight: f64,
    /// Hidden layer widths.
    #[arg(long, value_delimiter = ',', default_values_t = VALUE_LAYERS[1..VALUE_LAYERS.len() - 1].to_vec())]
    pub hidden: Vec<usize>,
    /// Use at most this many training positions per epoch (a fresh random subset each epoch).
    #[arg(long)]
    pub positions_per_epoch: Option<usize>,
    /// Seed of initialisation and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Win-probability scale of centipawns: `sigmoid(cp × CP_SCALE)`.
pub const CP_SCALE: f64 = 1.0 / VALUE_CP_PER_LOGIT as f64;

/// The training target of a record (White's expected score, see the module docs).
pub fn target(record: &Record, eval_weight: f64) -> f32 {
    let result = (f64::from(record.result()) + 1.0) / 2.0;
    let t = match record.eval() {
        Some(cp) => (1.0 - eval_weight) * result + eval_weight / (1.0 + (-f64::from(cp) * CP_SCALE).exp()),
        None => result,
    };
    t as f32
}

/// Validation figures of the value net.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ValueScores {
    /// Mean squared error of `sigmoid(v)` against the target.
    pub loss: f64,
    /// Share of positions whose predicted result (loss below ⅓, draw, win above ⅔) is the game's.
    pub accuracy: f64,
    /// Positions.
    pub positions: usize,
}

fn predicted_result(p: f32) -> i8 {
    if p > 2.0 / 3.0 {
        1
    } else if p < 1.0 / 3.0 {
        -1
    } else {
        0
    }
}

/// Outputs `v` of the value net (stack `value`) for records `indices` of `file`.
pub fn logits(params: &Params, device: &Device, file: &DataFile, indices: &[usize]) -> anyhow::Result<Vec<f32>> {
    let mut out = Vec::with_capacity(indices.len());
    for chunk in indices.chunks(4096) {
        let batch = file.features(chunk, |_| false)?;
        let mut graph = Graph::inference(params, device);
        out.extend(to_vec(graph.stack("value", Input::Sparse(&batch))));
    }
    Ok(out)
}

/// Loss and result accuracy over the whole of `file`.
pub fn evaluate(params: &Params, device: &Device, file: &DataFile, eval_weight: f64) -> anyhow::Result<ValueScores> {
    let indices: Vec<usize> = (0..file.len()).collect();
    let v = logits(params, device, file, &indices)?;
    let mut tally = Tally::default();
    for (&i, &v) in indices.iter().zip(&v) {
        let r = file.get(i);
        let p = 1.0 / (1.0 + (-v).exp());
        let e = f64::from(p - target(&r, eval_weight));
        tally.add(e * e, f64::from(u8::from(predicted_result(p) == r.result())), 1);
    }
    Ok(ValueScores { loss: tally.mean_loss(), accuracy: tally.accuracy(), positions: tally.count })
}

/// Share of `pairs` where the position from the game White won gets the higher score
/// (the value net used as a comparator).
pub fn pair_accuracy(params: &Params, device: &Device, file: &DataFile, pairs: &[crate::trainers::comparator::Pair]) -> anyhow::Result<f64> {
    let w: Vec<usize> = pairs.iter().map(|p| p.white_won).collect();
    let b: Vec<usize> = pairs.iter().map(|p| p.black_won).collect();
    let (vw, vb) = (logits(params, device, file, &w)?, logits(params, device, file, &b)?);
    let right = vw.iter().zip(&vb).filter(|(w, b)| w > b).count();
    Ok(right as f64 / pairs.len().max(1) as f64)
}

/// Trains the value net; writes `value.safetensors` + `value.json` (the parameters of the
/// epoch with the lowest validation loss: the net memorises games quickly) into the run
/// directory and returns the model.
pub fn train(args: &RunArgs, options: &ValueOptions) -> anyhow::Result<Model> {
    let train_file = DataFile::open(&args.data, Content::Positions, Split::Train)?;
    let validation = DataFile::open(&args.data, Content::Positions, Split::Validation)?;
    let layers: Vec<usize> = std::iter::once(VALUE_LAYERS[0]).chain(options.hidden.iter().copied()).chain([1]).collect();
    let spec = StackSpec::new("value", &layers, Activation::ClippedRelu);
    let mut run = Run::open(args, options, || Ok(Params::init(vec![spec], options.seed)))?;
    while run.state.epoch < options.epochs {
        let epoch = run.state.epoch;
        let lr = lr_at(options.lr, options.lr_decay, epoch);
        let order = epoch_order(train_file.len(), options.positions_per_epoch, options.seed, epoch);
        let Run { state, device, .. } = &mut run;
        let (tally, rate) = epoch_loop("value", &order, options.batch, |chunk| {
            let batch = train_file.features(chunk, |_| false)?;
            let records: Vec<Record> = chunk.iter().map(|&i| train_file.get(i)).collect();
            let targets: Vec<f32> = records.iter().map(|r| target(r, options.eval_weight)).collect();
            let (loss, probs) = step(&mut state.params, &mut state.adam, lr, device, |_| true, |g| {
                let v = g.stack("value", Input::Sparse(&batch));
                let p = activation::sigmoid(v);
                let t = g.constant(targets.clone(), chunk.len(), 1);
                Ok((mse(p.clone(), t), to_vec(p)))
            })?;
            let correct = records.iter().zip(&probs).filter(|(r, p)| predicted_result(**p) == r.result()).count();
            Ok((loss, correct as f64))
        })?;
        let val = evaluate(&state.params, &device.clone().inner(), &validation, options.eval_weight)?;
        let row = EpochMetrics {
            epoch: epoch + 1,
            stage: "value".into(),
            train_loss: Some(tally.mean_loss()),
            train_accuracy: Some(tally.accuracy()),
            validation_loss: val.loss,
            validation_accuracy: Some(val.accuracy),
            lr,
            samples_per_second: rate,
        };
        run.end_epoch(vec![row], Some(-val.loss))?;
    }
    let (_, best) = run.state.best.clone().ok_or_else(|| anyhow::anyhow!("no epoch was trained"))?;
    let best_epoch = run.state.history.iter().min_by(|a, b| a.validation_loss.total_cmp(&b.validation_loss)).map(|r| r.epoch);
    let device = run.device.clone().inner();
    let val = evaluate(&best, &device, &validation, options.eval_weight)?;
    let (white, black) = crate::trainers::comparator::decisive(&validation);
    // a validation split without a win for each colour has no pairs: the model is still saved
    let pairs = if white.is_empty() || black.is_empty() {
        eprintln!("no comparator pairs: the validation games lack a win for {}", if white.is_empty() { "White" } else { "Black" });
        Vec::new()
    } else {
        crate::trainers::comparator::draw_pairs(&white, &black, 50_000, crate::eval::PAIR_SEED, 0, false)?
    };
    let pair_accuracy = if pairs.is_empty() { None } else { Some(pair_accuracy(&best, &device, &validation, &pairs)?) };
    let options_json = serde_json::to_value(options)?;
    let model = best.to_model(ModelKind::Value, &["value"], |card| {
        card.output = serde_json::json!({
            "meaning": "logit v of White's expected score: sigmoid(v) = expected score (win 1, draw 0.5, loss 0)",
            "centipawns": "v * VALUE_CP_PER_LOGIT",
            "value_cp_per_logit": VALUE_CP_PER_LOGIT,
            "target": "(1 - eval_weight) * result_score + eval_weight * sigmoid(eval_cp * 0.00368208) where the PGN has [%eval], else result_score; loss = MSE(sigmoid(v), target)",
        });
        fill_card(card, &args.data, data_summary(&args.data), &options_json, run.state.epoch, serde_json::json!({ "validation": val, "best_epoch": best_epoch, "validation_pair_accuracy": pair_accuracy, "validation_pairs": pairs.len() }));
    })?;
    model.save(&run.dir)?;
    println!(
        "best epoch {}: validation loss={:.5} result_accuracy={:.4} positions={} pair_accuracy={} pairs={}",
        best_epoch.unwrap_or(0),
        val.loss,
        val.accuracy,
        val.positions,
        pair_accuracy.map_or("-".to_string(), |a| format!("{a:.4}")),
        pairs.len()
    );
    Ok(model)
}
