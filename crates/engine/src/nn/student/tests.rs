//! The student comparator: incremental codes, integer against float, antisymmetry.

use deepchess_core::arch::{STUDENT_HEAD_STACK, VALUE_FT_STACK};
use deepchess_core::features::{PERSPECTIVE_FEATURES, SIDE_TO_MOVE, perspective_feature};
use deepchess_core::{FeatureBits, Model, ModelKind, SparseFeatures};
use shakmaty::{Chess, Color};

use super::*;
use crate::nn::embedded_model;
use crate::nn::{random_model, random_model_with};
use crate::random_games::random_game;

/// Positions along seeded random games (every ply of `games` games of up to 60 plies).
fn random_games(seed: u64, games: usize) -> Vec<Vec<Chess>> {
    (0..games as u64).map(|game| random_game(seed.wrapping_mul(1_000).wrapping_add(game), 60)).collect()
}

/// The float student's code of a position: SCReLU of both perspectives and the side to move,
/// the feature transformer on the 1/255 grid as the trainer keeps it.
fn float_code(model: &Model, features: &SparseFeatures) -> Vec<f32> {
    let ft = model.layer(VALUE_FT_STACK, 0).unwrap();
    let n = ft.outputs;
    let grid = |w: &f32| (w * 255.0).round() / 255.0;
    let mut code = Vec::with_capacity(2 * n + 1);
    for side in [Color::White, Color::Black] {
        let mut acc: Vec<f32> = ft.bias.iter().map(grid).collect();
        for &f in features.as_slice().iter().filter(|&&f| usize::from(f) < PERSPECTIVE_FEATURES) {
            let row = &ft.weight[usize::from(perspective_feature(f, side)) * n..][..n];
            acc.iter_mut().zip(row).for_each(|(a, w)| *a += grid(w));
        }
        code.extend(acc.iter().map(|x| x.clamp(0.0, 1.0).powi(2)));
    }
    code.push(if features.as_slice().contains(&(SIDE_TO_MOVE as u16)) { 1.0 } else { 0.0 });
    code
}

/// The float student's logit that `a` is better for White than `b`.
fn float_logit(model: &Model, a: &[f32], b: &[f32]) -> f32 {
    let layers = model.layers(STUDENT_HEAD_STACK).unwrap();
    let (first, last) = (&layers[0], &layers[1]);
    let h = first.outputs;
    let g = |x: &[f32], y: &[f32]| -> f32 {
        (0..h)
            .map(|j| {
                let u = first.bias[j]
                    + x.iter().chain(y).enumerate().map(|(i, v)| v * first.weight[i * h + j]).sum::<f32>();
                last.weight[j] * u.clamp(0.0, 1.0)
            })
            .sum()
    };
    g(a, b) - g(b, a)
}

#[test]
fn incremental_codes_equal_codes_from_scratch_along_random_games() {
    let student = Student::from_model(&random_model(ModelKind::Student, 3)).unwrap();
    for line in random_games(11, 4) {
        let mut accumulator = student.value().accumulator(&FeatureBits::from_position(&line[0]));
        let mut child = accumulator.clone();
        for position in &line[1..] {
            let features = FeatureBits::from_position(position);
            student.value().update(&accumulator, &features, &mut child);
            std::mem::swap(&mut accumulator, &mut child);
            assert_eq!(student.code(&accumulator), student.code_of(&features));
        }
    }
}

/// Share of sibling pairs (one and two plies apart) and same-game pairs on which the
/// integer student and the float one pick the same position, and the largest difference
/// of their logits.
fn agreement(model: &Model) -> (f64, f32) {
    let student = Student::from_model(model).unwrap();
    let (mut same, mut total, mut largest) = (0, 0, 0.0f32);
    for line in random_games(5, 12) {
        let features: Vec<SparseFeatures> = line.iter().map(SparseFeatures::from_position).collect();
        let floats: Vec<Vec<f32>> = features.iter().map(|f| float_code(model, f)).collect();
        let ints: Vec<StudentCode> = line.iter().map(|p| student.code_of(&FeatureBits::from_position(p))).collect();
        for i in 0..line.len() {
            for j in [i + 1, i + 2, line.len() - 1 - i] {
                if j >= line.len() || j == i {
                    continue;
                }
                let float = float_logit(model, &floats[i], &floats[j]);
                let int = student.logit(&ints[i], &ints[j]);
                same += usize::from((float > 0.0) == (int > 0.0));
                total += 1;
                largest = largest.max((float - int).abs());
            }
        }
    }
    (same as f64 / total as f64, largest)
}

#[test]
fn quantised_comparisons_agree_with_float() {
    // a random head's logits are near 0, where any rounding flips signs: only the closeness
    // of every logit is checked for it
    // (8-bit head weights: measured 0.005 and 0.045 at most, 99.76% of pairs agree)
    let (_, largest) = agreement(&random_model(ModelKind::Student, 9));
    assert!(largest < 0.02, "random student: logits differ by {largest}");
    let (trained, largest) = agreement(&embedded_model(ModelKind::Student).unwrap());
    assert!(trained >= 0.99 && largest < 0.1, "embedded student: {trained} agree, logits differ by {largest}");
}

#[test]
fn a_head_whose_width_is_not_a_multiple_of_the_lanes_gives_the_float_logits() {
    let mut stacks = ModelKind::Student.default_stacks();
    let head = stacks.iter_mut().find(|s| s.name == STUDENT_HEAD_STACK).unwrap();
    head.layers[1] = 13;
    let model = random_model_with(ModelKind::Student, stacks, 4);
    assert_eq!(Student::from_model(&model).unwrap().hidden(), 13);
    let (_, largest) = agreement(&model);
    assert!(largest < 0.02, "13-wide student: logits differ by {largest}");
}

#[test]
fn comparisons_are_antisymmetric() {
    let student = Student::from_model(&embedded_model(ModelKind::Student).unwrap()).unwrap();
    let line = &random_games(2, 1)[0];
    let codes: Vec<StudentCode> = line.iter().map(|p| student.code_of(&FeatureBits::from_position(p))).collect();
    for pair in codes.windows(2) {
        let (ab, ba) = (student.compare(&pair[0], &pair[1]), student.compare(&pair[1], &pair[0]));
        assert!((ab + ba - 1.0).abs() < 1e-5, "{ab} {ba}");
    }
}
