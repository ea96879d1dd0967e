//! The policy net: one logit per move, the priors of the MCTS.
//!
//! Architecture (see [`deepchess_core::arch::POLICY_MOVES_STACK`]): a feature transformer
//! `ft` `[768, H]` over the side to move's perspective features
//! ([`perspective_feature`]), SCReLU (`clamp(x, 0, 1)²`) after it, then one linear layer
//! `moves` `[H, 4096]` whose output [`policy_index`] (from-square × 64 + destination, both
//! as the side to move sees the board) is the logit of a move.
//!
//! The accumulator is computed from scratch for each position (some 30 rows of `H` floats
//! added to the biases, once per node); the move layer is stored transposed, move-major
//! `[4096][H]`, so that each legal move's logit is one contiguous dot product and the
//! 4096 − n illegal outputs are never computed.

use deepchess_core::arch::{POLICY_FT_STACK, POLICY_MOVES, POLICY_MOVES_STACK};
use deepchess_core::features::{MAX_ACTIVE, PERSPECTIVE_FEATURES, perspective_feature};
use deepchess_core::move_label::policy_index;
use deepchess_core::{Model, SparseFeatures};
use shakmaty::{Chess, Move, Position};

use super::NetworkError;
use super::kernels::{dot, update_rows};

/// The policy net with f32 weights.
#[derive(Clone, Debug)]
pub struct PolicyNet {
    /// Width H of the feature transformer.
    width: usize,
    /// `[768][H]` row-major: row `f` is perspective feature `f`'s contribution.
    ft_weight: Vec<f32>,
    /// `[H]`.
    ft_bias: Vec<f32>,
    /// `[4096][H]`, move-major: row `i` holds move index `i`'s weights.
    move_weight: Vec<f32>,
    /// `[4096]`.
    move_bias: Vec<f32>,
}

/// Reusable buffers of [`PolicyNet::logits`] (the hidden layer), so that a call does not
/// allocate once they have grown to the net's width.
#[derive(Clone, Debug, Default)]
pub struct PolicyScratch {
    hidden: Vec<f32>,
}

impl PolicyNet {
    /// Reads the stacks `ft` (`[768, H]`) and `moves` (`[H, 4096]`, one layer each) of a
    /// policy model, transposing the move layer.
    pub fn from_model(model: &Model) -> Result<PolicyNet, NetworkError> {
        let invalid = |message: String| NetworkError::Invalid { kind: "policy", message };
        let one_layer = |stack: &str| {
            let layers = model
                .layers(stack)
                .ok_or_else(|| NetworkError::MissingStack { kind: "policy", stack: stack.to_string() })?;
            match layers.as_slice() {
                [layer] => Ok(*layer),
                _ => Err(invalid(format!("stack `{stack}` has {} layers, expected 1", layers.len()))),
            }
        };
        let ft = one_layer(POLICY_FT_STACK)?;
        let moves = one_layer(POLICY_MOVES_STACK)?;
        let width = ft.outputs;
        if ft.inputs != PERSPECTIVE_FEATURES || width == 0 || moves.inputs != width || moves.outputs != POLICY_MOVES {
            return Err(invalid(format!(
                "layers {POLICY_FT_STACK} [{}, {}] and {POLICY_MOVES_STACK} [{}, {}]; expected [{PERSPECTIVE_FEATURES}, H] and [H, {POLICY_MOVES}]",
                ft.inputs, ft.outputs, moves.inputs, moves.outputs
            )));
        }
        let tensors = [ft.weight, ft.bias, moves.weight, moves.bias];
        if let Some(bad) = tensors.iter().flat_map(|t| t.iter()).find(|w| !w.is_finite()) {
            return Err(invalid(format!("a weight is {bad}")));
        }
        let move_weight =
            (0..POLICY_MOVES).flat_map(|m| (0..width).map(move |j| moves.weight[j * POLICY_MOVES + m])).collect();
        Ok(PolicyNet {
            width,
            ft_weight: ft.weight.to_vec(),
            ft_bias: ft.bias.to_vec(),
            move_weight,
            move_bias: moves.bias.to_vec(),
        })
    }

    /// Width H of the feature transformer.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Writes the logit of `moves[k]`, moves of `position` (no drops), to `out[k]`
    /// (`out` at least as long as `moves`). Moves with one [`policy_index`] (promotions to
    /// different pieces) get one logit.
    pub fn logits(&self, position: &Chess, moves: &[Move], out: &mut [f32], scratch: &mut PolicyScratch) {
        debug_assert!(out.len() >= moves.len());
        let turn = position.turn();
        let hidden = self.hidden(position, scratch);
        for (logit, m) in out.iter_mut().zip(moves) {
            let index = policy_index(m, turn).expect("standard chess has no drops");
            let row = &self.move_weight[index * self.width..][..self.width];
            *logit = self.move_bias[index] + dot(hidden, row);
        }
    }

