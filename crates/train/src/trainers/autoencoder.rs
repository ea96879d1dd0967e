//! Pos2Vec: the stacked autoencoder 773-600-400-200-100 of DeepChess. ReLU encoder; the
//! decoder mirrors it (ReLU between its layers) and ends in a selectable output
//! activation. Layer-wise pre-training as DeepChess and the thesis do it — 773-600-773,
//! then 600-400-600 on the codes of the first layer, and so on, each layer's decoder
//! reconstructing its input (with the selected activation for the 773 inputs, ReLU for
//! the codes, which are non-negative) — then the whole stack fine-tuned. MSE, Adam, lr
//! decay per epoch; the encoder is saved as the `pos2vec` model.

use burn::tensor::{Device, Tensor, activation};
use deepchess_core::arch::POS2VEC_LAYERS;
use deepchess_core::{Activation, Content, FEATURE_COUNT, Model, ModelKind, Split, StackSpec};
use serde::{Deserialize, Serialize};

use crate::data::{DataFile, epoch_order};
use crate::metrics::EpochMetrics;
use crate::nn::graph::{Graph, Input, to_vec};
use crate::nn::loss::mse;
use crate::nn::params::Params;
use crate::nn::sparse::SparseBatch;
use crate::run::{Run, RunArgs, Tally, data_summary, epoch_loop, fill_card, lr_at, step};

/// Output activation of the decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OutputActivation {
    /// Identity.
    Linear,
    /// max(0, x).
    Relu,
    /// 1 / (1 + e^−x).
    Sigmoid,
    /// ln(1 + e^x).
    Softplus,
}

fn output_activation(x: Tensor<2>, a: OutputActivation) -> Tensor<2> {
    match a {
        OutputActivation::Linear => x,
        OutputActivation::Relu => activation::relu(x),
        OutputActivation::Sigmoid => activation::sigmoid(x),
        OutputActivation::Softplus => activation::softplus(x, 1.0),
    }
}

/// Hyper-parameters of `deepchess train autoencoder` (defaults: the thesis's, except the
/// epoch counts, which a CPU run cannot afford; the thesis used 20 per stage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct AutoencoderOptions {
    /// Epochs of pre-training per layer.
    #[arg(long, default_value_t = 20)]
    pub pretrain_epochs: u32,
    /// Epochs of fine-tuning of the whole stack.
    #[arg(long, default_value_t = 20)]
    pub epochs: u32,
    /// Positions per batch.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Adam learning rate (thesis 0.0002).
    #[arg(long, default_value_t = 2e-4)]
    pub lr: f64,
    /// Learning-rate factor per epoch (DeepChess 0.98), restarting at every stage.
    #[arg(long, default_value_t = 0.98)]
    pub lr_decay: f64,
    /// Output activation of the decoder.
    #[arg(long, value_enum, default_value_t = OutputActivation::Sigmoid)]
    pub decoder_activation: OutputActivation,
    /// Encoder layer widths after the 773 inputs.
    #[arg(long, value_delimiter = ',', default_values_t = POS2VEC_LAYERS[1..].to_vec())]
    pub hidden: Vec<usize>,
    /// Use at most this many training positions per epoch.
    #[arg(long)]
    pub positions_per_epoch: Option<usize>,
    /// Use at most this many validation positions.
    #[arg(long, default_value_t = 20_000)]
    pub validation_positions: usize,
    /// Seed of initialisation and shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// The encoder and decoder specs for encoder widths `hidden`.
pub fn stacks(hidden: &[usize]) -> (StackSpec, StackSpec) {
    let enc: Vec<usize> = std::iter::once(FEATURE_COUNT).chain(hidden.iter().copied()).collect();
    let dec: Vec<usize> = enc.iter().rev().copied().collect();
    (StackSpec::new("encoder", &enc, Activation::Relu).with_final_activation(), StackSpec::new("decoder", &dec, Activation::Relu))
}

/// Training stage of epoch `epoch`: `Some(k)` pre-trains encoder layer `k`, `None` fine-tunes.
fn stage(options: &AutoencoderOptions, epoch: u32) -> (Option<usize>, u32) {
    let per = options.pretrain_epochs;
    let layers = options.hidden.len() as u32;
    if per > 0 && epoch < per * layers {
        (Some((epoch / per) as usize), epoch % per)
    } else {
        (None, epoch - per * layers)
    }
}

fn stage_name(k: Option<usize>) -> String {
    k.map_or("finetune".to_string(), |k| format!("pretrain.{}", k + 1))
}

/// Reconstruction loss of one stage on `batch` (within a graph): returns the loss.
fn stage_loss(g: &mut Graph<'_>, k: Option<usize>, n: usize, out_act: OutputActivation, batch: &SparseBatch) -> Tensor<1> {
    let dense = g.constant(batch.to_dense(FEATURE_COUNT), batch.rows(), FEATURE_COUNT);
    match k {
        None => {
            let code = g.stack("encoder", Input::Sparse(batch));
            let y = g.layers("decoder", 0, n, Input::Dense(code));
            mse(output_activation(y, out_act), dense)
        }
        Some(0) => {
            let h = g.layers("encoder", 0, 1, Input::Sparse(batch));
            let y = g.linear("decoder", n - 1, h);
            mse(output_activation(y, out_act), dense)
        }
        Some(k) => {
            let x = g.layers("encoder", 0, k, Input::Sparse(batch)).detach();
            let h = g.layers("encoder", k, k + 1, Input::Dense(x.clone()));
            let y = activation::relu(g.linear("decoder", n - 1 - k, h));
            mse(y, x)
        }
    }
}

