//! Network shapes the trainer and the engine agree on.
//!
//! Every network is made of *stacks*: chains of fully connected layers
//! `layers[0] → layers[1] → … → layers[n]`, with the stack's activation after every
//! hidden layer, and after the last one too when `final_activation` is set (see
//! [`Activation`]). A layer's tensors are named
//! `{stack}.{i}.weight` with shape `[in, out]` (row-major, one row per input, which is
//! what a sparse first layer needs) and `{stack}.{i}.bias` with shape `[out]`.

use serde::{Deserialize, Serialize};

use crate::features::{FEATURE_COUNT, PERSPECTIVE_FEATURES};

/// Pos2Vec encoder of DeepChess: 773-600-400-200-100.
pub const POS2VEC_LAYERS: [usize; 5] = [FEATURE_COUNT, 600, 400, 200, 100];
/// Siamese comparator head: two concatenated 100-codes → 400 → 200 → 100 → 2.
pub const COMPARATOR_HEAD_LAYERS: [usize; 5] = [200, 400, 200, 100, 2];
/// Move predictor for the piece type: 773-48-6 (the thesis's hidden width, the default of
/// `train movepred --hidden`; the committed models are 256 wide, read from their card).
pub const MOVEPRED_PIECE_LAYERS: [usize; 3] = [FEATURE_COUNT, 48, 6];
/// Move predictor for a destination square: 773-48-64, one per piece type.
pub const MOVEPRED_SQUARE_LAYERS: [usize; 3] = [FEATURE_COUNT, 48, 64];
/// Names of the six destination-square stacks, in piece order P N B R Q K.
pub const MOVEPRED_SQUARE_STACKS: [&str; 6] =
    ["square.pawn", "square.knight", "square.bishop", "square.rook", "square.queen", "square.king"];
/// Stack of the evaluation net's feature transformer: `[768, N]`, shared by both
/// perspectives (see [`crate::features::perspective_feature`]); its outputs are the
/// accumulators the engine updates incrementally.
pub const VALUE_FT_STACK: &str = "ft";
/// The feature transformer's weight tensor `[768·K, N]`, `K` the king buckets of the input
/// layout (its stack's first layer).
pub const VALUE_FT_WEIGHT: &str = "ft.0.weight";
/// Stack of the evaluation net's output layer: `[2N, B]` over SCReLU of the side to move's
/// accumulator followed by the opponent's, one output per bucket of
/// [`value_output_bucket`] (`B` = 1: a single output for every position).
pub const VALUE_OUT_STACK: &str = "out";
/// Most output buckets an evaluation net may have (one per piece count from 2 to 32 and
/// one spare).
pub const VALUE_MAX_OUTPUT_BUCKETS: usize = 32;

/// The output bucket of a position with `pieces` pieces on the board (kings included) in a
/// net with `buckets` output buckets: the piece counts 2..=32 cut into `buckets` equal
/// ranges, the fewest pieces in bucket 0 (8 buckets: `(pieces − 2) / 4`, as bullet's
/// material buckets).
#[inline]
pub fn value_output_bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) * buckets / 32).min(buckets.saturating_sub(1))
}

/// The output layer's weights bucket by bucket: the columns of the row-major `[2N, B]`
/// tensor one after the other, so that bucket `b`'s weights are the contiguous
/// `[b · 2N, (b + 1) · 2N)` (how the trainer and the engine both read them).
pub fn value_output_bucket_major(weight: &[f32], buckets: usize) -> Vec<f32> {
    (0..buckets).flat_map(|b| weight.iter().skip(b).step_by(buckets).copied()).collect()
}
/// Default width N of the evaluation net's feature transformer (`train value --width`).
pub const VALUE_FT_WIDTH: usize = 256;
/// Quantisation of the feature transformer in the engine: weights and biases × 255 as
/// `i16`; SCReLU clips the accumulator to `0..=255` (the float net's `0..=1`).
pub const VALUE_FT_QUANT: i32 = 255;
/// Smallest quantisation of the output layer's weights in the engine: × 64 as `i16` (the
/// trainer clips them to ±[`VALUE_OUT_WEIGHT_LIMIT`] so that `255 × w` fits in 16 bits); the
/// engine uses the largest power of two from this up that keeps them within ±127.
pub const VALUE_OUT_QUANT: i32 = 64;
/// Key of the evaluation net's model card `output` object that gives the centipawns of
/// one unit of the net's output logit (the scale `K` of its training target).
pub const VALUE_CENTIPAWNS_PER_UNIT: &str = "centipawns_per_unit";
/// Largest magnitude of an output-layer weight (127 / 64).
pub const VALUE_OUT_WEIGHT_LIMIT: f32 = 127.0 / 64.0;

