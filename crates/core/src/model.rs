//! Model files: weights in safetensors (f32) plus a JSON model card.
//!
//! A model `NAME` is the pair `NAME.safetensors` + `NAME.json`. The card records the
//! architecture (the [`StackSpec`]s and every tensor's shape), the data it was trained
//! on, hyper-parameters, epochs, validation metrics, the git commit of the build that
//! trained it and the SHA-256 of the weights file.
//!
//! Loading checks, and names the file and tensor of any failure: the card's tensor list
//! against its architecture, the file's tensors against the card (none missing, none
//! extra, every shape and type), the file's SHA-256 against the card's (a card without one,
//! from before it was recorded, is accepted), and that every weight is finite.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::arch::{ModelKind, StackSpec, VALUE_CENTIPAWNS_PER_UNIT, VALUE_INPUT_LAYOUT, ValueInputLayout};
use crate::atomic::write_atomic;

/// Value of [`ModelCard::format`].
pub const CARD_FORMAT: &str = "deepchess-model";
/// Current card format version.
pub const CARD_VERSION: u32 = 1;

/// A tensor's name and shape as listed in the card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorShape {
    /// Tensor name.
    pub name: String,
    /// Shape.
    pub shape: Vec<usize>,
}

/// The JSON model card.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    /// Always [`CARD_FORMAT`].
    pub format: String,
    /// Card format version.
    pub format_version: u32,
    /// What the model is.
    pub kind: ModelKind,
    /// The architecture.
    pub stacks: Vec<StackSpec>,
    /// Every tensor with its shape (derived from `stacks`, listed for readers).
    pub tensors: Vec<TensorShape>,
    /// How to read the outputs (for example the value net's centipawn scale).
    #[serde(default)]
    pub output: serde_json::Value,
    /// Training data: source files and counts.
    #[serde(default)]
    pub data: serde_json::Value,
    /// Hyper-parameters of the training run.
    #[serde(default)]
    pub hyperparameters: serde_json::Value,
    /// Epochs trained.
    #[serde(default)]
    pub epochs: u32,
    /// Validation metrics.
    #[serde(default)]
    pub metrics: serde_json::Value,
    /// Git commit of the build that trained it ("unknown" when built outside a checkout).
    #[serde(default)]
    pub git_commit: Option<String>,
    /// SHA-256 of the weights file (lower-case hex, as `sha256sum` prints it), set by
    /// [`Model::save`] and checked at load; absent from cards written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_sha256: Option<String>,
}

impl ModelCard {
    /// A card for `stacks` with empty training metadata.
    pub fn new(kind: ModelKind, stacks: Vec<StackSpec>) -> ModelCard {
        let tensors =
            stacks.iter().flat_map(StackSpec::tensors).map(|(name, shape)| TensorShape { name, shape }).collect();
        ModelCard {
            format: CARD_FORMAT.into(),
            format_version: CARD_VERSION,
            kind,
            stacks,
            tensors,
            output: serde_json::Value::Null,
            data: serde_json::Value::Null,
            hyperparameters: serde_json::Value::Null,
            epochs: 0,
            metrics: serde_json::Value::Null,
            git_commit: None,
            weights_sha256: None,
        }
    }

    /// The evaluation net's scale, the centipawns of one unit of its output logit
    /// (`output.`[`VALUE_CENTIPAWNS_PER_UNIT`]); `None` when the card has no finite positive one.
    pub fn centipawns_per_unit(&self) -> Option<f64> {
        self.output
            .get(VALUE_CENTIPAWNS_PER_UNIT)
            .and_then(serde_json::Value::as_f64)
            .filter(|k| k.is_finite() && *k > 0.0)
    }

    /// The evaluation net's input layout (`output.`[`VALUE_INPUT_LAYOUT`]): plain when the
    /// card does not name one; an error naming the value when it names none known.
    pub fn value_input_layout(&self) -> Result<ValueInputLayout, String> {
        match self.output.get(VALUE_INPUT_LAYOUT) {
            None => Ok(ValueInputLayout::Plain),
            Some(value) => value.as_str().and_then(ValueInputLayout::from_name).ok_or_else(|| {
                let known: Vec<&str> = ValueInputLayout::ALL.iter().map(|l| l.name()).collect();
                format!("output.{VALUE_INPUT_LAYOUT} is {value}; expected one of {}", known.join(", "))
            }),
        }
    }
}

