//! Tiny, seeded training runs on a synthetic dataset: losses fall, accuracy beats chance
//! on a learnable signal, models round-trip bit for bit, and `--resume` continues the
//! very same run.

mod common;

use std::path::{Path, PathBuf};

use deepchess_core::{Model, ModelKind};
use deepchess_train::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use deepchess_train::device::DeviceChoice;
use deepchess_train::eval::{self, PreparedPgn};
use deepchess_train::nn::factoriser;
use deepchess_train::nn::params::Params;
use deepchess_train::nn::perspective::FT_FACTOR;
use deepchess_train::run::RunArgs;
use deepchess_train::run::{EpochAt, Trainer};
use deepchess_train::trainers::{autoencoder, comparator, movepred, student, value};

fn sample_pgn() -> PreparedPgn {
    PreparedPgn::new(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sample.pgn")).unwrap()
}

fn args(data: &Path, out: PathBuf) -> RunArgs {
    RunArgs { data: data.to_path_buf(), out, force: false, resume: false, device: DeviceChoice::Cpu, git_commit: None }
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
        final_lr: 0.1,
        warmup: 4,
        weight_decay: 0.0,
        result_weight: 0.3,
        scale: None,
        width: 32,
        positions_per_epoch: None,
        seed: 5,
        extra_data: Vec::new(),
        init: None,
        output_buckets: 1,
        mirror: false,
        king_buckets: false,
        factoriser: false,
        mix: Vec::new(),
        shuffle_buffer: None,
        mix_validation_fraction: None,
        // the synthetic games are mostly captures from the first ply on
        filters: deepchess_train::eval_positions::PositionFilters {
            min_ply: 0,
            keep_noisy: true,
            ..Default::default()
        },
    }
}

#[test]
fn value_net_learns_material_and_round_trips_bit_for_bit() {
    let (dir, data) = dataset();
    let out = dir.path().join("value");
    let model = value::train(&args(&data, out.clone()), &value_options(6)).unwrap();
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    let (first, last) = (&state.history[0], state.history.last().unwrap());
    let (a, b) = (first.train_loss.unwrap(), last.train_loss.unwrap());
    assert!(b < 0.8 * a, "{a} -> {b}");
    let (v0, v1) = (first.validation_loss, last.validation_loss);
    assert!(v1 < v0, "validation loss {v0} -> {v1}");
    // the synthetic scores are the material balance: a missing queen must cost the most
    let drops = &model.card.metrics["material_drop_cp"];
    assert!(drops["no queen"].as_f64().unwrap() > drops["no knight b1"].as_f64().unwrap().max(0.0), "{drops}");
    let back = Model::load(&out, ModelKind::Value).unwrap();
    assert_eq!(back, model);
    assert_eq!(
        Params::from_model(&back).values,
        state.params.values,
        "the saved model is the last epoch's parameters, bit for bit"
    );
    assert!(state.best.is_none() && model.card.metrics.get("best_epoch").is_none(), "no epoch is selected");
    assert!(out.join("metrics.csv").exists() && out.join("metrics.png").exists());
    let err = value::train(&args(&data, out.clone()), &value_options(4)).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("--force"), "{err}");

    let r = eval::value(&data, &back, 200, 0.3).unwrap();
    assert_eq!(r.pairs, 200);
    assert!((0.0..=1.0).contains(&r.pair_accuracy) && r.scores.loss.is_finite());
    let err = eval::movepred(&data, &back, DeviceChoice::Cpu).unwrap_err().to_string();
    assert!(err.contains("expected a movepred model, got a value model"), "{err}");
}