/// Which tensors a stage trains.
fn trainable(k: Option<usize>, n: usize, name: &str) -> bool {
    match k {
        None => true,
        Some(k) => name.starts_with(&format!("encoder.{k}.")) || name.starts_with(&format!("decoder.{}.", n - 1 - k)),
    }
}

/// Mean reconstruction MSE of a stage over `file`'s records `indices`.
pub fn evaluate(params: &Params, device: &Device, k: Option<usize>, out_act: OutputActivation, file: &DataFile, indices: &[usize]) -> anyhow::Result<f64> {
    let n = params.stack("encoder").layers.len() - 1;
    let mut tally = Tally::default();
    for chunk in indices.chunks(2048) {
        let batch = file.features(chunk, |_| false)?;
        let mut g = Graph::inference(params, device);
        let loss = to_vec(stage_loss(&mut g, k, n, out_act, &batch))[0];
        tally.add(f64::from(loss), 0.0, chunk.len());
    }
    Ok(tally.mean_loss())
}

/// Trains Pos2Vec; writes `pos2vec.safetensors` + `pos2vec.json` into the run directory,
/// prints the MSE after pre-training and after fine-tuning, and returns the model.
pub fn train(args: &RunArgs, options: &AutoencoderOptions) -> anyhow::Result<Model> {
    let train_file = DataFile::open(&args.data, Content::Positions, Split::Train)?;
    let validation = DataFile::open(&args.data, Content::Positions, Split::Validation)?;
    let val_indices = epoch_order(validation.len(), Some(options.validation_positions), options.seed, 0);
    let (enc, dec) = stacks(&options.hidden);
    let n = options.hidden.len();
    let total = options.pretrain_epochs * n as u32 + options.epochs;
    let mut run = Run::open(args, options, || Ok(Params::init(vec![enc, dec], options.seed)))?;
    let out_act = options.decoder_activation;
    while run.state.epoch < total {
        let epoch = run.state.epoch;
        let (k, within) = stage(options, epoch);
        let lr = lr_at(options.lr, options.lr_decay, within);
        let order = epoch_order(train_file.len(), options.positions_per_epoch, options.seed, epoch);
        let name = stage_name(k);
        let Run { state, device, .. } = &mut run;
        let (tally, rate) = epoch_loop(&name, &order, options.batch, |chunk| {
            let batch = train_file.features(chunk, |_| false)?;
            let (loss, ()) = step(&mut state.params, &mut state.adam, lr, device, |t| trainable(k, n, t), |g| {
                Ok((stage_loss(g, k, n, out_act, &batch), ()))
            })?;
            Ok((loss, 0.0))
        })?;
        let device = run.device.clone().inner();
        let validation_loss = evaluate(&run.state.params, &device, k, out_act, &validation, &val_indices)?;
        let row = EpochMetrics {
            epoch: epoch + 1,
            stage: name,
            train_loss: Some(tally.mean_loss()),
            train_accuracy: None,
            validation_loss,
            validation_accuracy: None,
            lr,
            samples_per_second: rate,
        };
        let mut rows = vec![row];
        if k.is_some() && stage(options, epoch + 1).0.is_none() {
            // pre-training done: the stacked autoencoder's MSE before any fine-tuning
            let stacked = evaluate(&run.state.params, &device, None, out_act, &validation, &val_indices)?;
            rows.push(EpochMetrics { stage: "pretrained.stack".into(), train_loss: None, validation_loss: stacked, ..rows[0].clone() });
        }
        run.end_epoch(rows, None)?;
        if k.is_some() && stage(options, epoch + 1).0 != k {
            // a new stage: fresh optimiser moments for the tensors it trains
            run.state.adam = Default::default();
        }
    }
    let device = run.device.clone().inner();
    let after_pretraining = run
        .state
        .history
        .iter()
        .filter(|r| r.stage.starts_with("pretrain"))
        .map(|r| (r.stage.clone(), r.validation_loss))
        .collect::<std::collections::BTreeMap<_, _>>();
    let final_mse = evaluate(&run.state.params, &device, None, out_act, &validation, &val_indices)?;
    let pretrained_full = run.state.history.iter().find(|r| r.stage == "pretrained.stack").map(|r| r.validation_loss);
    let options_json = serde_json::to_value(options)?;
    let metrics = serde_json::json!({
        "validation_mse_per_pretraining_stage": after_pretraining,
        "validation_mse_after_pretraining": pretrained_full,
        "validation_mse": final_mse,
        "validation_positions": val_indices.len(),
        "decoder_activation": out_act,
    });
    let model = run.state.params.to_model(ModelKind::Pos2vec, &["encoder"], |card| {
        card.output = serde_json::json!({ "meaning": "Pos2Vec code of a position (ReLU outputs)" });
        fill_card(card, &args.data, data_summary(&args.data), &options_json, run.state.epoch, metrics);
    })?;
    model.save(&run.dir)?;
    println!("{:<10} {:>14} {:>14}", "decoder", "pretrain MSE", "finetune MSE");
    let first_stage = pretrained_full.map_or("-".to_string(), |v| format!("{v:.6}"));
    println!("{:<10} {:>14} {:>14.6}", format!("{out_act:?}").to_lowercase(), first_stage, final_mse);
    println!("validation_mse={final_mse:.6} positions={}", val_indices.len());
    Ok(model)
}
