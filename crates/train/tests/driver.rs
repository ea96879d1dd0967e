//! The training driver with a toy trainer that computes its gradients by hand (no burn
//! graph): the best epoch is the one the metric picks and is recorded, a run resumed at a
//! stage boundary continues bit for bit, and the schedules give the documented rates.

use std::collections::BTreeMap;
use std::path::Path;

use burn::tensor::Device;
use deepchess_core::{Activation, FEATURE_COUNT, Model, ModelKind, StackSpec};
use deepchess_train::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use deepchess_train::device::DeviceChoice;
use deepchess_train::nn::adam::Adam;
use deepchess_train::nn::params::Params;
use deepchess_train::run::{
    self, Batch, BatchResult, Card, EpochAt, Finished, Pass, RunArgs, Schedule, ScheduleAt, Score, Stage, Trainer,
    Validation,
};

/// Fits `y = 3x + 1` on `x = i / 10` with one weight and one bias (the first weight of a
/// one-output `encoder` stack, so that the model is a valid Pos2Vec one), in two stages: an
/// exponentially decaying one, then a warm-up + cosine one. The validation metric of
/// epoch `e` (from 0) is `metrics[e]`.
struct Line {
    /// Epochs of the two stages.
    epochs: [u32; 2],
    metrics: Vec<f64>,
    /// Parameters at every validation.
    seen: Vec<Params>,
}

const ITEMS: usize = 40;

impl Line {
    fn new(epochs: [u32; 2], metrics: &[f64]) -> Line {
        Line { epochs, metrics: metrics.to_vec(), seen: Vec::new() }
    }
}

impl Trainer for Line {
    fn kind(&self) -> ModelKind {
        ModelKind::Pos2vec
    }

    fn options(&self) -> anyhow::Result<serde_json::Value> {
        // the second stage's epochs play the part of `--epochs`, which a resumed run may raise
        Ok(serde_json::json!({ "first": self.epochs[0], "epochs": self.epochs[1] }))
    }

    fn init(&self) -> anyhow::Result<Params> {
        Ok(Params::init(vec![StackSpec::new("encoder", &[FEATURE_COUNT, 1], Activation::Relu)], 3))
    }

    fn stages(&self) -> Vec<Stage> {
        vec![
            Stage { epochs: self.epochs[0], batch: 8, schedule: Schedule::Exponential { lr: 0.1, decay: 0.5 } },
            Stage {
                epochs: self.epochs[1],
                batch: 8,
                schedule: Schedule::WarmupCosine { lr: 0.05, warmup: 3, min_lr: 0.01 },
            },
        ]
    }

    fn passes(&mut self, at: &EpochAt) -> anyhow::Result<Vec<Pass>> {
        let mut order: Vec<usize> = (0..ITEMS).collect();
        order.rotate_left(at.epoch as usize % ITEMS);
        Ok(vec![Pass { name: format!("line.{}", at.stage), order }])
    }

    fn step(&mut self, batch: &Batch<'_>, params: &mut Params, adam: &mut Adam) -> anyhow::Result<BatchResult> {
        let (w, b) = (params.get("encoder.0.weight")[0], params.get("encoder.0.bias")[0]);
        let (mut loss, mut gw, mut gb) = (0.0f64, 0.0f32, 0.0f32);
        let n = batch.indices.len() as f32;
        for &i in batch.indices {
            let x = i as f32 / 10.0;
            let e = w * x + b - (3.0 * x + 1.0);
            loss += f64::from(e * e);
            gw += 2.0 * e * x / n;
            gb += 2.0 * e / n;
        }
        let mut weight = vec![0.0; FEATURE_COUNT];
        weight[0] = gw;
        let grads =
            BTreeMap::from([("encoder.0.weight".to_string(), weight), ("encoder.0.bias".to_string(), vec![gb])]);
        adam.update(params, &grads, batch.lr as f32);
        Ok(BatchResult { loss: loss / f64::from(n), correct: None })
    }

    fn validate(&mut self, params: &Params, _: &Device, at: &EpochAt) -> anyhow::Result<Validation> {
        self.seen.push(params.clone());
        let metric = self.metrics[at.epoch as usize];
        Ok(Validation::one(Score { loss: -metric, accuracy: None }, Some(metric)))
    }

    fn card(&mut self, _: &Params, _: &Device, run: &Finished<'_>) -> anyhow::Result<Card> {
        Ok(Card {
            kind: ModelKind::Pos2vec,
            stacks: vec!["encoder".into()],
            output: serde_json::json!("y = w x + b"),
            metrics: serde_json::json!({ "epochs_seen": run.epochs }),
            report: format!("best epoch {:?}", run.best_epoch),
        })
    }
}