#[test]
fn extra_data_joins_the_positions_of_data() {
    let (dir, data) = dataset();
    let kept = |model: &Model, split: &str| model.card.metrics["filters"][split]["kept"].as_u64().unwrap();
    let one = value::train(&args(&data, dir.path().join("one")), &value_options(1)).unwrap();
    let both = value::ValueOptions { extra_data: vec![data.clone()], ..value_options(1) };
    let two = value::train(&args(&data, dir.path().join("two")), &both).unwrap();
    assert_eq!(kept(&two, "train"), 2 * kept(&one, "train"));
    assert_eq!(kept(&two, "validation"), 2 * kept(&one, "validation"));
    let missing = value::ValueOptions { extra_data: vec![dir.path().join("nowhere")], ..value_options(1) };
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("three")), &missing).unwrap_err());
    assert!(err.contains("nowhere"), "{err}");
}

#[test]
fn init_starts_the_run_from_a_trained_value_net() {
    let (dir, data) = dataset();
    let trained = dir.path().join("trained");
    value::train(&args(&data, trained.clone()), &value_options(6)).unwrap();
    let validation_loss = |model: &Model| model.card.metrics["validation"]["loss"].as_f64().unwrap();
    // one epoch at a rate too small to move far: the warm start keeps what six epochs learned
    let tiny = |init| value::ValueOptions { lr: 1e-6, init, ..value_options(1) };
    let fresh = value::train(&args(&data, dir.path().join("fresh")), &tiny(None)).unwrap();
    let warm = value::train(&args(&data, dir.path().join("warm")), &tiny(Some(trained.clone()))).unwrap();
    let six = Model::load(&trained, ModelKind::Value).unwrap();
    assert!(
        validation_loss(&warm) < 0.9 * validation_loss(&fresh),
        "{} vs {}",
        validation_loss(&warm),
        validation_loss(&fresh)
    );
    assert!((validation_loss(&warm) - validation_loss(&six)).abs() < 0.05 * validation_loss(&six));
    assert_eq!(warm.card.hyperparameters["init"].as_str(), trained.to_str());
    let k = |model: &Model| model.card.centipawns_per_unit().unwrap();
    assert_eq!(k(&warm), k(&six), "the warm start keeps the --init net's scale");
    // output buckets from a single-output net: each bucket starts as its output
    let bucketed = value::ValueOptions { output_buckets: 8, ..tiny(Some(trained.clone())) };
    let eight = value::train(&args(&data, dir.path().join("eight")), &bucketed).unwrap();
    assert_eq!(eight.card.stacks[1].layers, vec![64, 8]);
    assert!((validation_loss(&eight) - validation_loss(&six)).abs() < 0.05 * validation_loss(&six));
    let back = value::ValueOptions { output_buckets: 4, ..tiny(Some(dir.path().join("eight"))) };
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("four")), &back).unwrap_err());
    assert!(err.contains("--output-buckets") && err.contains("8 output buckets"), "{err}");
    // a net of another input layout is refused, naming both
    let mirrored = value::ValueOptions { mirror: true, ..tiny(Some(trained.clone())) };
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("mirrored")), &mirrored).unwrap_err());
    assert!(err.contains("--init") && err.contains("plain") && err.contains("horizontal_mirror"), "{err}");
    // a net of another width, a missing model, and the run's own directory are refused by name
    let wide = value::ValueOptions { width: 48, ..tiny(Some(trained.clone())) };
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("wide")), &wide).unwrap_err());
    assert!(err.contains("--init") && err.contains("width 32") && err.contains("--width 48"), "{err}");
    let missing = tiny(Some(dir.path().join("nowhere")));
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("missing")), &missing).unwrap_err());
    assert!(err.contains("--init") && err.contains("nowhere"), "{err}");
    let err = format!("{:#}", value::train(&args(&data, trained.clone()), &tiny(Some(trained.clone()))).unwrap_err());
    assert!(err.contains("is the --init directory"), "{err}");
}

