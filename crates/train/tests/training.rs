//! Tiny, seeded training runs on a synthetic dataset: losses fall, accuracy beats chance
//! on a learnable signal, models round-trip bit for bit, and `--resume` continues the
//! very same run.

mod common;

use std::path::{Path, PathBuf};

use deepchess_core::{Model, ModelKind};
use deepchess_train::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use deepchess_train::device::DeviceChoice;
use deepchess_train::eval::{self, PreparedPgn};
use deepchess_train::nn::params::Params;
use deepchess_train::run::RunArgs;
use deepchess_train::trainers::{autoencoder, comparator, movepred, value};

fn sample_pgn() -> PreparedPgn {
    PreparedPgn::new(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sample.pgn")).unwrap()
}

fn args(data: &Path, out: PathBuf) -> RunArgs {
    RunArgs { data: data.to_path_buf(), out, force: false, resume: false, device: DeviceChoice::Cpu }
}

/// A small comparator run on result pairs with a random 32-16 encoder.
fn small_comparator(seed: u64) -> comparator::ComparatorOptions {
    comparator::ComparatorOptions {
        pos2vec: None,
        epochs: 4,
        pairs_per_epoch: 4000,
        validation_pairs: 1000,
        batch: 100,
        lr: 1e-3,
        lr_decay: 1.0,
        flip: true,
        random_split: false,
        eval_pairs: 0.0,
        eval_margin: 100,
        head_hidden: vec![16, 8],
        encoder_hidden: vec![32, 16],
        seed,
    }
}

fn dataset() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let n = common::write_dataset(&data, 120, 3);
    assert!(n > 500, "{n} training positions");
    (dir, data)
}

fn value_options(epochs: u32) -> value::ValueOptions {
    value::ValueOptions {
        epochs,
        batch: 64,
        lr: 3e-3,
        lr_decay: 1.0,
        eval_weight: 0.5,
        hidden: vec![32, 8],
        positions_per_epoch: None,
        seed: 5,
    }
}

#[test]
fn value_net_learns_and_round_trips_bit_for_bit() {
    let (dir, data) = dataset();
    let out = dir.path().join("value");
    let model = value::train(&args(&data, out.clone()), &value_options(4)).unwrap();
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    let (first, last) = (&state.history[0], state.history.last().unwrap());
    let (a, b) = (first.train_loss.unwrap(), last.train_loss.unwrap());
    assert!(b < 0.8 * a, "{a} -> {b}");
    let pairs = model.card.metrics["validation_pair_accuracy"].as_f64().unwrap();
    assert!(pairs > 0.65, "as a comparator on validation pairs (chance 0.5): {pairs}");
    let back = Model::load(&out, ModelKind::Value).unwrap();
    assert_eq!(back, model);
    let (_, best) = state.best.clone().unwrap();
    assert_eq!(Params::from_model(&back).values, best.values, "the saved model is the best epoch's parameters, bit for bit");
    assert!(out.join("metrics.csv").exists() && out.join("metrics.png").exists());
    let err = value::train(&args(&data, out.clone()), &value_options(4)).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("--force"), "{err}");

    let r = eval::value(&data, &back, 200, 0.5, DeviceChoice::Cpu).unwrap();
    assert_eq!(r.pairs, 200);
    assert!((0.0..=1.0).contains(&r.pair_accuracy) && r.scores.positions > 0 && r.scores.loss.is_finite());
    let err = eval::movepred(&data, &back, DeviceChoice::Cpu).unwrap_err().to_string();
    assert!(err.contains("expected a movepred model, got a value model"), "{err}");
}

#[test]
fn resume_continues_the_same_run() {
    let (dir, data) = dataset();
    let straight = dir.path().join("straight");
    value::train(&args(&data, straight.clone()), &value_options(2)).unwrap();
    let split = dir.path().join("split");
    value::train(&args(&data, split.clone()), &value_options(1)).unwrap();
    let mut resume = args(&data, split.clone());
    resume.resume = true;
    value::train(&resume, &value_options(2)).unwrap();
    let a = Checkpoint::load(&straight.join(CHECKPOINT_FILE)).unwrap();
    let b = Checkpoint::load(&split.join(CHECKPOINT_FILE)).unwrap();
    assert_eq!(a.params, b.params);
    assert_eq!(a.adam, b.adam);
    let mut other = value_options(2);
    other.lr = 1e-2;
    let err = value::train(&resume, &other).err().unwrap().to_string();
    assert!(err.contains("options differ"), "{err}");
}