fn args(out: &Path) -> RunArgs {
    RunArgs {
        data: out.join("no-data"),
        out: out.to_path_buf(),
        force: false,
        resume: false,
        device: DeviceChoice::Cpu,
        git_commit: Some("0123abc".into()),
    }
}

#[test]
fn the_best_epoch_is_the_metric_s_first_maximum_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut line = Line::new([2, 3], &[0.2, 0.9, 0.5, 0.9, 0.1]);
    let model = run::train(&args(dir.path()), &mut line).unwrap();
    let state = Checkpoint::load(&dir.path().join(CHECKPOINT_FILE)).unwrap();
    let best = state.best.unwrap();
    assert_eq!((best.epoch, best.metric), (2, 0.9));
    assert_eq!(best.params, line.seen[1], "the parameters at the end of epoch 2");
    assert_eq!(Params::from_model(&model).values, line.seen[1].values);
    assert_eq!(model.card.metrics, serde_json::json!({ "epochs_seen": 5, "best_epoch": 2 }));
    assert_eq!(model.card.epochs, 5);
    assert_eq!(Model::load(dir.path(), ModelKind::Pos2vec).unwrap(), model);
    assert!(dir.path().join("metrics.csv").exists());
    let stages: Vec<(u32, &str)> = state.history.iter().map(|r| (r.epoch, r.stage.as_str())).collect();
    assert_eq!(stages, [(1, "line.0"), (2, "line.0"), (3, "line.1"), (4, "line.1"), (5, "line.1")]);
    assert!(state.history.iter().all(|r| r.train_accuracy.is_none()));
    let losses: Vec<f64> = state.history.iter().map(|r| r.train_loss.unwrap()).collect();
    assert!(losses[4] < losses[0], "{losses:?}");
    // each row's rate is its schedule's at the epoch's last batch (5 batches of 8)
    let lrs: Vec<f64> = state.history.iter().map(|r| r.lr).collect();
    let cosine = Schedule::WarmupCosine { lr: 0.05, warmup: 3, min_lr: 0.01 };
    let at = |epoch| ScheduleAt { epoch, epochs: 3, batch: 4, batches: 5 };
    let expected = [0.1, 0.05, cosine.lr(at(0)), cosine.lr(at(1)), cosine.lr(at(2))];
    // (to the last bit or so: the history goes through the checkpoint's JSON)
    assert!(lrs.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-15), "{lrs:?} != {expected:?}");
}

#[test]
fn a_run_resumed_at_a_stage_boundary_continues_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = [0.1, 0.2, 0.3, 0.4];
    let straight = dir.path().join("straight");
    run::train(&args(&straight), &mut Line::new([2, 2], &metrics)).unwrap();
    let split = dir.path().join("split");
    run::train(&args(&split), &mut Line::new([2, 0], &metrics)).unwrap();
    let mut resume = args(&split);
    resume.resume = true;
    run::train(&resume, &mut Line::new([2, 2], &metrics)).unwrap();
    let a = Checkpoint::load(&straight.join(CHECKPOINT_FILE)).unwrap();
    let b = Checkpoint::load(&split.join(CHECKPOINT_FILE)).unwrap();
    assert_eq!(a.params, b.params);
    assert_eq!(a.adam, b.adam, "the second stage starts with fresh moments in both runs");
    assert_eq!(a.best, b.best);
    let losses = |c: &Checkpoint| c.history.iter().map(|r| (r.train_loss, r.lr)).collect::<Vec<_>>();
    assert_eq!(losses(&a), losses(&b));

    let err = run::train(&resume, &mut Line::new([3, 2], &metrics)).unwrap_err().to_string();
    assert!(err.contains("options differ"), "{err}");
    let err = run::train(&args(&split), &mut Line::new([2, 2], &metrics)).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("--force"), "{err}");
    let err = run::train(&args(&dir.path().join("none")), &mut Line::new([0, 0], &[])).unwrap_err().to_string();
    assert!(err.contains("--epochs"), "{err}");
}

#[test]
fn schedules_give_the_documented_rates() {
    let at = |epoch, epochs, batch, batches| ScheduleAt { epoch, epochs, batch, batches };
    let exponential = Schedule::Exponential { lr: 0.1, decay: 0.5 };
    assert_eq!(exponential.lr(at(0, 3, 7, 10)), 0.1);
    assert_eq!(exponential.lr(at(2, 3, 0, 10)), 0.025);

    // 2 epochs of 5 batches: warm-up over batches 0..4, cosine over the 6 after
    let cosine = Schedule::WarmupCosine { lr: 1.0, warmup: 4, min_lr: 0.1 };
    let rates: Vec<f64> = (0..10).map(|step| cosine.lr(at(step / 5, 2, step as usize % 5, 5))).collect();
    for (rate, expected) in rates.iter().zip([0.25, 0.5, 0.75, 1.0, 1.0]) {
        assert!((rate - expected).abs() < 1e-12, "warm-up then the top of the cosine: {rates:?}");
    }
    assert!((rates[7] - 0.55).abs() < 1e-12, "half-way down the cosine: {rates:?}");
    assert!(rates[4..].windows(2).all(|w| w[1] < w[0]) && rates[9] > 0.1, "{rates:?}");
    assert_eq!(Schedule::WarmupCosine { lr: 1.0, warmup: 0, min_lr: 0.0 }.lr(at(0, 1, 0, 4)), 1.0);
}