#[test]
fn a_mirrored_net_learns_and_says_so_in_its_card() {
    let (dir, data) = dataset();
    let mirrored = |epochs, init| value::ValueOptions { mirror: true, init, ..value_options(epochs) };
    let one = value::train(&args(&data, dir.path().join("one")), &mirrored(1, None)).unwrap();
    let six = value::train(&args(&data, dir.path().join("six")), &mirrored(6, None)).unwrap();
    let validation_loss = |model: &Model| model.card.metrics["validation"]["loss"].as_f64().unwrap();
    assert!(validation_loss(&six) < validation_loss(&one), "{} vs {}", validation_loss(&six), validation_loss(&one));
    assert_eq!(six.card.output["input_layout"], "horizontal_mirror");
    assert_eq!(six.card.value_input_layout(), Ok(deepchess_core::arch::ValueInputLayout::HorizontalMirror));
    assert_eq!(six.card.hyperparameters["mirror"], true);
    // a warm start from a mirrored net with --mirror; without it, refused
    let warm = value::train(&args(&data, dir.path().join("warm")), &mirrored(1, Some(dir.path().join("six")))).unwrap();
    assert_eq!(warm.card.output["input_layout"], "horizontal_mirror");
    let plain = value::ValueOptions { init: Some(dir.path().join("six")), ..value_options(1) };
    let err = format!("{:#}", value::train(&args(&data, dir.path().join("plain")), &plain).unwrap_err());
    assert!(err.contains("horizontal_mirror") && err.contains("--mirror"), "{err}");
    let fresh = value::train(&args(&data, dir.path().join("fresh")), &value_options(1)).unwrap();
    assert_eq!(fresh.card.output["input_layout"], "plain");
    // king buckets warm from the mirrored net: its rows copied into four buckets
    let bucketed = |init| value::ValueOptions { king_buckets: true, init, ..value_options(1) };
    let warm = value::train(&args(&data, dir.path().join("kb")), &bucketed(Some(dir.path().join("six")))).unwrap();
    assert_eq!(warm.card.output["input_layout"], "horizontal_mirror_king_buckets4");
    assert_eq!(warm.card.stacks[0].layers, vec![4 * 768, 32]);
    assert!(
        validation_loss(&warm) < validation_loss(&one),
        "the buckets start from the trained net: {} vs {}",
        validation_loss(&warm),
        validation_loss(&one)
    );
    let again = value::train(&args(&data, dir.path().join("kb2")), &bucketed(Some(dir.path().join("kb")))).unwrap();
    assert_eq!(again.card.stacks[0].layers, vec![4 * 768, 32]);
    // the same with a factoriser: trained beside the buckets, folded into them when written
    let factored = value::ValueOptions { factoriser: true, ..bucketed(Some(dir.path().join("six"))) };
    let out = dir.path().join("kb-factored");
    let model = value::train(&args(&data, out.clone()), &factored).unwrap();
    assert_eq!(model.card.stacks[0].layers, vec![4 * 768, 32]);
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    assert_eq!(state.params.get(FT_FACTOR).len(), 768 * 32, "the checkpoint keeps the factoriser");
    assert_eq!(Params::from_model(&model).values, factoriser::fold(&state.params).values);
    assert!(Model::load(&out, ModelKind::Value).unwrap().tensor(FT_FACTOR).is_none());
    assert!(
        validation_loss(&model) < validation_loss(&one),
        "the factorised buckets start from the trained net too: {} vs {}",
        validation_loss(&model),
        validation_loss(&one)
    );
    let fresh = value::train(&args(&data, dir.path().join("kb-fresh")), &bucketed(None)).unwrap();
    assert_eq!(fresh.card.value_input_layout(), Ok(deepchess_core::arch::ValueInputLayout::MirrorKingBuckets));
    // a bucketed net is no start for a net without buckets
    let err = format!(
        "{:#}",
        value::train(&args(&data, dir.path().join("back")), &mirrored(1, Some(dir.path().join("kb")))).unwrap_err()
    );
    assert!(err.contains("horizontal_mirror_king_buckets4"), "{err}");
}

