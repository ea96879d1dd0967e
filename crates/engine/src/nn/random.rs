//! Seeded random initialisation of models of the standard shapes.

use std::collections::BTreeMap;

use deepchess_core::{Model, ModelCard, ModelKind, StackSpec};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// A model of `kind` with the standard stacks, weights drawn uniformly from the
/// Glorot range `±sqrt(6 / (in + out))` and biases from a tenth of it, from `seed`.
pub fn random_model(kind: ModelKind, seed: u64) -> Model {
    random_model_with(kind, kind.default_stacks(), seed)
}

/// A randomly initialised model of `kind` with the given stacks (other hidden widths).
pub fn random_model_with(kind: ModelKind, stacks: Vec<StackSpec>, seed: u64) -> Model {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut tensors = BTreeMap::new();
    for stack in &stacks {
        for (i, pair) in stack.layers.windows(2).enumerate() {
            let limit = (6.0 / (pair[0] + pair[1]) as f32).sqrt();
            let weight = (0..pair[0] * pair[1]).map(|_| rng.random_range(-limit..limit)).collect();
            let bias = (0..pair[1]).map(|_| rng.random_range(-limit..limit) * 0.1).collect();
            tensors.insert(format!("{}.{i}.weight", stack.name), weight);
            tensors.insert(format!("{}.{i}.bias", stack.name), bias);
        }
    }
    let mut card = ModelCard::new(kind, stacks);
    card.output = serde_json::json!({ "note": format!("random initialisation, seed {seed}; not trained") });
    if matches!(kind, ModelKind::Value | ModelKind::Student) {
        card.output[deepchess_core::arch::VALUE_CENTIPAWNS_PER_UNIT] =
            serde_json::json!(deepchess_core::arch::VALUE_CP_PER_LOGIT);
    }
    Model::new(card, tensors).expect("stacks valid for the kind, tensors made to match")
}