/// Key of the evaluation net's model card `output` object that names how each perspective
/// indexes its inputs ([`ValueInputLayout::name`]); a card without it is
/// [`ValueInputLayout::Plain`].
pub const VALUE_INPUT_LAYOUT: &str = "input_layout";

/// How each perspective of the evaluation net indexes its inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ValueInputLayout {
    /// [`crate::features::perspective_feature`] as it is: the board seen from the
    /// perspective's side (mirrored a1 ↔ a8 for Black).
    #[default]
    Plain,
    /// The same, and mirrored left to right (files a ↔ h) whenever the perspective's own
    /// king stands on files e–h, so that each perspective sees its king on files a–d: a
    /// position and its mirror image share their inputs (as bullet's and most NNUE
    /// engines' horizontal mirroring).
    HorizontalMirror,
    /// [`HorizontalMirror`](Self::HorizontalMirror), and the 768 inputs repeated for four
    /// king buckets ([`KING_BUCKETS`]): where the perspective's own king stands (seen from
    /// its side, files a–d after mirroring) picks which 768 rows the pieces use: a1–b1
    /// (castled short), c1–d1 (at home or castled long), the second rank, ranks 3–8.
    MirrorKingBuckets,
}

/// Number of king buckets of [`ValueInputLayout::MirrorKingBuckets`].
pub const KING_BUCKETS: usize = 4;

/// Where a perspective's features go in the feature transformer: feature `f` (a
/// [`crate::features::perspective_feature`]) is row `(f ^ xor) + offset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct InputMap {
    /// 7 when the board is mirrored a ↔ h, else 0.
    pub xor: u16,
    /// The first row of the perspective's king bucket (a multiple of 768).
    pub offset: u16,
}

impl InputMap {
    /// The feature-transformer row of the perspective feature `feature`.
    #[inline]
    pub fn row(self, feature: u16) -> u16 {
        (feature ^ self.xor) + self.offset
    }
}

impl ValueInputLayout {
    /// Every layout, in the order of their names.
    pub const ALL: [ValueInputLayout; 3] =
        [ValueInputLayout::Plain, ValueInputLayout::HorizontalMirror, ValueInputLayout::MirrorKingBuckets];

    /// The layout's name in a model card.
    pub fn name(self) -> &'static str {
        match self {
            ValueInputLayout::Plain => "plain",
            ValueInputLayout::HorizontalMirror => "horizontal_mirror",
            ValueInputLayout::MirrorKingBuckets => "horizontal_mirror_king_buckets4",
        }
    }

    /// The layout called `name` in a model card.
    pub fn from_name(name: &str) -> Option<ValueInputLayout> {
        ValueInputLayout::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Number of king buckets: sets of 768 feature-transformer rows.
    pub fn king_buckets(self) -> usize {
        match self {
            ValueInputLayout::MirrorKingBuckets => KING_BUCKETS,
            _ => 1,
        }
    }

    /// Rows of the feature transformer: 768 per king bucket.
    pub fn inputs(self) -> usize {
        PERSPECTIVE_FEATURES * self.king_buckets()
    }

    /// Whether this layout mirrors a ↔ h when the perspective's king stands on files e–h.
    pub fn mirrors(self) -> bool {
        self != ValueInputLayout::Plain
    }

    /// Where the features of a perspective whose own king stands on `king_square` go, the
    /// square seen from the perspective's side (0 = a1 … 63 = h8, ranks flipped for
    /// Black, as [`crate::features::perspective_feature`] does).
    ///
    /// ```
    /// use deepchess_core::arch::{InputMap, ValueInputLayout};
    /// let g1 = 6;
    /// assert_eq!(ValueInputLayout::Plain.map(g1), InputMap { xor: 0, offset: 0 });
    /// assert_eq!(ValueInputLayout::HorizontalMirror.map(g1), InputMap { xor: 7, offset: 0 });
    /// assert_eq!(ValueInputLayout::HorizontalMirror.map(3), InputMap { xor: 0, offset: 0 });
    /// // g1 mirrors to b1, bucket 0; e1 to d1, bucket 1; e2 bucket 2; a5 bucket 3
    /// assert_eq!(ValueInputLayout::MirrorKingBuckets.map(g1), InputMap { xor: 7, offset: 0 });
    /// assert_eq!(ValueInputLayout::MirrorKingBuckets.map(4), InputMap { xor: 7, offset: 768 });
    /// assert_eq!(ValueInputLayout::MirrorKingBuckets.map(12), InputMap { xor: 7, offset: 2 * 768 });
    /// assert_eq!(ValueInputLayout::MirrorKingBuckets.map(32), InputMap { xor: 0, offset: 3 * 768 });
    /// ```
    #[inline]
    pub fn map(self, king_square: u16) -> InputMap {
        let xor = if self.mirrors() && king_square % 8 >= 4 { 7 } else { 0 };
        let bucket = match self {
            ValueInputLayout::MirrorKingBuckets => {
                let (file, rank) = ((king_square % 8) ^ xor, king_square / 8);
                match rank {
                    0 if file < 2 => 0,
                    0 => 1,
                    1 => 2,
                    _ => 3,
                }
            }
            _ => 0,
        };
        InputMap { xor, offset: bucket * PERSPECTIVE_FEATURES as u16 }
    }
}

