//! Inference against a naive dense implementation, incremental against from-scratch
//! evaluation, and error reporting for bad weights.

use deepchess_core::{Activation, Model, ModelKind, SparseFeatures};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::{Chess, Position};

use super::*;

/// Textbook forward pass: `y[j] = b[j] + Σ_i x[i]·W[i][j]`, one output at a time.
fn naive(model: &Model, stack: &str, input: &[f32]) -> Vec<f32> {
    let spec = model.stack(stack).unwrap();
    let layers = model.layers(stack).unwrap();
    let mut x = input.to_vec();
    for (k, layer) in layers.iter().enumerate() {
        let mut y: Vec<f32> = (0..layer.outputs)
            .map(|j| layer.bias[j] + (0..layer.inputs).map(|i| x[i] * layer.weight[i * layer.outputs + j]).sum::<f32>())
            .collect();
        if k + 1 < layers.len() || spec.final_activation {
            for v in &mut y {
                *v = match spec.activation {
                    Activation::Relu => v.max(0.0),
                    Activation::LeakyRelu => if *v > 0.0 { *v } else { 0.01 * *v },
                    Activation::ClippedRelu => v.clamp(0.0, 1.0),
                };
            }
        }
        x = y;
    }
    x
}

/// Positions of a seeded random game.
fn random_game(seed: u64, plies: usize) -> Vec<Chess> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut pos = Chess::default();
    let mut out = vec![pos.clone()];
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        out.push(pos.clone());
    }
    out
}

fn dense(pos: &Chess) -> Vec<f32> {
    SparseFeatures::from_position(pos).to_dense().to_vec()
}

fn close(a: &[f32], b: &[f32], tolerance: f32) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tolerance * (1.0 + y.abs()), "element {i}: {x} vs {y}");
    }
}

#[test]
fn comparator_matches_naive_implementation() {
    let model = random_model(ModelKind::Comparator, 7);
    let comparator = Comparator::from_model(&model, Precision::F32).unwrap();
    let mut scratch = Scratch::default();
    let positions = random_game(1, 40);
    let codes: Vec<Code> =
        positions.iter().map(|p| comparator.code(&SparseFeatures::from_position(p), &mut scratch)).collect();
    for (pos, code) in positions.iter().zip(&codes) {
        close(&code.code, &naive(&model, "encoder", &dense(pos)), 1e-4);
    }
    for pair in codes.windows(2).step_by(5) {
        let concat: Vec<f32> = pair[0].code.iter().chain(&pair[1].code).copied().collect();
        let logits = naive(&model, "head", &concat);
        let expected = 1.0 / (1.0 + (logits[1] - logits[0]).exp());
        let projected = comparator.compare(&pair[0], &pair[1], &mut scratch);
        let full = comparator.compare_codes(&pair[0].code, &pair[1].code, &mut scratch);
        assert!((projected - expected).abs() < 1e-4 && (full - expected).abs() < 1e-4, "{projected} {full} {expected}");
    }
}

#[test]
fn bf16_comparator_agrees_with_f32() {
    let model = random_model(ModelKind::Comparator, 8);
    let exact = Comparator::from_model(&model, Precision::F32).unwrap();
    let fast = Comparator::from_model(&model, Precision::Bf16Dense).unwrap();
    let mut scratch = Scratch::default();
    let positions = random_game(9, 120);
    let code = |c: &Comparator, p: &Chess, s: &mut Scratch| c.code(&SparseFeatures::from_position(p), s);
    let exact_codes: Vec<Code> = positions.iter().map(|p| code(&exact, p, &mut scratch)).collect();
    let fast_codes: Vec<Code> = positions.iter().map(|p| code(&fast, p, &mut scratch)).collect();
    let (mut worst, mut same, mut pairs) = (0f32, 0, 0);
    for i in 0..positions.len() {
        for j in (i + 1..positions.len()).step_by(7) {
            let a = exact.compare(&exact_codes[i], &exact_codes[j], &mut scratch);
            let b = fast.compare(&fast_codes[i], &fast_codes[j], &mut scratch);
            worst = worst.max((a - b).abs());
            same += usize::from((a > 0.5) == (b > 0.5));
            pairs += 1;
        }
    }
    assert!(worst < 0.01, "largest probability difference {worst}");
    assert!(same * 100 >= pairs * 99, "{same} of {pairs} decisions agree");
}

