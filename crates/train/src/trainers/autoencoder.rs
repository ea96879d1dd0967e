//! Pos2Vec: the stacked autoencoder 773-600-400-200-100 of DeepChess. ReLU encoder; the
//! decoder mirrors it (ReLU between its layers) and ends in a selectable output
//! activation. Layer-wise pre-training as DeepChess and the thesis do it — 773-600-773,
//! then 600-400-600 on the codes of the first layer, and so on, each layer's decoder
//! reconstructing its input (with the selected activation for the 773 inputs, ReLU for
//! the codes, which are non-negative) — then the whole stack fine-tuned. MSE, Adam, lr
//! decay per epoch; the encoder is saved as the `pos2vec` model.

use std::path::Path;

use burn::tensor::{Device, Tensor, activation};
use deepchess_core::arch::POS2VEC_LAYERS;
use deepchess_core::{Activation, Content, FEATURE_COUNT, Model, ModelKind, Split, StackSpec};
use serde::{Deserialize, Serialize};

use crate::data::{DataFile, epoch_order, refuse_empty};
use crate::nn::adam::Adam;
use crate::nn::graph::{Graph, Input, to_vec};
use crate::nn::loss::mse;
use crate::nn::params::Params;
use crate::nn::sparse::SparseBatch;
use crate::nn::step::{Shards, step};
use crate::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Score, Stage, Tally, Trainer, Validation,
};

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
    (
        StackSpec::new("encoder", &enc, Activation::Relu).with_final_activation(),
        StackSpec::new("decoder", &dec, Activation::Relu),
    )
}

fn stage_name(k: Option<usize>) -> String {
    k.map_or("finetune".to_string(), |k| format!("pretrain.{}", k + 1))
}

/// Reconstruction loss of one stage on `batch` (within a graph): returns the loss.
fn stage_loss(
    g: &mut Graph<'_>,
    k: Option<usize>,
    n: usize,
    out_act: OutputActivation,
    batch: &SparseBatch,
) -> Tensor<1> {
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
pub fn evaluate(
    params: &Params,
    device: &Device,
    k: Option<usize>,
    out_act: OutputActivation,
    file: &DataFile,
    indices: &[usize],
) -> anyhow::Result<f64> {
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

/// Pos2Vec's [`Trainer`]: one stage per encoder layer pre-trained (each restarting the
/// learning-rate decay, with fresh Adam moments), then a fine-tuning stage; each epoch one
/// pass over the shuffled training positions. No epoch is selected: the model is the last.
pub struct AutoencoderTrainer {
    options: AutoencoderOptions,
    train: DataFile,
    validation: DataFile,
    /// The validation positions measured.
    val_indices: Vec<usize>,
}

impl AutoencoderOptions {
    /// Refuses values no run can use, naming the option.
    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.hidden.is_empty() && self.hidden.iter().all(|&w| w > 0),
            "--hidden must list widths of at least 1, got {:?}",
            self.hidden
        );
        anyhow::ensure!(self.epochs > 0, "--epochs must be at least 1");
        anyhow::ensure!(self.validation_positions > 0, "--validation-positions must be at least 1");
        anyhow::ensure!(self.lr_decay > 0.0 && self.lr_decay.is_finite(), "--lr-decay must be positive");
        run::check_loop_options(self.batch, self.lr, self.positions_per_epoch)
    }
}

impl AutoencoderTrainer {
    /// Opens the datasets of `data`.
    pub fn new(data: &Path, options: &AutoencoderOptions) -> anyhow::Result<AutoencoderTrainer> {
        options.check()?;
        let train = DataFile::open(data, Content::Positions, Split::Train)?;
        let validation = DataFile::open(data, Content::Positions, Split::Validation)?;
        refuse_empty(&train, &validation)?;
        let val_indices = epoch_order(validation.len(), Some(options.validation_positions), options.seed, 0);
        Ok(AutoencoderTrainer { options: options.clone(), train, validation, val_indices })
    }

    /// Encoder layers.
    fn layers(&self) -> usize {
        self.options.hidden.len()
    }

    /// What stage `stage` trains: `Some(k)` pre-trains encoder layer `k`, `None` fine-tunes.
    fn layer_of(&self, stage: usize) -> Option<usize> {
        (stage < self.layers()).then_some(stage)
    }
}

