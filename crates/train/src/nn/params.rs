//! Network parameters as flat `f32` buffers, named exactly like the tensors of a
//! [`deepchess_core::Model`] (`{stack}.{i}.weight` `[in, out]` row-major, `{stack}.{i}.bias`).

use std::collections::BTreeMap;

use deepchess_core::{Model, ModelCard, ModelError, ModelKind, StackSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The parameters of one or more stacks.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The stacks, in the order they were created.
    pub stacks: Vec<StackSpec>,
    /// Tensor name → values.
    pub values: BTreeMap<String, Vec<f32>>,
}

impl Params {
    /// Fresh parameters drawn as PyTorch's `nn.Linear` does: weights and biases uniform in
    /// ±1/√inputs, from a seeded generator (same seed, same parameters).
    pub fn init(stacks: Vec<StackSpec>, seed: u64) -> Params {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut values = BTreeMap::new();
        for stack in &stacks {
            for (i, w) in stack.layers.windows(2).enumerate() {
                let bound = 1.0 / (w[0] as f32).sqrt();
                let mut draw = |len: usize| (0..len).map(|_| rng.random_range(-bound..bound)).collect::<Vec<f32>>();
                values.insert(format!("{}.{i}.weight", stack.name), draw(w[0] * w[1]));
                values.insert(format!("{}.{i}.bias", stack.name), draw(w[1]));
            }
        }
        Params { stacks, values }
    }

    /// Parameters of a loaded model (all its stacks).
    pub fn from_model(model: &Model) -> Params {
        let stacks = model.card.stacks.clone();
        let values = stacks
            .iter()
            .flat_map(StackSpec::tensors)
            .map(|(name, _)| {
                let v = model.tensor(&name).expect("a loaded model has every tensor").to_vec();
                (name, v)
            })
            .collect();
        Params { stacks, values }
    }

    /// Adds the stacks of `other` (for example an encoder taken from a Pos2Vec model).
    pub fn extend(&mut self, other: Params) {
        self.stacks.extend(other.stacks);
        self.values.extend(other.values);
    }

    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> &StackSpec {
        self.stacks.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no stack `{name}`"))
    }

    /// Values of tensor `name`.
    pub fn get(&self, name: &str) -> &[f32] {
        self.values.get(name).unwrap_or_else(|| panic!("no tensor `{name}`"))
    }

    /// A model of `kind` made of the stacks `names` (in that order), with `card` metadata
    /// filled in by the caller.
    pub fn to_model(
        &self,
        kind: ModelKind,
        names: &[&str],
        fill: impl FnOnce(&mut ModelCard),
    ) -> Result<Model, ModelError> {
        let stacks: Vec<StackSpec> = names.iter().map(|n| self.stack(n).clone()).collect();
        let tensors = stacks
            .iter()
            .flat_map(StackSpec::tensors)
            .map(|(name, _)| {
                let v = self.get(&name).to_vec();
                (name, v)
            })
            .collect();
        let mut card = ModelCard::new(kind, stacks);
        fill(&mut card);
        Model::new(card, tensors)
    }
}