#[test]
fn move_predictor_matches_naive_implementation() {
    let model = random_model(ModelKind::Movepred, 3);
    let predictor = MovePredictor::from_model(&model).unwrap();
    let mut scratch = Scratch::default();
    for pos in random_game(2, 30).iter().step_by(6) {
        let features = SparseFeatures::from_position(pos);
        let mut expected = naive(&model, "piece", &dense(pos));
        softmax(&mut expected);
        close(&predictor.piece_probabilities(&features, &mut scratch), &expected, 1e-5);
        let mut expected = naive(&model, "square.knight", &dense(pos));
        softmax(&mut expected);
        close(&predictor.square_probabilities(1, &features, &mut scratch), &expected, 1e-5);
        assert!((expected.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn incremental_value_matches_scratch_and_naive() {
    let model = random_model(ModelKind::Value, 11);
    let value = ValueNet::from_model(&model).unwrap();
    let mut scratch = Scratch::default();
    // Two games with captures, castling, promotions and en passant in their random moves.
    for seed in [4, 5] {
        let positions = random_game(seed, 200);
        let mut acc = value.accumulator(&SparseFeatures::from_position(&positions[0]));
        let mut next = acc.clone();
        for pos in &positions[1..] {
            let features = SparseFeatures::from_position(pos);
            value.update(&acc, &features, &mut next);
            std::mem::swap(&mut acc, &mut next);
            let incremental = value.logit(&acc, &mut scratch);
            let from_scratch = value.evaluate(&features, &mut scratch);
            let expected = naive(&model, "value", &dense(pos))[0];
            assert!((incremental - expected).abs() < 1e-3, "{incremental} vs {expected}");
            assert!((from_scratch - expected).abs() < 1e-4, "{from_scratch} vs {expected}");
        }
    }
    assert_eq!(value.accumulator_width(), 256);
}

#[test]
fn misshapen_weights_are_reported_with_tensor_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ENGINE_MODELS {
        random_model(kind, 1).save(dir.path()).unwrap();
    }
    assert!(Networks::load(dir.path()).is_ok());
    // A value net whose card promises a hidden width of 128 while the file holds 256.
    let card_path = dir.path().join("value.json");
    let card = std::fs::read_to_string(&card_path).unwrap().replace("256", "128");
    std::fs::write(&card_path, card).unwrap();
    let err = Networks::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("value.0.weight") && err.contains("[773, 256]") && err.contains("[773, 128]"), "{err}");
    // A truncated weights file.
    let weights = dir.path().join("movepred.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let err = Networks::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("movepred.safetensors"), "{err}");
}

#[test]
fn embedded_defaults_load() {
    let networks = Networks::embedded().unwrap();
    assert_eq!(networks.comparator.code_width(), 100);
}

#[test]
fn value_net_widths_come_from_the_card() {
    let stacks = vec![deepchess_core::StackSpec::new("value", &[773, 128, 16, 1], Activation::ClippedRelu)];
    let model = random_model_with(ModelKind::Value, stacks, 21);
    let value = ValueNet::from_model(&model).unwrap();
    assert_eq!(value.accumulator_width(), 128);
    let mut scratch = Scratch::default();
    let positions = random_game(22, 60);
    let mut acc = value.accumulator(&SparseFeatures::from_position(&positions[0]));
    let mut next = acc.clone();
    for pos in &positions[1..] {
        value.update(&acc, &SparseFeatures::from_position(pos), &mut next);
        std::mem::swap(&mut acc, &mut next);
        let expected = naive(&model, "value", &dense(pos))[0];
        assert!((value.logit(&acc, &mut scratch) - expected).abs() < 1e-3);
    }
}