#[test]
fn resume_continues_the_same_run() {
    let (dir, data) = dataset();
    // a constant rate after the warm-up: raising --epochs on resume keeps every step's rate
    let options = |epochs| value::ValueOptions { final_lr: 1.0, ..value_options(epochs) };
    let straight = dir.path().join("straight");
    value::train(&args(&data, straight.clone()), &options(2)).unwrap();
    let split = dir.path().join("split");
    value::train(&args(&data, split.clone()), &options(1)).unwrap();
    let mut resume = args(&data, split.clone());
    resume.resume = true;
    value::train(&resume, &options(2)).unwrap();
    let a = Checkpoint::load(&straight.join(CHECKPOINT_FILE)).unwrap();
    let b = Checkpoint::load(&split.join(CHECKPOINT_FILE)).unwrap();
    assert_eq!(a.params, b.params);
    assert_eq!(a.adam, b.adam);
    let mut other = options(2);
    other.lr = 1e-2;
    let err = value::train(&resume, &other).err().unwrap().to_string();
    assert!(err.contains("options differ"), "{err}");
}

#[test]
fn move_predictors_beat_chance() {
    let (dir, data) = dataset();
    let out = dir.path().join("movepred");
    let options = movepred::MovepredOptions {
        epochs: 3,
        batch: 64,
        lr: 3e-3,
        lr_decay: 1.0,
        hidden: 16,
        positions_per_epoch: None,
        flip: true,
        seed: 1,
        init: None,
    };
    let zero = movepred::MovepredOptions { hidden: 0, ..options.clone() };
    let err = movepred::train(&args(&data, out.clone()), &zero).unwrap_err().to_string();
    assert!(err.contains("--hidden must be at least 1"), "{err}");
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
    // A warm start at a rate too small to move far keeps what the three epochs learned;
    // predictors of another width are refused by name.
    let loss = |model: &Model| model.card.metrics["validation"][0]["loss"].as_f64().unwrap();
    let tiny = |init| movepred::MovepredOptions { epochs: 1, lr: 1e-7, init, ..options.clone() };
    let warm = movepred::train(&args(&data, dir.path().join("warm")), &tiny(Some(out.clone()))).unwrap();
    let fresh = movepred::train(&args(&data, dir.path().join("fresh")), &tiny(None)).unwrap();
    assert!((loss(&warm) - loss(&model)).abs() < 1e-3 * loss(&model), "{} vs {}", loss(&warm), loss(&model));
    assert!(loss(&warm) < loss(&fresh), "{} vs {}", loss(&warm), loss(&fresh));
    assert_eq!(warm.card.hyperparameters["init"].as_str(), out.to_str());
    let wide = movepred::MovepredOptions { hidden: 24, ..tiny(Some(out.clone())) };
    let err = format!("{:#}", movepred::train(&args(&data, dir.path().join("wide")), &wide).unwrap_err());
    assert!(err.contains("--init") && err.contains("16 wide") && err.contains("--hidden 24"), "{err}");
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
    let zero = autoencoder::AutoencoderOptions { hidden: vec![8, 0], ..ae.clone() };
    let err = autoencoder::train(&args(&data, ae_out.clone()), &zero).unwrap_err().to_string();
    assert!(err.contains("--hidden must list widths of at least 1"), "{err}");
    autoencoder::train(&args(&data, ae_out.clone()), &ae).unwrap();
    let state = Checkpoint::load(&ae_out.join(CHECKPOINT_FILE)).unwrap();
    let stages: Vec<&str> = state.history.iter().map(|r| r.stage.as_str()).collect();
    assert_eq!(stages, ["pretrain.1", "pretrain.2", "pretrained.stack", "finetune", "finetune"]);
    let finetune: Vec<f64> =
        state.history.iter().filter(|r| r.stage == "finetune").map(|r| r.train_loss.unwrap()).collect();
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
    let options = comparator::ComparatorOptions {
        eval_pairs: 1.0,
        eval_margin: 200,
        encoder_hidden: vec![32, 16],
        ..small_comparator(5)
    };
    let model = comparator::train(&args(&data, out), &options).unwrap();
    // trained only on which position the evaluation prefers, measured on game results
    let accuracy = model.card.metrics["validation_pair_accuracy"].as_f64().unwrap();
    assert!(accuracy > 0.65, "result-pair accuracy after eval-labelled training {accuracy}");
}

