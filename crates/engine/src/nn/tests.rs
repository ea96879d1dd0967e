//! Inference against a naive dense implementation, incremental against from-scratch
//! evaluation, and error reporting for bad weights.

use deepchess_core::arch::ValueInputLayout;
use deepchess_core::{Activation, FeatureBits, Model, ModelKind, SparseFeatures};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::{Bitboard, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Position};

use super::*;
use crate::random_games::random_game;

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
                    Activation::LeakyRelu => {
                        if *v > 0.0 {
                            *v
                        } else {
                            0.01 * *v
                        }
                    }
                    Activation::ClippedRelu => v.clamp(0.0, 1.0),
                    Activation::SquaredClippedRelu => v.clamp(0.0, 1.0).powi(2),
                };
            }
        }
        x = y;
    }
    x
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
        let accumulator = predictor.accumulator(&FeatureBits::from_position(pos));
        let mut expected = naive(&model, "piece", &dense(pos));
        softmax(&mut expected);
        close(&predictor.piece_probabilities(&accumulator, &mut scratch), &expected, 1e-5);
        let mut expected = naive(&model, "square.knight", &dense(pos));
        softmax(&mut expected);
        close(&predictor.square_probabilities(1, &accumulator, &mut scratch), &expected, 1e-5);
        assert!((expected.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

/// The float evaluation net by its definition: White's logit of a position.
fn naive_value(model: &Model, pos: &Chess) -> f32 {
    let ft = model.layer("ft", 0).unwrap();
    let out = model.layer("out", 0).unwrap();
    let width = ft.outputs;
    let pieces: Vec<u16> = SparseFeatures::from_position(pos).as_slice().iter().copied().filter(|&f| f < 768).collect();
    let layout = model.card.value_input_layout().unwrap();
    let accumulator = |view: shakmaty::Color| -> Vec<f32> {
        // files a-h flipped for a perspective whose own king stands on files e-h
        let king = pos.board().king_of(view);
        let king_file = king.map_or(0, |k| u16::from(k.file()));
        let flip = if layout != ValueInputLayout::Plain && king_file >= 4 { 7 } else { 0 };
        // king buckets: the king's rank as `view` sees it, its file after the flip
        let relative_rank = king.map_or(0, |k| u16::from(k.rank()) ^ if view.is_white() { 0 } else { 7 });
        let bucket = match (layout, relative_rank, king_file ^ flip) {
            (ValueInputLayout::MirrorKingBuckets, 0, 0 | 1) => 0,
            (ValueInputLayout::MirrorKingBuckets, 0, _) => 1,
            (ValueInputLayout::MirrorKingBuckets, 1, _) => 2,
            (ValueInputLayout::MirrorKingBuckets, _, _) => 3,
            _ => 0,
        };
        (0..width)
            .map(|j| {
                ft.bias[j]
                    + pieces
                        .iter()
                        .map(|&f| {
                            let row = (deepchess_core::features::perspective_feature(f, view) ^ flip) + bucket * 768;
                            ft.weight[usize::from(row) * width + j]
                        })
                        .sum::<f32>()
            })
            .collect()
    };
    let (us, them) = (accumulator(pos.turn()), accumulator(!pos.turn()));
    let screlu = |x: f32| x.clamp(0.0, 1.0).powi(2);
    let buckets = out.outputs;
    let b = deepchess_core::arch::value_output_bucket(pieces.len(), buckets);
    let w = |i: usize| out.weight[i * buckets + b];
    let o = out.bias[b] + (0..width).map(|j| screlu(us[j]) * w(j) + screlu(them[j]) * w(width + j)).sum::<f32>();
    if pos.turn() == shakmaty::Color::White { o } else { -o }
}

/// A trained-like evaluation net: random weights whose output layer is scaled up so that
/// scores span several pawns (the quantisation is tested at realistic magnitudes), with
/// `buckets` output buckets.
fn value_model(seed: u64, width: usize, buckets: usize) -> Model {
    value_model_with_layout(seed, width, buckets, ValueInputLayout::Plain)
}

/// [`value_model`] with the input layout `layout` in its card.
fn value_model_with_layout(seed: u64, width: usize, buckets: usize, layout: ValueInputLayout) -> Model {
    let stacks = vec![
        deepchess_core::StackSpec::new("ft", &[layout.inputs(), width], Activation::SquaredClippedRelu)
            .with_final_activation(),
        deepchess_core::StackSpec::new("out", &[2 * width, buckets], Activation::SquaredClippedRelu),
    ];
    let mut model = random_model_with(ModelKind::Value, stacks, seed);
    let mut tensors = std::collections::BTreeMap::new();
    for (name, _) in model.card.stacks.iter().flat_map(deepchess_core::StackSpec::tensors) {
        let mut v = model.tensor(&name).unwrap().to_vec();
        if name == deepchess_core::arch::VALUE_FT_WEIGHT {
            v.iter_mut().for_each(|x| *x *= 3.0);
        }
        if name == "out.0.weight" {
            v.iter_mut().for_each(|x| *x = (*x * 12.0).clamp(-1.9, 1.9));
        }
        tensors.insert(name, v);
    }
    let mut card = model.card.clone();
    if layout != ValueInputLayout::Plain {
        card.output[deepchess_core::arch::VALUE_INPUT_LAYOUT] = serde_json::json!(layout.name());
    }
    model = Model::new(card, tensors).unwrap();
    model
}

#[test]
fn quantised_value_net_matches_the_float_definition() {
    // Stated tolerance: 0.3 logit + 3% for these synthetic worst-case nets (feature weights
    // three times and output weights twelve times a trained net's, so the accumulator's
    // rounding to 1/255 is amplified by SCReLU's slope and output weights near ±1.9; observed
    // up to 0.22). The embedded, trained net is held to 8 cp below.
    let mirror = ValueInputLayout::HorizontalMirror;
    for (seed, width, buckets, layout) in [
        (11, 256, 1, ValueInputLayout::Plain),
        (12, 64, 1, ValueInputLayout::Plain),
        (15, 64, 8, ValueInputLayout::Plain),
        (16, 64, 8, mirror),
        (18, 64, 8, ValueInputLayout::MirrorKingBuckets),
    ] {
        let model = value_model_with_layout(seed, width, buckets, layout);
        let value = ValueNet::from_model(&model).unwrap();
        assert_eq!((value.accumulator_width(), value.output_buckets()), (width, buckets));
        assert_eq!(value.input_layout(), layout);
        let (mut worst, mut spread) = (0.0f32, 0.0f32);
        for game in [4, 5] {
            for pos in random_game(game, 200) {
                let expected = naive_value(&model, &pos);
                let got = value.evaluate(&FeatureBits::from_position(&pos));
                worst = worst.max((got - expected).abs());
                spread = spread.max(expected.abs());
                assert!((got - expected).abs() <= 0.3 + 0.03 * expected.abs(), "{got} vs {expected}");
            }
        }
        assert!(spread > 1.0, "the test net's scores should span more than one unit, got {spread}");
        eprintln!("width {width}: largest quantisation error {worst} logit (scores up to {spread})");
    }
}

/// The 16-bit engine net against its float weights along three random games: fkb768 (768
/// wide) differs by at most 11.8 cp (one position of 360 above 10 cp, the bound before it).
#[test]
fn embedded_value_net_is_within_twelve_centipawns_and_two_percent_of_its_float_weights() {
    let model = embedded_model(ModelKind::Value).unwrap();
    let value = ValueNet::from_model(&model).unwrap();
    let mut worst = 0.0f32;
    for game in [7, 8, 9] {
        for pos in random_game(game, 120) {
            let expected = naive_value(&model, &pos) * value.centipawns_per_unit();
            let got = value.evaluate_centipawns(&FeatureBits::from_position(&pos)) as f32;
            let error = (got - expected).abs();
            worst = worst.max(error);
            assert!(error <= 12.0 + 0.02 * expected.abs(), "{got} cp against {expected} cp");
        }
    }
    eprintln!("largest difference {worst} cp");
}

#[test]
fn incremental_value_equals_from_scratch_along_random_games() {
    for layout in ValueInputLayout::ALL {
        incremental_value_equals_from_scratch(layout);
    }
}

/// Updates along random games give the accumulators computed from scratch, under `layout`
/// (mirrored: the kings cross between files d and e in these games).
fn incremental_value_equals_from_scratch(layout: ValueInputLayout) {
    // eight output buckets: captures move the positions from one to the next
    let model = value_model_with_layout(13, 128, 8, layout);
    let value = ValueNet::from_model(&model).unwrap();
    let (mut crossings, mut bucket_changes) = (0, 0);
    // Games with captures, castling, promotions and en passant in their random moves.
    for seed in [4, 5, 6] {
        let positions = random_game(seed, 300);
        let mut acc = value.accumulator(&FeatureBits::from_position(&positions[0]));
        let mut next = acc.clone();
        for pos in &positions[1..] {
            let features = FeatureBits::from_position(pos);
            let halves = |f: &FeatureBits| [Color::White, Color::Black].map(|c| f.king_square(c) % 8 >= 4);
            crossings += usize::from(halves(acc.features()) != halves(&features));
            let maps = |f: &FeatureBits| [Color::White, Color::Black].map(|c| layout.map(f.king_square(c)).offset);
            bucket_changes += usize::from(maps(acc.features()) != maps(&features));
            value.update(&acc, &features, &mut next);
            std::mem::swap(&mut acc, &mut next);
            let fresh = value.accumulator(&features);
            assert_eq!(acc.perspectives(), fresh.perspectives());
            // A refresh in the storage of another position's accumulator is the same.
            let mut reused = value.accumulator(&FeatureBits::from_position(&positions[0]));
            value.refresh(&features, &mut reused);
            assert_eq!(reused.perspectives(), fresh.perspectives());
            assert_eq!(reused.features(), &features);
            assert_eq!(value.centipawns(&acc), value.centipawns(&fresh));
            assert_eq!(value.logit(&acc), value.evaluate(&features));
            let white_cp = value.evaluate_centipawns(&features);
            let stm_cp = value.centipawns(&acc);
            assert_eq!(white_cp, if pos.turn() == shakmaty::Color::White { stm_cp } else { -stm_cp });
        }
    }
    assert!(crossings >= 5, "the games should take kings across the board's halves: {crossings}");
    if layout.king_buckets() > 1 {
        assert!(bucket_changes >= 5, "the games should take kings across king buckets: {bucket_changes}");
    }
}

#[test]
fn a_mirrored_net_scores_a_position_and_its_mirror_image_alike() {
    let plain = ValueNet::from_model(&value_model(17, 64, 8)).unwrap();
    let mirrored =
        ValueNet::from_model(&value_model_with_layout(17, 64, 8, ValueInputLayout::HorizontalMirror)).unwrap();
    let bucketed =
        ValueNet::from_model(&value_model_with_layout(17, 64, 8, ValueInputLayout::MirrorKingBuckets)).unwrap();
    let mut differ = 0;
    for pos in random_game(9, 200) {
        let mut setup = pos.to_setup(EnPassantMode::Legal);
        setup.board.flip_horizontal();
        (setup.castling_rights, setup.ep_square) = (Bitboard::EMPTY, None);
        let image: Chess = Chess::from_setup(setup, CastlingMode::Chess960).expect("a mirror image is as legal");
        let (features, image) = (FeatureBits::from_position(&pos), FeatureBits::from_position(&image));
        assert_eq!(mirrored.evaluate(&features), mirrored.evaluate(&image));
        assert_eq!(bucketed.evaluate(&features), bucketed.evaluate(&image));
        differ += usize::from(plain.evaluate(&features) != plain.evaluate(&image));
    }
    assert!(differ > 100, "a plain net tells most positions from their images: {differ}");
}

#[test]
fn an_accumulator_followed_from_any_position_equals_from_scratch() {
    for layout in ValueInputLayout::ALL {
        followed_accumulators_equal_from_scratch(layout);
    }
}

/// `follow` gives the accumulators computed from scratch, under `layout`.
fn followed_accumulators_equal_from_scratch(layout: ValueInputLayout) {
    let model = value_model_with_layout(13, 128, 8, layout);
    let value = ValueNet::from_model(&model).unwrap();
    // Positions near each other (one ply apart) and far apart (one game to another, the
    // start against the end): both ways of `follow`.
    let games: Vec<_> = [11, 12].iter().map(|&seed| random_game(seed, 200)).collect();
    let mut previous = value.accumulator(&FeatureBits::from_position(&games[0][0]));
    let mut out = previous.clone();
    for pos in games[0].iter().chain(games[1].iter().rev()).chain(games[0].iter().step_by(7)) {
        let features = FeatureBits::from_position(pos);
        value.follow(&previous, &features, &mut out);
        assert_eq!(out.perspectives(), value.accumulator(&features).perspectives());
        assert_eq!(out.features(), &features);
        std::mem::swap(&mut previous, &mut out);
    }
}

#[test]
fn incremental_move_predictions_equal_from_scratch_along_random_games() {
    let model = random_model(ModelKind::Movepred, 5);
    let predictor = MovePredictor::from_model(&model).unwrap();
    let mut scratch = Scratch::default();
    for seed in [4, 7] {
        let positions = random_game(seed, 300);
        let mut acc = predictor.accumulator(&FeatureBits::from_position(&positions[0]));
        let mut next = acc.clone();
        for pos in &positions[1..] {
            let features = FeatureBits::from_position(pos);
            predictor.update(&acc, &features, &mut next);
            std::mem::swap(&mut acc, &mut next);
            assert_eq!(acc.features(), &features);
            let fresh = predictor.accumulator(&features);
            let probabilities = |a: &PredictorAccumulator, scratch: &mut Scratch| {
                let mut all = predictor.piece_probabilities(a, scratch).to_vec();
                (0..6).for_each(|piece| all.extend(predictor.square_probabilities(piece, a, scratch)));
                all
            };
            close(&probabilities(&acc, &mut scratch), &probabilities(&fresh, &mut scratch), 1e-5);
        }
        // A jump to an unrelated position (more features differ than it holds) recomputes.
        let start = FeatureBits::from_position(&Chess::default());
        predictor.update(&acc, &start, &mut next);
        assert_eq!(next, predictor.accumulator(&start));
    }
}

#[test]
fn kernels_agree_with_the_portable_fallback() {
    use super::value::kernels;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    // 48 leaves a 16-wide tail after the 32-wide steps of the dot product; 272 a tail
    // after the 128-wide blocks of the update.
    for width in [48, 64, 272] {
        let weight: Vec<i16> = (0..768 * width).map(|_| rng.random_range(-300..300)).collect();
        let acc: Vec<i16> = (0..width).map(|_| rng.random_range(-400..600)).collect();
        let out: Vec<i16> = (0..width).map(|_| rng.random_range(-127..=127)).collect();
        assert_eq!(kernels::screlu_dot(&acc, &out), kernels::screlu_dot_generic(&acc, &out));
        let by_hand: i64 = acc.iter().zip(&out).map(|(&a, &w)| i64::from(a.clamp(0, 255)).pow(2) * i64::from(w)).sum();
        assert_eq!(kernels::screlu_dot_generic(&acc, &out), by_hand, "width {width}");
        let (mut a, mut b) = (vec![0; width], vec![0; width]);
        kernels::update(&mut a, &acc, &weight, &[3, 700], &[12]);
        kernels::update_generic(&mut b, &acc, &weight, &[3, 700], &[12]);
        assert_eq!(a, b);
        for i in [0, 5, width - 1] {
            assert_eq!(a[i], acc[i] + weight[3 * width + i] + weight[700 * width + i] - weight[12 * width + i]);
        }
    }
}

/// Every tensor of `model` by name.
fn tensors_of(model: &Model) -> std::collections::BTreeMap<String, Vec<f32>> {
    let names = model.card.stacks.iter().flat_map(deepchess_core::StackSpec::tensors);
    names.map(|(n, _)| (n.clone(), model.tensor(&n).unwrap().to_vec())).collect()
}

#[test]
fn value_net_rejects_weights_it_cannot_quantise() {
    let model = value_model(14, 32, 1);
    let mut tensors = tensors_of(&model);
    tensors.get_mut("out.0.weight").unwrap()[3] = 2.5;
    let bad = Model::new(model.card.clone(), tensors.clone()).unwrap();
    let err = ValueNet::from_model(&bad).unwrap_err().to_string();
    assert!(err.contains("out.0.weight") && err.contains("2.5"), "{err}");
    tensors.get_mut("out.0.weight").unwrap()[3] = f32::NAN;
    let err = ValueNet::from_model(&Model::new(model.card.clone(), tensors).unwrap()).unwrap_err().to_string();
    assert!(err.contains("NaN"), "{err}");
    let mut card = model.card.clone();
    card.output = serde_json::json!({});
    let tensors = tensors_of(&model);
    let err = ValueNet::from_model(&Model::new(card, tensors).unwrap()).unwrap_err().to_string();
    assert!(err.contains("centipawns_per_unit"), "{err}");
}

#[test]
fn misshapen_weights_are_reported_with_tensor_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ENGINE_MODELS {
        random_model(kind, 1).save(dir.path()).unwrap();
    }
    assert!(Networks::load(dir.path()).is_ok());
    // A value net whose card promises a width of 128 while the file holds 256.
    let card_path = dir.path().join("value.json");
    let card = std::fs::read_to_string(&card_path).unwrap().replace("256", "128").replace("512", "256");
    std::fs::write(&card_path, card).unwrap();
    let err = Networks::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("ft.0.weight") && err.contains("[768, 256]") && err.contains("[768, 128]"), "{err}");
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