#[test]
fn move_predictors_beat_chance() {
    let (dir, data) = dataset();
    let out = dir.path().join("movepred");
    let options = movepred::MovepredOptions { epochs: 3, batch: 64, lr: 3e-3, lr_decay: 1.0, hidden: 16, positions_per_epoch: None, flip: true, seed: 1 };
    movepred::train(&args(&data, out.clone()), &options).unwrap();
    let model = Model::load(&out, ModelKind::Movepred).unwrap();
    let metrics = &model.card.metrics["validation"];
    let piece_top1 = metrics[0]["top"][0].as_f64().unwrap();
    assert!(piece_top1 > 1.0 / 6.0, "piece-type top-1 {piece_top1}");
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    for net in movepred::stack_names() {
        let losses: Vec<f64> = state.history.iter().filter(|r| r.stage == net).map(|r| r.train_loss.unwrap()).collect();
        assert!(losses[2] < losses[0], "{net}: {losses:?}");
    }
    let joint = model.card.metrics["joint_legal"]["top"][2].as_f64().unwrap();
    assert!(joint > 0.0 && joint <= 1.0);
    let r = eval::movepred(&sample_pgn().data(), &model, DeviceChoice::Cpu).unwrap();
    assert_eq!(r.nets.len(), 7);
    assert_eq!(r.nets[0].positions, r.joint.positions);
    assert!(r.joint.top[0] <= r.joint.top[1] && r.joint.top[1] <= r.joint.top[2] && r.joint.top[2] > 0.0);
}

#[test]
fn autoencoder_then_comparator_learn_the_material_signal() {
    let (dir, data) = dataset();
    let ae_out = dir.path().join("pos2vec");
    let ae = autoencoder::AutoencoderOptions {
        pretrain_epochs: 1,
        epochs: 2,
        batch: 64,
        lr: 2e-3,
        lr_decay: 0.98,
        decoder_activation: autoencoder::OutputActivation::Sigmoid,
        hidden: vec![32, 16],
        positions_per_epoch: None,
        validation_positions: 500,
        seed: 2,
    };
    autoencoder::train(&args(&data, ae_out.clone()), &ae).unwrap();
    let state = Checkpoint::load(&ae_out.join(CHECKPOINT_FILE)).unwrap();
    let stages: Vec<&str> = state.history.iter().map(|r| r.stage.as_str()).collect();
    assert_eq!(stages, ["pretrain.1", "pretrain.2", "pretrained.stack", "finetune", "finetune"]);
    let finetune: Vec<f64> = state.history.iter().filter(|r| r.stage == "finetune").map(|r| r.train_loss.unwrap()).collect();
    assert!(finetune[1] < finetune[0], "{finetune:?}");

    let out = dir.path().join("comparator");
    let options = comparator::ComparatorOptions { pos2vec: Some(ae_out), ..small_comparator(4) };
    let model = comparator::train(&args(&data, out.clone()), &options).unwrap();
    let accuracy = model.card.metrics["validation_pair_accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.65, "pair accuracy {accuracy}");
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    let best = state.history.iter().filter_map(|r| r.validation_accuracy).fold(0.0, f64::max);
    assert_eq!(accuracy, best, "the saved model is the best-validation one");
    let r = eval::comparator(&data, &model, 300, DeviceChoice::Cpu).unwrap();
    assert_eq!(r.pairs, 300);
    assert!((0.0..=1.0).contains(&r.accuracy));
}

#[test]
fn comparator_learns_from_eval_labelled_pairs_alone() {
    let (dir, data) = dataset();
    let out = dir.path().join("comparator-eval");
    let options = comparator::ComparatorOptions { eval_pairs: 1.0, eval_margin: 200, encoder_hidden: vec![32, 16], ..small_comparator(5) };
    let model = comparator::train(&args(&data, out), &options).unwrap();
    // trained only on which position the evaluation prefers, measured on game results
    let accuracy = model.card.metrics["validation_pair_accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.65, "result-pair accuracy after eval-labelled training {accuracy}");
}

#[test]
fn a_value_net_is_saved_even_when_no_validation_pairs_exist() {
    // tests/data/sample.pgn has no game Black won: no comparator pair can be drawn
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sample.pgn");
    let mut options = deepchess_train::prepare::PrepareOptions::new(vec![pgn], data.clone());
    options.draws = true;
    options.validation_fraction = 0.5;
    deepchess_train::prepare::prepare(&options, &mut |_| {}, &mut |_| {}).unwrap();
    let out = dir.path().join("value");
    let model = value::train(&args(&data, out.clone()), &value_options(2)).unwrap();
    assert!(model.card.metrics["validation_pair_accuracy"].is_null(), "{}", model.card.metrics);
    assert_eq!(model.card.metrics["validation_pairs"], 0);
    assert_eq!(Model::load(&out, ModelKind::Value).unwrap(), model);
}