    /// SCReLU of the feature transformer's outputs for `position`, in `scratch`.
    fn hidden<'a>(&self, position: &Chess, scratch: &'a mut PolicyScratch) -> &'a [f32] {
        let features = SparseFeatures::from_position(position);
        let mut rows = [0u16; MAX_ACTIVE];
        let mut n = 0;
        for &f in features.as_slice().iter().filter(|&&f| usize::from(f) < PERSPECTIVE_FEATURES) {
            rows[n] = perspective_feature(f, position.turn());
            n += 1;
        }
        let hidden = &mut scratch.hidden;
        hidden.clear();
        hidden.extend_from_slice(&self.ft_bias);
        update_rows(hidden, &self.ft_weight, &rows[..n], &[]);
        for x in hidden.iter_mut() {
            let clipped = x.clamp(0.0, 1.0);
            *x = clipped * clipped;
        }
        hidden
    }
}

#[cfg(test)]
mod tests {
    use deepchess_core::ModelKind;
    use deepchess_core::arch::StackSpec;

    use super::*;
    use crate::nn::{random_model, random_model_with};
    use crate::position_history::Game;

    /// The logit of `m` straight from the model's tensors, in f64.
    fn naive_logit(model: &Model, position: &Chess, m: &Move) -> f64 {
        let ft = model.layer(POLICY_FT_STACK, 0).unwrap();
        let moves = model.layer(POLICY_MOVES_STACK, 0).unwrap();
        let width = ft.outputs;
        let mut acc: Vec<f64> = ft.bias.iter().map(|&b| f64::from(b)).collect();
        for &f in SparseFeatures::from_position(position).as_slice() {
            if usize::from(f) < PERSPECTIVE_FEATURES {
                let row = usize::from(perspective_feature(f, position.turn()));
                for (j, a) in acc.iter_mut().enumerate() {
                    *a += f64::from(ft.weight[row * width + j]);
                }
            }
        }
        let index = policy_index(m, position.turn()).unwrap();
        let hidden = acc.iter().map(|a| a.clamp(0.0, 1.0).powi(2));
        f64::from(moves.bias[index])
            + hidden.enumerate().map(|(j, h)| h * f64::from(moves.weight[j * POLICY_MOVES + index])).sum::<f64>()
    }

    #[test]
    fn logits_are_the_models_computed_naively() {
        // Small weights keep the accumulators inside SCReLU's curved part, larger ones
        // push many to its flat ends: both are covered.
        for (seed, model) in [(3, random_model(ModelKind::Policy, 3)), (4, scaled(random_model(ModelKind::Policy, 4)))]
        {
            let net = PolicyNet::from_model(&model).unwrap();
            let mut scratch = PolicyScratch::default();
            for fen in [
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
                "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
                "r3k3/1P6/8/8/8/8/8/R3K2R w KQq - 0 1",
                "8/8/8/8/8/k7/6p1/K7 b - - 0 1",
            ] {
                let position = Game::from_uci(Some(fen), &[]).unwrap().position().clone();
                let moves = position.legal_moves();
                let mut out = vec![0.0; moves.len()];
                net.logits(&position, &moves, &mut out, &mut scratch);
                for (m, &got) in moves.iter().zip(&out) {
                    let expected = naive_logit(&model, &position, m);
                    assert!((f64::from(got) - expected).abs() < 1e-4, "seed {seed}, {fen} {m}: {got} vs {expected}");
                }
            }
        }
    }

    /// `model` with every feature-transformer weight × 8.
    fn scaled(model: Model) -> Model {
        let mut tensors: std::collections::BTreeMap<String, Vec<f32>> = model
            .card
            .stacks
            .iter()
            .flat_map(StackSpec::tensors)
            .map(|(name, _)| (name.clone(), model.tensor(&name).unwrap().to_vec()))
            .collect();
        tensors.get_mut("ft.0.weight").unwrap().iter_mut().for_each(|w| *w *= 8.0);
        Model::new(model.card.clone(), tensors).unwrap()
    }

    #[test]
    fn other_widths_load_and_misshapen_or_wrong_stacks_do_not() {
        let narrow = ModelKind::Policy.default_stacks().into_iter().map(|mut s| {
            s.layers = if s.name == POLICY_FT_STACK { vec![768, 32] } else { vec![32, POLICY_MOVES] };
            s
        });
        let net = PolicyNet::from_model(&random_model_with(ModelKind::Policy, narrow.collect(), 1)).unwrap();
        assert_eq!(net.width(), 32);
        let err = PolicyNet::from_model(&random_model(ModelKind::Value, 1)).unwrap_err().to_string();
        assert!(err.contains("moves"), "{err}");
    }
}