#[test]
fn a_dataset_without_scored_positions_is_refused_with_its_name() {
    // tests/data/decisive.pgn has no [%eval] comment: nothing to learn scores from
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/decisive.pgn");
    let options = deepchess_train::prepare::PrepareOptions::new(vec![pgn], data.clone());
    deepchess_train::prepare::prepare(&options, &mut |_| {}, &mut |_| {}).unwrap();
    let out = dir.path().join("value");
    let err = value::train(&args(&data, out.clone()), &value_options(2)).unwrap_err().to_string();
    assert!(err.contains("no training position") && err.contains(&data.display().to_string()), "{err}");
    assert!(!out.join("value.json").exists());
}

/// `dir` as a prepared dataset whose `validation` (or, with `train_too`, every) file is
/// empty, the others copied from `from`.
fn emptied(from: &Path, dir: &Path, train_too: bool) -> PathBuf {
    use deepchess_core::dataset::file_name;
    use deepchess_core::{Content, DatasetWriter, Split};
    std::fs::create_dir_all(dir).unwrap();
    for content in Content::ALL {
        for split in Split::ALL {
            let name = file_name(content, split);
            if split == Split::Validation || train_too {
                DatasetWriter::create(&dir.join(&name), content, split).unwrap().finish().unwrap();
            } else {
                std::fs::copy(from.join(&name), dir.join(&name)).unwrap();
            }
        }
    }
    dir.to_path_buf()
}

#[test]
fn empty_training_or_validation_splits_are_refused_by_every_trainer() {
    let (dir, data) = dataset();
    let no_validation = emptied(&data, &dir.path().join("no-validation"), false);
    let nothing = emptied(&data, &dir.path().join("nothing"), true);
    let movepred = movepred::MovepredOptions {
        epochs: 1,
        batch: 64,
        lr: 3e-3,
        lr_decay: 1.0,
        hidden: 8,
        positions_per_epoch: None,
        flip: false,
        seed: 1,
        init: None,
    };
    let ae = autoencoder::AutoencoderOptions {
        pretrain_epochs: 1,
        epochs: 1,
        batch: 64,
        lr: 2e-3,
        lr_decay: 1.0,
        decoder_activation: autoencoder::OutputActivation::Sigmoid,
        hidden: vec![8],
        positions_per_epoch: None,
        validation_positions: 100,
        seed: 2,
    };
    for (data, expected) in [(&no_validation, "validation"), (&nothing, "no training")] {
        let out = |name: &str| dir.path().join(format!("{name}-{}", data.file_name().unwrap().to_string_lossy()));
        let errors = [
            ("movepred", movepred::train(&args(data, out("movepred")), &movepred).err()),
            ("autoencoder", autoencoder::train(&args(data, out("ae")), &ae).err()),
            ("comparator", comparator::train(&args(data, out("cmp")), &small_comparator(1)).err()),
            ("value", value::train(&args(data, out("value")), &value_options(1)).err()),
        ];
        for (trainer, err) in errors {
            let err = err.map(|e| e.to_string()).unwrap_or_else(|| panic!("{trainer} trained on {}", data.display()));
            assert!(err.contains(&data.display().to_string()) && err.contains(expected), "{trainer}: {err}");
        }
    }
    assert!(!dir.path().join("movepred-no-validation").join("movepred.json").exists());
}