/// SHA-256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Errors loading or saving a model; each names the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// File could not be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Card is not valid JSON of the expected form.
    #[error("{file}: invalid model card: {reason}")]
    Card {
        /// The card file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// Weights file is not valid safetensors.
    #[error("{file}: invalid safetensors: {reason}")]
    Weights {
        /// The weights file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A tensor the architecture needs is absent.
    #[error("{file}: missing tensor `{name}` (expected shape {expected:?})")]
    MissingTensor {
        /// The weights file.
        file: String,
        /// Tensor name.
        name: String,
        /// Shape the architecture requires.
        expected: Vec<usize>,
    },
    /// The weights file holds a tensor the card does not list.
    #[error("{file}: tensor `{name}` (shape {shape:?}) is not in the model card")]
    UnexpectedTensor {
        /// The weights file.
        file: String,
        /// Tensor name.
        name: String,
        /// Its shape in the file.
        shape: Vec<usize>,
    },
    /// The weights file's SHA-256 is not the one the card records.
    #[error(
        "{file}: SHA-256 {found} does not match the model card's {expected}: the weights file is damaged or belongs to another card"
    )]
    Checksum {
        /// The weights file.
        file: String,
        /// SHA-256 recorded in the card.
        expected: String,
        /// SHA-256 of the file.
        found: String,
    },
    /// A weight is NaN or infinite.
    #[error("{file}: tensor `{name}` holds {value} at index {index}: a model's weights must be finite")]
    NonFinite {
        /// The weights file.
        file: String,
        /// Tensor name.
        name: String,
        /// Index of the first non-finite value (row-major).
        index: usize,
        /// The value.
        value: f32,
    },
    /// A tensor has another shape or type than the architecture needs.
    #[error("{file}: tensor `{name}` has shape {found:?} {dtype}, expected {expected:?} F32")]
    WrongShape {
        /// The weights file.
        file: String,
        /// Tensor name.
        name: String,
        /// Shape the architecture requires.
        expected: Vec<usize>,
        /// Shape in the file.
        found: Vec<usize>,
        /// Data type in the file.
        dtype: String,
    },
}

/// A loaded model: its card and its tensors (f32, row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The card.
    pub card: ModelCard,
    tensors: BTreeMap<String, Vec<f32>>,
}

/// One fully connected layer's parameters, borrowed from a [`Model`].
#[derive(Clone, Copy, Debug)]
pub struct LayerRef<'a> {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// Weights `[inputs, outputs]`, row-major.
    pub weight: &'a [f32],
    /// Biases `[outputs]`.
    pub bias: &'a [f32],
}