/// Lichess's centipawn ↔ win-probability scale (`win = sigmoid(cp / VALUE_CP_PER_LOGIT)`),
/// used where a score must become an expected score without a net (MCTS terminal
/// values, the comparator's reported score).
pub const VALUE_CP_PER_LOGIT: f32 = 1.0 / 0.003_682_08;

/// Comparator outputs (after softmax): index 0 is the probability that the *first*
/// position of the pair is the better one for White (the one from the game White won),
/// index 1 that the second is.
pub const COMPARATOR_FIRST_BETTER: usize = 0;

/// Stack of the student comparator's head: `[2 (2N + 1), H, 1]` over two positions' codes.
/// A code is SCReLU of White's accumulator, then of Black's (the feature transformer `ft`
/// of the evaluation net's shape), then 1 when Black is to move; the first layer's rows are
/// the first position's code, then the second's. The logit that the first position is
/// better for White is `g(a, b) − g(b, a)`, `g` the head (antisymmetric by construction, so
/// the head's last bias cancels).
pub const STUDENT_HEAD_STACK: &str = "head";
/// Default hidden width H of the student's head (`train student --hidden`).
pub const STUDENT_HIDDEN: usize = 32;

/// Width of one position's code in a student whose feature transformer is `width` wide.
pub fn student_code_width(width: usize) -> usize {
    2 * width + 1
}

/// Activation applied after every layer of a stack except the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// max(0, x).
    Relu,
    /// x for x > 0, 0.01·x otherwise.
    LeakyRelu,
    /// min(max(0, x), 1).
    ClippedRelu,
    /// min(max(0, x), 1)², the evaluation net's activation between its two stacks.
    SquaredClippedRelu,
}

/// One stack of a network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackSpec {
    /// Tensor name prefix.
    pub name: String,
    /// Layer widths, input first.
    pub layers: Vec<usize>,
    /// Hidden activation.
    pub activation: Activation,
    /// Whether the activation follows the last layer too (the Pos2Vec code does; logits
    /// and scores do not).
    #[serde(default)]
    pub final_activation: bool,
}

impl StackSpec {
    /// A stack spec.
    pub fn new(name: &str, layers: &[usize], activation: Activation) -> StackSpec {
        StackSpec { name: name.to_string(), layers: layers.to_vec(), activation, final_activation: false }
    }

    /// The same stack with the activation after its last layer too.
    pub fn with_final_activation(mut self) -> StackSpec {
        self.final_activation = true;
        self
    }

    /// The tensors this stack consists of, with their shapes.
    pub fn tensors(&self) -> Vec<(String, Vec<usize>)> {
        self.layers
            .windows(2)
            .enumerate()
            .flat_map(|(i, w)| {
                [
                    (format!("{}.{i}.weight", self.name), vec![w[0], w[1]]),
                    (format!("{}.{i}.bias", self.name), vec![w[1]]),
                ]
            })
            .collect()
    }