#[test]
fn comparator_options_no_run_can_use_are_refused_naming_the_option() {
    let (dir, data) = dataset();
    let cases: [(&str, comparator::ComparatorOptions); 4] = [
        ("--batch", comparator::ComparatorOptions { batch: 0, ..small_comparator(1) }),
        ("--pairs-per-epoch", comparator::ComparatorOptions { pairs_per_epoch: 0, ..small_comparator(1) }),
        ("--eval-pairs", comparator::ComparatorOptions { eval_pairs: 2.0, ..small_comparator(1) }),
        ("--head-hidden", comparator::ComparatorOptions { head_hidden: vec![16, 0], ..small_comparator(1) }),
    ];
    for (option, options) in cases {
        let err = comparator::train(&args(&data, dir.path().join("c")), &options).unwrap_err().to_string();
        assert!(err.contains(option), "{option}: {err}");
    }
    let value_cases = [
        ("--result-weight", value::ValueOptions { result_weight: 2.0, ..value_options(1) }),
        ("--batch", value::ValueOptions { batch: 0, ..value_options(1) }),
        ("--output-buckets", value::ValueOptions { output_buckets: 0, ..value_options(1) }),
        ("--positions-per-epoch", value::ValueOptions { positions_per_epoch: Some(0), ..value_options(1) }),
    ];
    for (option, options) in value_cases {
        let err = value::train(&args(&data, dir.path().join("v")), &options).unwrap_err().to_string();
        assert!(err.contains(option), "{option}: {err}");
    }
    assert!(!dir.path().join("c").exists() && !dir.path().join("v").exists());
}

#[test]
fn the_student_draws_the_asked_share_of_its_pairs_from_the_mix_and_learns() {
    let (dir, data) = dataset();
    let games = dir.path().join("games");
    common::write_dataset(&games, 60, 9);
    let value_dir = dir.path().join("value");
    value::train(&args(&data, value_dir.clone()), &value_options(2)).unwrap();
    let options = student::StudentOptions {
        value: value_dir,
        epochs: 3,
        batch: 64,
        lr: 3e-3,
        hidden: 8,
        pairs_per_epoch: 2000,
        scale: 100.0,
        max_score: 2000,
        margin: 20,
        validation_pairs: 500,
        holdout: Vec::new(),
        mix: Some(games.clone()),
        mix_fraction: 0.25,
        teacher: None,
        seed: 3,
    };
    let mut trainer = student::StudentTrainer::new(&data, &options).unwrap();
    let training_pairs = trainer.training_pairs();
    for epoch in 0..2 {
        let at = EpochAt { epoch, stage: 0, stage_epoch: epoch, stage_epochs: 3 };
        let order = trainer.passes(&at).unwrap().remove(0).order;
        assert_eq!(order.len(), 2000);
        let mixed = order.iter().filter(|&&i| i >= training_pairs).count();
        assert_eq!(mixed, 500, "a quarter of the epoch from --mix");
        // shuffled together: the mix's pairs are not all at one end
        assert!(
            order[..1000].iter().any(|&i| i >= training_pairs) && order[1000..].iter().any(|&i| i < training_pairs)
        );
    }
    let out = dir.path().join("student");
    let model = student::train(&args(&data, out.clone()), &options).unwrap();
    assert_eq!(model.card.hyperparameters["mix"], serde_json::json!(games.display().to_string()));
    let state = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    let (first, last) = (&state.history[0], state.history.last().unwrap());
    let (a, b) = (first.train_loss.unwrap(), last.train_loss.unwrap());
    assert!(b < a, "training loss {a} -> {b}");
    let bad = student::StudentOptions { mix_fraction: 1.0, ..options.clone() };
    let err = student::StudentTrainer::new(&data, &bad).err().unwrap().to_string();
    assert!(err.contains("--mix-fraction"), "{err}");
    // a mirrored value net's feature transformer is no plain code: refused by name
    let mirrored_dir = dir.path().join("mirrored");
    let mirrored = value::ValueOptions { mirror: true, ..value_options(1) };
    value::train(&args(&data, mirrored_dir.clone()), &mirrored).unwrap();
    let with_mirrored = student::StudentOptions { value: mirrored_dir, ..options };
    let err = format!("{:#}", student::StudentTrainer::new(&data, &with_mirrored).err().unwrap());
    assert!(err.contains("--value") && err.contains("horizontal_mirror"), "{err}");
}