impl Model {
    /// Builds a model from a card and tensors, checking every tensor the card's stacks need.
    pub fn new(card: ModelCard, tensors: BTreeMap<String, Vec<f32>>) -> Result<Model, ModelError> {
        let file = format!("{} model", card.kind.name());
        check_card(&card, &file)?;
        for (name, shape) in card.stacks.iter().flat_map(StackSpec::tensors) {
            match tensors.get(&name) {
                None => return Err(ModelError::MissingTensor { file, name, expected: shape }),
                Some(v) if v.len() != shape.iter().product::<usize>() => {
                    return Err(ModelError::WrongShape {
                        file,
                        name,
                        expected: shape,
                        found: vec![v.len()],
                        dtype: "F32".into(),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(Model { card, tensors })
    }

    /// Parses a card and a safetensors buffer. `origin` names them in errors (a path or
    /// "embedded default"). Checks, in order: the card (format, architecture, its tensor
    /// list), the file's tensors against the card's list (missing, extra, shape, type), the
    /// SHA-256 of `weights` against the card's, and that every value is finite.
    pub fn from_bytes(card_json: &[u8], weights: &[u8], origin: &str) -> Result<Model, ModelError> {
        let card_file = format!("{origin}.json");
        let weights_file = format!("{origin}.safetensors");
        let card: ModelCard = serde_json::from_slice(card_json)
            .map_err(|e| ModelError::Card { file: card_file.clone(), reason: e.to_string() })?;
        check_card(&card, &card_file)?;
        let st = SafeTensors::deserialize(weights)
            .map_err(|e| ModelError::Weights { file: weights_file.clone(), reason: e.to_string() })?;
        for (name, view) in st.tensors() {
            if !card.tensors.iter().any(|t| t.name == name) {
                return Err(ModelError::UnexpectedTensor { file: weights_file, name, shape: view.shape().to_vec() });
            }
        }
        let mut views = Vec::with_capacity(card.tensors.len());
        for TensorShape { name, shape } in &card.tensors {
            let view = st.tensor(name).map_err(|_| ModelError::MissingTensor {
                file: weights_file.clone(),
                name: name.clone(),
                expected: shape.clone(),
            })?;
            if view.dtype() != Dtype::F32 || view.shape() != shape.as_slice() {
                return Err(ModelError::WrongShape {
                    file: weights_file,
                    name: name.clone(),
                    expected: shape.clone(),
                    found: view.shape().to_vec(),
                    dtype: format!("{:?}", view.dtype()),
                });
            }
            views.push((name, view));
        }
        if let Some(expected) = &card.weights_sha256 {
            let found = sha256_hex(weights);
            if !found.eq_ignore_ascii_case(expected.trim()) {
                return Err(ModelError::Checksum { file: weights_file, expected: expected.clone(), found });
            }
        }
        let mut tensors = BTreeMap::new();
        for (name, view) in views {
            let values: Vec<f32> =
                view.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
            if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(ModelError::NonFinite { file: weights_file, name: name.clone(), index, value });
            }
            tensors.insert(name.clone(), values);
        }
        Ok(Model { card, tensors })
    }

    /// Loads `dir/NAME.json` and `dir/NAME.safetensors` where NAME is the kind's name.
    ///
    /// ```
    /// use deepchess_core::{Model, ModelKind};
    /// let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    /// let value = Model::load(&models, ModelKind::Value)?;
    /// assert_eq!(value.card.kind, ModelKind::Value);
    /// // the default net's four king buckets of 768 inputs each
    /// assert_eq!(value.layer("ft", 0).unwrap().inputs, 4 * 768);
    /// // a missing file is an error that names it
    /// let err = Model::load(std::path::Path::new("/nonexistent"), ModelKind::Value).unwrap_err();
    /// assert!(err.to_string().contains("value.json"));
    /// # Ok::<(), deepchess_core::ModelError>(())
    /// ```
    pub fn load(dir: &Path, kind: ModelKind) -> Result<Model, ModelError> {
        let base = dir.join(kind.name());
        let read = |ext: &str| {
            let path = base.with_extension(ext);
            std::fs::read(&path).map_err(|source| ModelError::Io { file: path.display().to_string(), source })
        };
        let model = Model::from_bytes(&read("json")?, &read("safetensors")?, &base.display().to_string())?;
        if model.card.kind != kind {
            return Err(ModelError::Card {
                file: base.with_extension("json").display().to_string(),
                reason: format!("card says kind `{}`, expected `{}`", model.card.kind.name(), kind.name()),
            });
        }
        Ok(model)
    }

    /// Serialises the weights to safetensors bytes.
    pub fn weights_bytes(&self) -> Result<Vec<u8>, ModelError> {
        let bytes: BTreeMap<&str, (Vec<usize>, Vec<u8>)> = self
            .card
            .stacks
            .iter()
            .flat_map(StackSpec::tensors)
            .map(|(name, shape)| {
                let (key, values) = self.tensors.get_key_value(&name).expect("checked on construction");
                (key.as_str(), (shape, values.iter().flat_map(|v| v.to_le_bytes()).collect()))
            })
            .collect();
        let views = bytes.iter().map(|(name, (shape, data))| {
            (*name, TensorView::new(Dtype::F32, shape.clone(), data).expect("shape matches data"))
        });
        safetensors::serialize(views, None)
            .map_err(|e| ModelError::Weights { file: self.card.kind.name().into(), reason: e.to_string() })
    }

    /// Writes `dir/NAME.safetensors` and `dir/NAME.json` atomically (NAME = kind name),
    /// recording the weights' SHA-256 in the card (here and in the file).
    pub fn save(&mut self, dir: &Path) -> Result<(), ModelError> {
        let base = dir.join(self.card.kind.name());
        let io = |path: &Path| {
            let file = path.display().to_string();
            move |source| ModelError::Io { file, source }
        };
        let weights = base.with_extension("safetensors");
        let bytes = self.weights_bytes()?;
        self.card.weights_sha256 = Some(sha256_hex(&bytes));
        write_atomic(&weights, &bytes).map_err(io(&weights))?;
        let card = base.with_extension("json");
        let json = serde_json::to_vec_pretty(&self.card).expect("card serialises");
        write_atomic(&card, &json).map_err(io(&card))
    }

    /// A tensor by name.
    pub fn tensor(&self, name: &str) -> Option<&[f32]> {
        self.tensors.get(name).map(Vec::as_slice)
    }

    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> Option<&StackSpec> {
        self.card.stacks.iter().find(|s| s.name == name)
    }

    /// Layer `index` of stack `name`.
    pub fn layer(&self, name: &str, index: usize) -> Option<LayerRef<'_>> {
        let stack = self.stack(name)?;
        let (inputs, outputs) = (*stack.layers.get(index)?, *stack.layers.get(index + 1)?);
        Some(LayerRef {
            inputs,
            outputs,
            weight: self.tensor(&format!("{name}.{index}.weight"))?,
            bias: self.tensor(&format!("{name}.{index}.bias"))?,
        })
    }

    /// All layers of stack `name`, input first.
    pub fn layers(&self, name: &str) -> Option<Vec<LayerRef<'_>>> {
        let n = self.stack(name)?.layers.len() - 1;
        (0..n).map(|i| self.layer(name, i)).collect()
    }
}

fn check_card(card: &ModelCard, file: &str) -> Result<(), ModelError> {
    let err = |reason: String| ModelError::Card { file: file.to_string(), reason };
    if card.format != CARD_FORMAT || card.format_version != CARD_VERSION {
        return Err(err(format!(
            "format `{}` version {}, expected `{CARD_FORMAT}` version {CARD_VERSION}",
            card.format, card.format_version
        )));
    }
    card.kind.check_stacks(&card.stacks).map_err(err)?;
    let needed: Vec<(String, Vec<usize>)> = card.stacks.iter().flat_map(StackSpec::tensors).collect();
    let listed: Vec<(String, Vec<usize>)> = card.tensors.iter().map(|t| (t.name.clone(), t.shape.clone())).collect();
    if listed != needed {
        let differ = needed.iter().zip(&listed).find(|(a, b)| a != b);
        let reason = match differ {
            Some(((name, shape), (lname, lshape))) => format!(
                "its tensor list does not match its stacks: it lists `{lname}` {lshape:?} where `{name}` {shape:?} is expected"
            ),
            None => format!(
                "its tensor list does not match its stacks: it lists {} tensors, the stacks need {}",
                listed.len(),
                needed.len()
            ),
        };
        return Err(err(reason));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Activation;

    fn tiny() -> Model {
        let stacks = vec![StackSpec::new("encoder", &[773, 4, 1], Activation::Relu)];
        let card = ModelCard::new(ModelKind::Pos2vec, stacks.clone());
        let tensors = stacks[0]
            .tensors()
            .into_iter()
            .map(|(n, s)| {
                let len = s.iter().product::<usize>();
                (n, (0..len).map(|i| i as f32 * 0.001 - 0.5).collect())
            })
            .collect();
        Model::new(card, tensors).unwrap()
    }

    #[test]
    fn save_load_round_trip_is_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        let mut model = tiny();
        model.save(dir.path()).unwrap();
        let back = Model::load(dir.path(), ModelKind::Pos2vec).unwrap();
        assert_eq!(back, model);
        let weights = std::fs::read(dir.path().join("pos2vec.safetensors")).unwrap();
        assert_eq!(back.card.weights_sha256, Some(sha256_hex(&weights)), "the card records the file's SHA-256");
        let layer = back.layer("encoder", 1).unwrap();
        assert_eq!((layer.inputs, layer.outputs, layer.weight.len()), (4, 1, 4));
    }

    #[test]
    fn missing_or_misshapen_tensors_are_named() {
        let model = tiny();
        let weights = model.weights_bytes().unwrap();
        // a card for another width: the file's tensors do not have its shapes
        let card = ModelCard::new(ModelKind::Pos2vec, vec![StackSpec::new("encoder", &[773, 8, 1], Activation::Relu)]);
        let json = serde_json::to_vec(&card).unwrap();
        let err = Model::from_bytes(&json, &weights, "m/pos2vec").unwrap_err().to_string();
        assert!(err.contains("encoder.0.weight") && err.contains("[773, 8]") && err.contains("[773, 4]"), "{err}");
        assert!(err.contains("m/pos2vec.safetensors"), "{err}");

        let st = SafeTensors::deserialize(&weights).unwrap();
        let partial = safetensors::serialize(st.tensors().into_iter().filter(|(n, _)| n != "encoder.1.bias"), None);
        let json = serde_json::to_vec(&model.card).unwrap();
        let err = Model::from_bytes(&json, &partial.unwrap(), "m/pos2vec").unwrap_err().to_string();
        assert!(err.contains("missing tensor `encoder.1.bias`") && err.contains("[1]"), "{err}");
        let mut tensors = model.tensors.clone();
        tensors.remove("encoder.0.bias");
        let err = Model::new(model.card.clone(), tensors).unwrap_err().to_string();
        assert!(err.contains("missing tensor `encoder.0.bias`"), "{err}");

        let err = Model::from_bytes(b"{", &weights, "m/pos2vec").unwrap_err().to_string();
        assert!(err.contains("m/pos2vec.json"), "{err}");
        let err = Model::from_bytes(&json, &weights[..weights.len() - 3], "m/pos2vec").unwrap_err().to_string();
        assert!(err.contains("m/pos2vec.safetensors"), "{err}");
    }

    /// The tiny model saved: its card and weights bytes as written.
    fn saved() -> (Vec<u8>, Vec<u8>, Model) {
        let dir = tempfile::tempdir().unwrap();
        let mut model = tiny();
        model.save(dir.path()).unwrap();
        let card = std::fs::read(dir.path().join("pos2vec.json")).unwrap();
        let weights = std::fs::read(dir.path().join("pos2vec.safetensors")).unwrap();
        (card, weights, model)
    }

    #[test]
    fn flipped_bits_fail_the_checksum_and_old_cards_are_accepted() {
        let (card, weights, model) = saved();
        let mut flipped = weights.clone();
        let at = flipped.len() - 100; // inside the data, past the header
        flipped[at] ^= 0x04;
        let err = Model::from_bytes(&card, &flipped, "m/pos2vec").unwrap_err().to_string();
        assert!(err.contains("m/pos2vec.safetensors") && err.contains("SHA-256") && err.contains("damaged"), "{err}");
        // a card from before the checksum was recorded: loaded as it is
        let mut old: serde_json::Value = serde_json::from_slice(&card).unwrap();
        old.as_object_mut().unwrap().remove("weights_sha256");
        let old = serde_json::to_vec(&old).unwrap();
        let back = Model::from_bytes(&old, &weights, "m/pos2vec").unwrap();
        assert_eq!(back.tensors, model.tensors);
        assert_eq!(back.card.weights_sha256, None);
    }

    #[test]
    fn non_finite_weights_are_refused_naming_the_tensor() {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut tensors = tiny().tensors;
            tensors.get_mut("encoder.1.weight").unwrap()[2] = bad;
            let mut model = Model::new(tiny().card, tensors).unwrap();
            let dir = tempfile::tempdir().unwrap();
            model.save(dir.path()).unwrap(); // the checksum matches: only the values are wrong
            let err = Model::load(dir.path(), ModelKind::Pos2vec).unwrap_err().to_string();
            assert!(err.contains("pos2vec.safetensors") && err.contains("`encoder.1.weight`"), "{err}");
            assert!(err.contains("index 2") && err.contains(&bad.to_string()), "{err}");
        }
    }

    #[test]
    fn the_card_s_tensor_list_must_match_its_stacks_and_the_file() {
        let (card, weights, _) = saved();
        let mut json: serde_json::Value = serde_json::from_slice(&card).unwrap();
        json["tensors"][1]["shape"] = serde_json::json!([5]);
        let err = Model::from_bytes(&serde_json::to_vec(&json).unwrap(), &weights, "m/pos2vec").unwrap_err();
        let err = err.to_string();
        assert!(err.contains("m/pos2vec.json") && err.contains("`encoder.0.bias` [5]"), "{err}");
        json["tensors"].as_array_mut().unwrap().pop();
        let err = Model::from_bytes(&serde_json::to_vec(&json).unwrap(), &weights, "m/pos2vec").unwrap_err();
        assert!(err.to_string().contains("tensor list"), "{err}");
        // a file with a tensor the card does not list
        let st = SafeTensors::deserialize(&weights).unwrap();
        let extra_data = vec![0u8; 8];
        let extra = TensorView::new(Dtype::F32, vec![2], &extra_data).unwrap();
        let tensors = st.tensors().into_iter().chain([("stray".to_string(), extra)]);
        let mut json: serde_json::Value = serde_json::from_slice(&card).unwrap();
        json.as_object_mut().unwrap().remove("weights_sha256");
        let with_extra = safetensors::serialize(tensors, None).unwrap();
        let err = Model::from_bytes(&serde_json::to_vec(&json).unwrap(), &with_extra, "m/pos2vec").unwrap_err();
        assert!(err.to_string().contains("m/pos2vec.safetensors: tensor `stray` (shape [2]) is not in"), "{err}");
    }

    /// Damaged model files, seeded: flipped bits, truncation, edited cards, with and without
    /// a recorded checksum. Loading never panics; it fails naming the file, or (where the
    /// damage left the card equivalent or, without a checksum, hit the weights) it loads
    /// finite weights only, and with a checksum exactly the saved ones.
    #[test]
    fn damaged_model_files_fail_cleanly() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let (card, weights, model) = saved();
        let mut old: serde_json::Value = serde_json::from_slice(&card).unwrap();
        old.as_object_mut().unwrap().remove("weights_sha256");
        let old_card = serde_json::to_vec_pretty(&old).unwrap();
        let config = Config { cases: 400, failure_persistence: None, ..Config::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[13; 32]));
        let strategy =
            (0..4u8, any::<bool>(), proptest::collection::vec((any::<usize>(), 0..8u32), 1..50), any::<usize>());
        let (loaded, failed) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        runner
            .run(&strategy, |(how, with_checksum, flips, cut)| {
                let (mut c, mut w) = (if with_checksum { card.clone() } else { old_card.clone() }, weights.clone());
                match how {
                    0 | 1 => {
                        // flip bits in the weights (how 1: only in the header)
                        let span = if how == 1 { 8 + 200 } else { w.len() };
                        for &(at, bit) in &flips {
                            w[at % span] ^= 1 << bit;
                        }
                    }
                    2 => w.truncate(cut % w.len()),
                    _ => {
                        for &(at, bit) in &flips {
                            let i = at % c.len();
                            c[i] ^= 1 << bit;
                        }
                    }
                }
                match Model::from_bytes(&c, &w, "m/pos2vec") {
                    Err(e) => {
                        failed.set(failed.get() + 1);
                        let e = e.to_string();
                        prop_assert!(
                            e.starts_with("m/pos2vec.json") || e.starts_with("m/pos2vec.safetensors"),
                            "{}",
                            e
                        );
                    }
                    Ok(back) => {
                        loaded.set(loaded.get() + 1);
                        prop_assert!(back.tensors.values().flatten().all(|v| v.is_finite()));
                        if with_checksum || how == 3 {
                            prop_assert_eq!(&back.tensors, &model.tensors);
                        }
                    }
                }
                Ok(())
            })
            .unwrap();
        let (loaded, failed) = (loaded.get(), failed.get());
        assert!(failed > 200 && loaded + failed == 400, "{failed} failed, {loaded} loaded");
    }
}