    /// Input width.
    pub fn input(&self) -> usize {
        self.layers[0]
    }

    /// Output width.
    pub fn output(&self) -> usize {
        *self.layers.last().expect("a stack has layers")
    }
}

/// The four kinds of model files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// Pos2Vec encoder (stack `encoder`).
    Pos2vec,
    /// Siamese comparator (stacks `encoder` and `head`).
    Comparator,
    /// Move predictors (stacks `piece` and `square.*`).
    Movepred,
    /// Evaluation net (stacks `ft` and `out`).
    Value,
    /// Student comparator for search (stacks `ft` and `out` of an evaluation net, and
    /// `head` over two codes, see [`STUDENT_HEAD_STACK`]).
    Student,
}

impl ModelKind {
    /// All kinds.
    pub const ALL: [ModelKind; 5] =
        [ModelKind::Pos2vec, ModelKind::Comparator, ModelKind::Movepred, ModelKind::Value, ModelKind::Student];

    /// File stem in `models/`.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Pos2vec => "pos2vec",
            ModelKind::Comparator => "comparator",
            ModelKind::Movepred => "movepred",
            ModelKind::Value => "value",
            ModelKind::Student => "student",
        }
    }

    /// The stacks of the standard architecture of this kind.
    pub fn default_stacks(self) -> Vec<StackSpec> {
        use Activation::*;
        match self {
            ModelKind::Pos2vec => vec![StackSpec::new("encoder", &POS2VEC_LAYERS, Relu).with_final_activation()],
            ModelKind::Comparator => vec![
                StackSpec::new("encoder", &POS2VEC_LAYERS, Relu).with_final_activation(),
                StackSpec::new("head", &COMPARATOR_HEAD_LAYERS, Relu),
            ],
            ModelKind::Movepred => std::iter::once(StackSpec::new("piece", &MOVEPRED_PIECE_LAYERS, LeakyRelu))
                .chain(MOVEPRED_SQUARE_STACKS.iter().map(|n| StackSpec::new(n, &MOVEPRED_SQUARE_LAYERS, LeakyRelu)))
                .collect(),
            ModelKind::Value => vec![
                StackSpec::new(VALUE_FT_STACK, &[PERSPECTIVE_FEATURES, VALUE_FT_WIDTH], SquaredClippedRelu)
                    .with_final_activation(),
                StackSpec::new(VALUE_OUT_STACK, &[2 * VALUE_FT_WIDTH, 1], SquaredClippedRelu),
            ],
            ModelKind::Student => {
                let code = student_code_width(VALUE_FT_WIDTH);
                let mut stacks = ModelKind::Value.default_stacks();
                stacks.push(StackSpec::new(STUDENT_HEAD_STACK, &[2 * code, STUDENT_HIDDEN, 1], ClippedRelu));
                stacks
            }
        }
    }

    /// Checks that `stacks` has the stacks this kind needs, wired together: names,
    /// input and output widths (hidden widths are free).
    pub fn check_stacks(self, stacks: &[StackSpec]) -> Result<(), String> {
        let find = |name: &str| {
            stacks.iter().find(|s| s.name == name).ok_or_else(|| format!("{} model has no stack `{name}`", self.name()))
        };
        let expect = |s: &StackSpec, input: usize, output: usize| {
            if s.layers.len() < 2 || s.input() != input || s.output() != output {
                Err(format!("stack `{}` has layers {:?}; expected input {input} and output {output}", s.name, s.layers))
            } else {
                Ok(())
            }
        };
        match self {
            ModelKind::Pos2vec => {
                let e = find("encoder")?;
                if e.layers.len() < 2 || e.input() != FEATURE_COUNT {
                    return Err(format!("stack `encoder` has layers {:?}; expected input {FEATURE_COUNT}", e.layers));
                }
            }
            ModelKind::Comparator => {
                let e = find("encoder")?;
                if e.layers.len() < 2 || e.input() != FEATURE_COUNT {
                    return Err(format!("stack `encoder` has layers {:?}; expected input {FEATURE_COUNT}", e.layers));
                }
                expect(find("head")?, 2 * e.output(), 2)?;
            }
            ModelKind::Movepred => {
                expect(find("piece")?, FEATURE_COUNT, 6)?;
                for name in MOVEPRED_SQUARE_STACKS {
                    expect(find(name)?, FEATURE_COUNT, 64)?;
                }
            }
            ModelKind::Student => {
                ModelKind::Value.check_stacks(stacks)?;
                let code = student_code_width(find(VALUE_FT_STACK)?.output());
                let head = find(STUDENT_HEAD_STACK)?;
                expect(head, 2 * code, 1)?;
                if head.layers.len() != 3 {
                    return Err(format!(
                        "stack `{STUDENT_HEAD_STACK}` has layers {:?}; expected [{}, H, 1]",
                        head.layers,
                        2 * code
                    ));
                }
            }
            ModelKind::Value => {
                let ft = find(VALUE_FT_STACK)?;
                let inputs_ok = ValueInputLayout::ALL.iter().any(|l| l.inputs() == ft.input());
                if ft.layers.len() != 2 || !inputs_ok || !ft.output().is_multiple_of(16) {
                    return Err(format!(
                        "stack `{VALUE_FT_STACK}` has layers {:?}; expected [{PERSPECTIVE_FEATURES}·K, N] with K 1 or {KING_BUCKETS} (king buckets) and N a multiple of 16",
                        ft.layers
                    ));
                }
                let out = find(VALUE_OUT_STACK)?;
                if out.layers.len() != 2
                    || out.input() != 2 * ft.output()
                    || !(1..=VALUE_MAX_OUTPUT_BUCKETS).contains(&out.output())
                {
                    return Err(format!(
                        "stack `{VALUE_OUT_STACK}` has layers {:?}; expected one layer [{}, B] with 1 to {VALUE_MAX_OUTPUT_BUCKETS} output buckets B",
                        out.layers,
                        2 * ft.output()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feature_transformer_weight_is_named_by_its_stack() {
        let stacks = ModelKind::Value.default_stacks();
        assert_eq!(stacks[0].name, VALUE_FT_STACK);
        assert_eq!(stacks[0].tensors()[0].0, VALUE_FT_WEIGHT);
    }

    #[test]
    fn default_stacks_pass_their_own_check() {
        for kind in ModelKind::ALL {
            kind.check_stacks(&kind.default_stacks()).unwrap();
        }
        let enc = &ModelKind::Pos2vec.default_stacks()[0];
        assert_eq!(enc.tensors()[0], ("encoder.0.weight".to_string(), vec![773, 600]));
        assert_eq!(enc.tensors()[7], ("encoder.3.bias".to_string(), vec![100]));
    }

    #[test]
    fn miswired_stacks_are_rejected() {
        let mut stacks = ModelKind::Comparator.default_stacks();
        stacks[1].layers[0] = 100;
        let err = ModelKind::Comparator.check_stacks(&stacks).unwrap_err();
        assert!(err.contains("head") && err.contains("200"), "{err}");
        assert!(ModelKind::Value.check_stacks(&[]).unwrap_err().contains("no stack `ft`"));
        let mut value = ModelKind::Value.default_stacks();
        value[1].layers[0] = 100;
        assert!(ModelKind::Value.check_stacks(&value).unwrap_err().contains("`out`"));
        value[0].layers[1] = 50;
        assert!(ModelKind::Value.check_stacks(&value).unwrap_err().contains("multiple of 16"));
        let mut bucketed = ModelKind::Value.default_stacks();
        bucketed[1].layers[1] = 8;
        ModelKind::Value.check_stacks(&bucketed).unwrap();
        bucketed[1].layers[1] = VALUE_MAX_OUTPUT_BUCKETS + 1;
        assert!(ModelKind::Value.check_stacks(&bucketed).unwrap_err().contains("output buckets"));
    }

    #[test]
    fn output_buckets_cut_the_piece_counts_evenly() {
        // 8 buckets: bullet's (pieces - 2) / 4
        for pieces in 2..=32 {
            assert_eq!(value_output_bucket(pieces, 8), (pieces - 2) / 4, "{pieces} pieces");
            assert_eq!(value_output_bucket(pieces, 1), 0);
        }
        let per_bucket = |b: usize| (2..=32).filter(|&p| value_output_bucket(p, 4) == b).count();
        assert_eq!((0..4).map(per_bucket).collect::<Vec<_>>(), vec![8, 8, 8, 7]);
        assert_eq!(value_output_bucket(32, 32), 30);
    }
}
