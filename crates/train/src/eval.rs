//! `deepchess eval`: the trained networks measured on any PGN file. The file is prepared
//! exactly as for training (into a temporary directory, every game in one split, drawn
//! games kept) and the measures are those of training: comparator pairs drawn from the
//! decisive games with a fixed seed ([`comparator::measurement_pairs`]), the move
//! predictors' per-net and joint accuracy, the value net's loss, result accuracy and
//! accuracy as a comparator on the same pairs.

use std::path::Path;

use anyhow::Context;
use deepchess_core::{Content, Model, ModelKind, Split};
use serde::Serialize;

use crate::data::DataFile;
use crate::device::DeviceChoice;
use crate::nn::params::Params;
use crate::prepare::{PrepareOptions, prepare};
use crate::trainers::{comparator, movepred, value};

/// A PGN prepared into a temporary directory (removed on drop).
pub struct PreparedPgn {
    dir: tempfile::TempDir,
}

impl PreparedPgn {
    /// Prepares `pgn` (every game, draws kept, all in the validation split).
    pub fn new(pgn: &Path) -> anyhow::Result<PreparedPgn> {
        let dir = tempfile::tempdir().context("creating a temporary directory")?;
        let mut options = PrepareOptions::new(vec![pgn.to_path_buf()], dir.path().join("data"));
        options.draws = true;
        options.validation_fraction = 1.0;
        prepare(&options, &mut |_| {}, &mut |line| eprintln!("{line}"))
            .with_context(|| format!("--pgn {}", pgn.display()))?;
        Ok(PreparedPgn { dir })
    }

    /// The dataset directory.
    pub fn data(&self) -> std::path::PathBuf {
        self.dir.path().join("data")
    }
}

fn params(model: &Model, kind: ModelKind) -> anyhow::Result<Params> {
    anyhow::ensure!(
        model.card.kind == kind,
        "expected a {} model, got a {} model",
        kind.name(),
        model.card.kind.name()
    );
    Ok(Params::from_model(model))
}

/// Comparator figures on a PGN.
#[derive(Clone, Debug, Serialize)]
pub struct ComparatorEval {
    /// Share of pairs ranked right.
    pub accuracy: f64,
    /// Pairs.
    pub pairs: usize,
}

/// The comparator `model` on `pairs` pairs of the prepared `data`.
pub fn comparator(data: &Path, model: &Model, pairs: usize, device: DeviceChoice) -> anyhow::Result<ComparatorEval> {
    let params = params(model, ModelKind::Comparator)?;
    let file = DataFile::open(data, Content::Positions, Split::Validation)?;
    let (white, black) = comparator::decisive(&file);
    let pairs = comparator::measurement_pairs(&white, &black, pairs)?;
    let tally = comparator::evaluate(&params, &device.device()?, &file, &pairs)?;
    Ok(ComparatorEval { accuracy: tally.accuracy(), pairs: pairs.len() })
}

/// Value-net figures on a PGN.
#[derive(Clone, Debug, Serialize)]
pub struct ValueEval {
    /// Loss over the scored positions that pass the training filters.
    pub scores: value::ValueScores,
    /// Share of comparator pairs where the White-won position gets the higher score.
    pub pair_accuracy: f64,
    /// Pairs.
    pub pairs: usize,
}

/// The value net `model` on the prepared `data`: its loss against the training target
/// with `result_weight` (the scale is the model's), and its pair accuracy.
pub fn value(data: &Path, model: &Model, pairs: usize, result_weight: f64) -> anyhow::Result<ValueEval> {
    let params = params(model, ModelKind::Value)?;
    let scale = model.card.centipawns_per_unit().context("the value model's card lacks output.centipawns_per_unit")?;
    let layout = model.card.value_input_layout().map_err(|e| anyhow::anyhow!("the value model's card: {e}"))?;
    let (positions, _) = value::load(data, Split::Validation, &Default::default())?;
    let scores = value::evaluate(&params, layout, &positions, &crate::eval_positions::Target { result_weight, scale });
    let file = DataFile::open(data, Content::Positions, Split::Validation)?;
    let (white, black) = comparator::decisive(&file);
    let pairs = comparator::measurement_pairs(&white, &black, pairs)?;
    let pair_accuracy = value::pair_accuracy(&params, layout, &file, &pairs)?;
    Ok(ValueEval { scores, pair_accuracy, pairs: pairs.len() })
}

/// Move-predictor figures on a PGN.
#[derive(Clone, Debug, Serialize)]
pub struct MovepredEval {
    /// Per-net scores.
    pub nets: Vec<movepred::NetScores>,
    /// The joint legal-move predictor.
    pub joint: movepred::JointScores,
}

/// The move predictors `model` on the prepared `data`.
pub fn movepred(data: &Path, model: &Model, device: DeviceChoice) -> anyhow::Result<MovepredEval> {
    let params = params(model, ModelKind::Movepred)?;
    let file = DataFile::open(data, Content::Moves, Split::Validation)?;
    let device = device.device()?;
    let indices = movepred::net_indices(&file)?;
    Ok(MovepredEval {
        nets: movepred::evaluate_nets(&params, &device, &file, &indices)?,
        joint: movepred::evaluate_joint(&params, &device, &file)?,
    })
}