#[test]
fn the_run_directory_is_never_an_input_a_file_or_another_network_s_run() {
    let dir = tempfile::tempdir().unwrap();
    let line = || Line::new([1, 0], &[0.5]);
    // a file
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, b"mine").unwrap();
    let err = run::train(&args(&file), &mut line()).unwrap_err().to_string();
    assert!(err.contains("notes.txt") && err.contains("not a directory"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    // the data directory itself
    let mut same = args(&dir.path().join("data"));
    same.data = same.out.clone();
    let err = run::train(&same, &mut line()).unwrap_err().to_string();
    assert!(err.contains("is the --data directory"), "{err}");

    // a directory holding a model (no checkpoint): kept without --force, replaced with it
    let models = dir.path().join("models");
    let first = run::train(&args(&models), &mut line()).unwrap();
    std::fs::remove_file(models.join(CHECKPOINT_FILE)).unwrap();
    std::fs::remove_file(models.join("metrics.csv")).unwrap();
    let card = std::fs::read(models.join("pos2vec.json")).unwrap();
    let err = run::train(&args(&models), &mut line()).unwrap_err().to_string();
    assert!(err.contains("pos2vec.json, pos2vec.safetensors") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(models.join("pos2vec.json")).unwrap(), card, "untouched");
    let mut force = args(&models);
    force.force = true;
    let second = run::train(&force, &mut line()).unwrap();
    assert_eq!(first.card.git_commit.as_deref(), Some("0123abc"), "the build's commit, not the directory's");
    assert_eq!(second.card.weights_sha256, first.card.weights_sha256, "the same run again");

    // --force on another network's run, or on a checkpoint that is not ours: refused
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let mut state = Checkpoint::load(&models.join(CHECKPOINT_FILE)).unwrap();
    state.kind = Some(ModelKind::Value);
    state.save(&other.join(CHECKPOINT_FILE)).unwrap();
    let mut force = args(&other);
    force.force = true;
    let err = run::train(&force, &mut line()).unwrap_err().to_string();
    assert!(err.contains("holds a run of `value`") && err.contains("only a previous run of `pos2vec`"), "{err}");
    std::fs::write(other.join(CHECKPOINT_FILE), b"not a checkpoint at all").unwrap();
    let err = run::train(&force, &mut line()).unwrap_err().to_string();
    assert!(err.contains("not ours") && err.contains("not a deepchess checkpoint"), "{err}");
    assert_eq!(std::fs::read(other.join(CHECKPOINT_FILE)).unwrap(), b"not a checkpoint at all");
}

#[test]
fn resuming_on_other_data_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (d, len) in [(&a, 64 + 40), (&b, 64 + 80)] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("positions-train.bin"), vec![0u8; len]).unwrap();
    }
    let out = dir.path().join("run");
    let mut first = args(&out);
    first.data = a.clone();
    run::train(&first, &mut Line::new([1, 0], &[0.1, 0.2])).unwrap();
    let recorded = Checkpoint::load(&out.join(CHECKPOINT_FILE)).unwrap();
    assert_eq!(recorded.kind, Some(ModelKind::Pos2vec));
    assert_eq!(recorded.data[0]["files"]["positions-train.bin"], 104);
    let mut resume = first.clone();
    resume.resume = true;
    resume.data = b.clone();
    let err = run::train(&resume, &mut Line::new([1, 1], &[0.1, 0.2])).unwrap_err().to_string();
    let (a_name, b_name) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
    assert!(err.contains(&a_name.display().to_string()) && err.contains(&b_name.display().to_string()), "{err}");
    assert!(err.contains("positions-train.bin 104 bytes") && err.contains("positions-train.bin 144 bytes"), "{err}");
    // the same directory with other contents
    std::fs::write(a.join("positions-train.bin"), vec![0u8; 64]).unwrap();
    resume.data = a.clone();
    let err = run::train(&resume, &mut Line::new([1, 1], &[0.1, 0.2])).unwrap_err().to_string();
    assert!(err.contains("104 bytes") && err.contains("64 bytes"), "{err}");
    std::fs::write(a.join("positions-train.bin"), vec![0u8; 104]).unwrap();
    run::train(&resume, &mut Line::new([1, 1], &[0.1, 0.2])).unwrap();
}