impl Trainer for AutoencoderTrainer {
    fn kind(&self) -> ModelKind {
        ModelKind::Pos2vec
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.options)?)
    }

    fn init(&self) -> anyhow::Result<Params> {
        let (enc, dec) = stacks(&self.options.hidden);
        Ok(Params::init(vec![enc, dec], self.options.seed))
    }

    fn stages(&self) -> Vec<Stage> {
        let o = &self.options;
        let stage = |epochs| Stage::exponential(epochs, o.batch, o.lr, o.lr_decay);
        (0..self.layers()).map(|_| stage(o.pretrain_epochs)).chain([stage(o.epochs)]).collect()
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let order = epoch_order(self.train.len(), self.options.positions_per_epoch, self.options.seed, at.epoch);
        Ok(vec![Pass { name: stage_name(self.layer_of(at.stage)), order }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let (k, n, out_act) = (self.layer_of(batch.at.stage), self.layers(), self.options.decoder_activation);
        let features = self.train.features(batch.indices, |_| false)?;
        let (loss, _) = step(
            params,
            adam,
            batch.lr,
            batch.device,
            Shards::of(batch.indices.len()),
            |t| trainable(k, n, t),
            |g, rows| Ok((stage_loss(g, k, n, out_act, &features.slice(rows)), ())),
        )?;
        Ok(BatchResult { loss, correct: None })
    }

    fn validate(&mut self, params: &Params, device: &Device, at: &EpochAt) -> anyhow::Result<Validation> {
        let (k, out_act) = (self.layer_of(at.stage), self.options.decoder_activation);
        let loss = evaluate(params, device, k, out_act, &self.validation, &self.val_indices)?;
        let mut validation = Validation::one(Score { loss, accuracy: None }, None);
        if k.is_some_and(|k| k + 1 == self.layers()) && at.last_of_stage() {
            // pre-training done: the stacked autoencoder's MSE before any fine-tuning
            let stacked = evaluate(params, device, None, out_act, &self.validation, &self.val_indices)?;
            validation.extra.push(("pretrained.stack".into(), Score { loss: stacked, accuracy: None }));
        }
        Ok(validation)
    }

    fn card(&mut self, params: &Params, device: &Device, run: &Finished<'_>) -> anyhow::Result<Card> {
        let out_act = self.options.decoder_activation;
        let after_pretraining = run
            .history
            .iter()
            .filter(|r| r.stage.starts_with("pretrain"))
            .map(|r| (r.stage.clone(), r.validation_loss))
            .collect::<std::collections::BTreeMap<_, _>>();
        let final_mse = evaluate(params, device, None, out_act, &self.validation, &self.val_indices)?;
        let pretrained_full = run.history.iter().find(|r| r.stage == "pretrained.stack").map(|r| r.validation_loss);
        let first_stage = pretrained_full.map_or("-".to_string(), |v| format!("{v:.6}"));
        let report = format!(
            "{:<10} {:>14} {:>14}\n{:<10} {:>14} {:>14.6}\nvalidation_mse={final_mse:.6} positions={}",
            "decoder",
            "pretrain MSE",
            "finetune MSE",
            format!("{out_act:?}").to_lowercase(),
            first_stage,
            final_mse,
            self.val_indices.len()
        );
        Ok(Card {
            kind: ModelKind::Pos2vec,
            stacks: vec!["encoder".into()],
            output: serde_json::json!({ "meaning": "Pos2Vec code of a position (ReLU outputs)" }),
            metrics: serde_json::json!({
                "validation_mse_per_pretraining_stage": after_pretraining,
                "validation_mse_after_pretraining": pretrained_full,
                "validation_mse": final_mse,
                "validation_positions": self.val_indices.len(),
                "decoder_activation": out_act,
            }),
            report,
        })
    }
}

/// Trains Pos2Vec (see [`AutoencoderTrainer`]); writes `pos2vec.safetensors` +
/// `pos2vec.json` into the run directory, prints the MSE after pre-training and after
/// fine-tuning, and returns the model.
pub fn train(args: &RunArgs, options: &AutoencoderOptions) -> anyhow::Result<Model> {
    run::train(args, &mut AutoencoderTrainer::new(&args.data, options)?)
}
