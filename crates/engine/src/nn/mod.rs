//! Network inference in plain Rust: the comparator (Pos2Vec encoder + head), the move
//! predictors and the evaluation net, loaded from `--models DIR` or from the defaults
//! embedded in the binary.

mod comparator;
pub mod kernels;
mod movepred;
mod random;
pub mod stack;
mod student;
mod value;

use std::path::Path;

use deepchess_core::{Model, ModelError, ModelKind};

pub use comparator::{Code, Comparator};
pub use movepred::{MovePredictor, PredictorAccumulator};
pub use random::{random_model, random_model_with};
pub use stack::{Precision, Scratch, Stack};
pub use student::{STUDENT_MAX_HIDDEN, Student, StudentCode};
pub use value::{Accumulator, ValueNet};

/// Errors turning model files into networks.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// Loading the files failed (the error names the file, tensor and shape).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A model lacks a stack the engine needs.
    #[error("{kind} model has no stack `{stack}`")]
    MissingStack {
        /// Model kind.
        kind: &'static str,
        /// Stack name.
        stack: String,
    },
    /// A model file holds another kind than expected.
    #[error("{origin}: card says kind `{found}`, expected `{expected}`")]
    WrongKind {
        /// Where the model came from.
        origin: String,
        /// Kind in the card.
        found: &'static str,
        /// Kind expected.
        expected: &'static str,
    },
    /// A model's weights or card cannot be used as they are.
    #[error("{kind} model: {message}")]
    Invalid {
        /// Model kind.
        kind: &'static str,
        /// What is wrong.
        message: String,
    },
    /// No default model of this kind is embedded (only the engine's models are).
    #[error("no default {0} model is embedded in this binary (give a directory with --models)")]
    NotEmbedded(&'static str),
}

/// The networks the engine plays with.
#[derive(Clone, Debug)]
pub struct Networks {
    /// Siamese comparator with its Pos2Vec encoder.
    pub comparator: Comparator,
    /// Move predictors.
    pub movepred: MovePredictor,
    /// Evaluation net.
    pub value: ValueNet,
    /// Student comparator of the comparison search (with its own evaluation net).
    pub student: Student,
}

/// The kinds of model the engine loads (the standalone Pos2Vec model is not needed: the
/// comparator carries its own, fine-tuned encoder). A `--models` directory without a
/// student gets the embedded one.
pub const ENGINE_MODELS: [ModelKind; 4] =
    [ModelKind::Comparator, ModelKind::Movepred, ModelKind::Value, ModelKind::Student];

/// The default models, embedded at compile time from `models/`.
mod embedded {
    pub const COMPARATOR: (&[u8], &[u8]) = (
        include_bytes!("../../../../models/comparator.json"),
        include_bytes!("../../../../models/comparator.safetensors"),
    );
    pub const MOVEPRED: (&[u8], &[u8]) =
        (include_bytes!("../../../../models/movepred.json"), include_bytes!("../../../../models/movepred.safetensors"));
    pub const VALUE: (&[u8], &[u8]) =
        (include_bytes!("../../../../models/value.json"), include_bytes!("../../../../models/value.safetensors"));
    pub const STUDENT: (&[u8], &[u8]) =
        (include_bytes!("../../../../models/student.json"), include_bytes!("../../../../models/student.safetensors"));
}

/// The embedded default model of `kind` (one of [`ENGINE_MODELS`]), checked.
pub fn embedded_model(kind: ModelKind) -> Result<Model, NetworkError> {
    let (card, weights) = match kind {
        ModelKind::Comparator => embedded::COMPARATOR,
        ModelKind::Movepred => embedded::MOVEPRED,
        ModelKind::Value => embedded::VALUE,
        ModelKind::Student => embedded::STUDENT,
        other => return Err(NetworkError::NotEmbedded(other.name())),
    };
    let origin = format!("embedded default models/{}", kind.name());
    let model = Model::from_bytes(card, weights, &origin)?;
    check_kind(&model, kind, &origin)?;
    Ok(model)
}

impl Networks {
    /// The default networks embedded in the binary.
    pub fn embedded() -> Result<Networks, NetworkError> {
        Networks::from_models(
            &embedded_model(ModelKind::Comparator)?,
            &embedded_model(ModelKind::Movepred)?,
            &embedded_model(ModelKind::Value)?,
            &embedded_model(ModelKind::Student)?,
        )
    }

    /// Loads `comparator`, `movepred`, `value` and `student` from `dir` (the embedded
    /// student when `dir` has none).
    pub fn load(dir: &Path) -> Result<Networks, NetworkError> {
        let student = if dir.join(format!("{}.json", ModelKind::Student.name())).exists() {
            Model::load(dir, ModelKind::Student)?
        } else {
            embedded_model(ModelKind::Student)?
        };
        Networks::from_models(
            &Model::load(dir, ModelKind::Comparator)?,
            &Model::load(dir, ModelKind::Movepred)?,
            &Model::load(dir, ModelKind::Value)?,
            &student,
        )
    }

    /// The networks in `dir`, or the embedded defaults for `None`.
    pub fn load_or_embedded(dir: Option<&Path>) -> Result<Networks, NetworkError> {
        dir.map_or_else(Networks::embedded, Networks::load)
    }

    /// Builds the networks from loaded models.
    pub fn from_models(
        comparator: &Model,
        movepred: &Model,
        value: &Model,
        student: &Model,
    ) -> Result<Networks, NetworkError> {
        check_kind(comparator, ModelKind::Comparator, "comparator model")?;
        check_kind(student, ModelKind::Student, "student model")?;
        check_kind(movepred, ModelKind::Movepred, "movepred model")?;
        check_kind(value, ModelKind::Value, "value model")?;
        Ok(Networks {
            comparator: Comparator::from_model(comparator, Precision::Bf16Dense)?,
            movepred: MovePredictor::from_model(movepred)?,
            value: ValueNet::from_model(value)?,
            student: Student::from_model(student)?,
        })
    }

    /// Randomly initialised networks of the standard shapes (seeded), for tests.
    pub fn random(seed: u64) -> Networks {
        Networks::from_models(
            &random_model(ModelKind::Comparator, seed),
            &random_model(ModelKind::Movepred, seed.wrapping_add(1)),
            &random_model(ModelKind::Value, seed.wrapping_add(2)),
            &random_model(ModelKind::Student, seed.wrapping_add(3)),
        )
        .expect("standard shapes are valid")
    }
}

fn check_kind(model: &Model, kind: ModelKind, origin: &str) -> Result<(), NetworkError> {
    if model.card.kind == kind {
        Ok(())
    } else {
        Err(NetworkError::WrongKind {
            origin: origin.to_string(),
            found: model.card.kind.name(),
            expected: kind.name(),
        })
    }
}

/// Numerically stable softmax in place.
pub fn softmax(values: &mut [f32]) {
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in values.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    values.iter_mut().for_each(|v| *v /= sum);
}

#[cfg(test)]
mod tests;
