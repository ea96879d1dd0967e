//! The evaluation net, NNUE-style, in 16-bit integers.
//!
//! Architecture (trained by `deepchess train value`): one feature transformer `ft`
//! `[768·K, N]` shared by both perspectives (see [`perspective_feature`]; under the card's
//! [`ValueInputLayout::HorizontalMirror`] a perspective whose king stands on files e–h sees
//! the board mirrored a ↔ h, and under [`ValueInputLayout::MirrorKingBuckets`] its king's
//! square also picks one of `K` = 4 sets of 768 rows; a perspective is computed afresh
//! when its king crosses to another half or bucket), giving an
//! accumulator per side; the side to move's and then the opponent's accumulator go
//! through SCReLU (`clamp(x, 0, 1)²`) into the output layer `out` `[2N, B]`, whose column
//! for the position's number of pieces ([`value_output_bucket`]; `B` = 1: one column for
//! all) gives a logit `o` of the side to move's expected score, and `o ×
//! centipawns_per_unit` centipawns.
//!
//! The float weights are quantised at load: the feature transformer × 255 as `i16`
//! ([`VALUE_FT_QUANT`]), the output weights × `Q` as `i16`, where `Q` is the largest power of
//! two from 64 ([`VALUE_OUT_QUANT`]) up that keeps every output weight within ±127 (a net
//! with small output weights keeps more of their precision), the output biases × 255 × `Q`. SCReLU is computed as `(v · w) · v` with `v = clamp(acc, 0, 255)`:
//! `v · w` fits in 16 bits because `|w| ≤ 127`, the product with `v` is summed in 32-bit
//! lanes and the lanes in 64 bits, so no sum can overflow. Both perspectives are updated
//! incrementally from the features a move changes. The kernels are plain loops compiled
//! for AVX-512, AVX2 and the baseline, chosen at run time.

use deepchess_core::arch::{
    VALUE_CENTIPAWNS_PER_UNIT, VALUE_FT_QUANT, VALUE_FT_STACK, VALUE_FT_WEIGHT, VALUE_MAX_OUTPUT_BUCKETS,
    VALUE_OUT_QUANT, VALUE_OUT_STACK, VALUE_OUT_WEIGHT_LIMIT, ValueInputLayout, value_output_bucket,
    value_output_bucket_major,
};
use deepchess_core::features::{MAX_ACTIVE, PERSPECTIVE_FEATURES, perspective_feature};
use deepchess_core::{FeatureBits, Model};
use shakmaty::Color;

use super::NetworkError;

/// The evaluation net with quantised weights.
#[derive(Clone, Debug)]
pub struct ValueNet {
    width: usize,
    /// `[768·K, width]` row-major: row `r` is input `r`'s contribution.
    ft_weight: Vec<i16>,
    ft_bias: Vec<i16>,
    /// `[buckets][2 × width]`: per output bucket, the side to move's half, then the
    /// opponent's.
    out_weight: Vec<i16>,
    /// Output biases × 255 × `out_quant`, one per bucket.
    out_bias: Vec<i64>,
    /// Scale `Q` of the output weights.
    out_quant: i32,
    centipawns_per_unit: f32,
    /// How each perspective indexes its inputs (the card's).
    layout: ValueInputLayout,
}

/// The accumulators of one position (White's perspective, then Black's, `width` each),
/// with the 773-encoding features they were built from.
#[derive(Clone, Debug)]
pub struct Accumulator {
    values: Vec<i16>,
    features: FeatureBits,
}

impl Accumulator {
    /// The features this accumulator holds.
    pub fn features(&self) -> &FeatureBits {
        &self.features
    }

    /// White's perspective, then Black's (the feature transformer's outputs × 255).
    pub fn perspectives(&self) -> (&[i16], &[i16]) {
        self.values.split_at(self.values.len() / 2)
    }

    /// Both perspectives in one slice: White's, then Black's.
    pub fn values(&self) -> &[i16] {
        &self.values
    }
}

impl ValueNet {
    /// Reads and quantises the stacks `ft` and `out` of `model`.
    pub fn from_model(model: &Model) -> Result<ValueNet, NetworkError> {
        let invalid = |message: String| NetworkError::Invalid { kind: "value", message };
        let missing = |stack: &str| NetworkError::MissingStack { kind: "value", stack: stack.to_string() };
        let ft = model.layer(VALUE_FT_STACK, 0).ok_or_else(|| missing(VALUE_FT_STACK))?;
        let out = model.layer(VALUE_OUT_STACK, 0).ok_or_else(|| missing(VALUE_OUT_STACK))?;
        let (width, buckets) = (ft.outputs, out.outputs);
        let layout = model.card.value_input_layout().map_err(invalid)?;
        if ft.inputs != layout.inputs()
            || !width.is_multiple_of(16)
            || out.inputs != 2 * width
            || !(1..=VALUE_MAX_OUTPUT_BUCKETS).contains(&buckets)
        {
            return Err(invalid(format!(
                "layers ft [{}, {}] and out [{}, {}]; expected [{}, N] (the input layout {}: {PERSPECTIVE_FEATURES} inputs per king bucket; N a multiple of 16) and [2N, B] (1 to {VALUE_MAX_OUTPUT_BUCKETS} output buckets B)",
                ft.inputs,
                ft.outputs,
                out.inputs,
                out.outputs,
                layout.inputs(),
                layout.name()
            )));
        }
        let centipawns_per_unit = model
            .card
            .centipawns_per_unit()
            .ok_or_else(|| invalid(format!("the card's `output` lacks a positive `{VALUE_CENTIPAWNS_PER_UNIT}`")))?
            as f32;
        let quantise = |values: &[f32], scale: i32, limit: f32, name: &str| {
            values
                .iter()
                .map(|&v| {
                    if v.is_finite() && v.abs() <= limit {
                        Ok((v * scale as f32).round() as i16)
                    } else {
                        Err(invalid(format!("tensor {name} holds {v}, outside ±{limit} (quantised × {scale} to i16)")))
                    }
                })
                .collect::<Result<Vec<i16>, NetworkError>>()
        };
        let ft_limit = f32::from(i16::MAX) / VALUE_FT_QUANT as f32;
        if let Some(bad) = out.bias.iter().find(|b| !b.is_finite()) {
            return Err(invalid(format!("an output bias is {bad}")));
        }
        let largest = out.weight.iter().fold(0.0f32, |m, w| m.max(w.abs()));
        let mut out_quant = VALUE_OUT_QUANT;
        while out_quant < 1 << 14 && largest * (2 * out_quant) as f32 <= 127.0 {
            out_quant *= 2;
        }
        Ok(ValueNet {
            width,
            ft_weight: quantise(ft.weight, VALUE_FT_QUANT, ft_limit, VALUE_FT_WEIGHT)?,
            ft_bias: quantise(ft.bias, VALUE_FT_QUANT, ft_limit, "ft.0.bias")?,
            out_weight: quantise(
                &value_output_bucket_major(out.weight, buckets),
                out_quant,
                VALUE_OUT_WEIGHT_LIMIT,
                "out.0.weight",
            )?,
            out_bias: out
                .bias
                .iter()
                .map(|&b| (f64::from(b) * f64::from(VALUE_FT_QUANT * out_quant)).round() as i64)
                .collect(),
            out_quant,
            centipawns_per_unit,
            layout,
        })
    }

    /// Width N of each accumulator.
    pub fn accumulator_width(&self) -> usize {
        self.width
    }

    /// Number of output buckets (1: one output for every position).
    pub fn output_buckets(&self) -> usize {
        self.out_bias.len()
    }

    /// How each perspective indexes its inputs.
    pub fn input_layout(&self) -> ValueInputLayout {
        self.layout
    }

    /// Centipawns of one output unit (the card's scale).
    pub fn centipawns_per_unit(&self) -> f32 {
        self.centipawns_per_unit
    }

    /// An accumulator computed from scratch.
    pub fn accumulator(&self, features: &FeatureBits) -> Accumulator {
        let mut accumulator = Accumulator { values: Vec::new(), features: *features };
        self.refresh(features, &mut accumulator);
        accumulator
    }

    /// Makes `accumulator` that of `features`, computed from scratch in its own storage.
    pub fn refresh(&self, features: &FeatureBits, accumulator: &mut Accumulator) {
        accumulator.values.resize(2 * self.width, 0);
        let (white, black) = accumulator.values.split_at_mut(self.width);
        self.refresh_view(features, Color::White, white);
        self.refresh_view(features, Color::Black, black);
        accumulator.features = *features;
    }

    /// Makes `out` `view`'s perspective of `features`, computed from scratch.
    fn refresh_view(&self, features: &FeatureBits, view: Color, out: &mut [i16]) {
        let map = self.layout.map(features.king_square(view));
        let mut rows = [0u16; MAX_ACTIVE];
        let mut n = 0;
        for f in features.pieces() {
            rows[n] = map.row(perspective_feature(f, view));
            n += 1;
        }
        kernels::update(out, &self.ft_bias, &self.ft_weight, &rows[..n], &[]);
    }

    /// Makes `child` the accumulator of `features` by updating `parent`'s with the pieces
    /// that differ (rows of the feature transformer added and removed, both perspectives).
    #[inline(always)]
    pub fn update(&self, parent: &Accumulator, features: &FeatureBits, child: &mut Accumulator) {
        let changes = Changes::between(&parent.features, features, self.layout);
        self.apply(parent, &changes, features, child);
    }

    /// Makes `out` the accumulator of `features` from `previous`, that of any position
    /// (the last leaf a search judged): updated where fewer rows differ than the position
    /// has pieces, else computed from scratch. The same values either way.
    pub fn follow(&self, previous: &Accumulator, features: &FeatureBits, out: &mut Accumulator) {
        let changes = Changes::between(&previous.features, features, self.layout);
        if changes.added + changes.removed < features.piece_count() {
            self.apply(previous, &changes, features, out);
        } else {
            self.refresh(features, out);
        }
    }

    /// Makes `child` the accumulator of `features` from `parent`'s and their `changes`
    /// (a perspective whose king crossed to another half or king bucket is computed from
    /// scratch).
    #[inline]
    fn apply(&self, parent: &Accumulator, changes: &Changes, features: &FeatureBits, child: &mut Accumulator) {
        let (added, removed) = (&changes.rows[0], &changes.rows[1]);
        let (n_added, n_removed) = (changes.added, changes.removed);
        child.values.resize(2 * self.width, 0);
        let (white, black) = child.values.split_at_mut(self.width);
        let (parent_white, parent_black) = parent.values.split_at(self.width);
        for (v, (out, base)) in [(white, parent_white), (black, parent_black)].into_iter().enumerate() {
            if changes.refresh[v] {
                self.refresh_view(features, [Color::White, Color::Black][v], out);
            } else {
                kernels::update(out, base, &self.ft_weight, &added[v][..n_added], &removed[v][..n_removed]);
            }
        }
        child.features = *features;
    }

    /// Scale `Q` the output weights were quantised with (64 or a larger power of two).
    pub fn output_quantisation(&self) -> i32 {
        self.out_quant
    }

    /// The raw output for the side to move, in units of `1 / (255 × Q)` of a logit.
    fn raw(&self, accumulator: &Accumulator) -> i64 {
        let (white, black) = accumulator.values.split_at(self.width);
        let (us, them) = if accumulator.features.black_to_move() { (black, white) } else { (white, black) };
        let bucket = value_output_bucket(accumulator.features.piece_count(), self.out_bias.len());
        let (w_us, w_them) = self.out_weight[bucket * 2 * self.width..][..2 * self.width].split_at(self.width);
        let sum = kernels::screlu_dot(us, w_us) + kernels::screlu_dot(them, w_them);
        sum / i64::from(VALUE_FT_QUANT) + self.out_bias[bucket]
    }

    /// The side to move's score in centipawns.
    pub fn centipawns(&self, accumulator: &Accumulator) -> i32 {
        let raw = self.raw(accumulator) as f64;
        (raw * f64::from(self.centipawns_per_unit) / f64::from(VALUE_FT_QUANT * self.out_quant)).round() as i32
    }

    /// White's score logit (`sigmoid` of it is White's expected score).
    pub fn logit(&self, accumulator: &Accumulator) -> f32 {
        let o = self.raw(accumulator) as f32 / (VALUE_FT_QUANT * self.out_quant) as f32;
        if accumulator.features.black_to_move() { -o } else { o }
    }

    /// White's score logit of a position computed from scratch.
    pub fn evaluate(&self, features: &FeatureBits) -> f32 {
        self.logit(&self.accumulator(features))
    }

    /// White's score in centipawns of a position computed from scratch.
    pub fn evaluate_centipawns(&self, features: &FeatureBits) -> i32 {
        let cp = self.centipawns(&self.accumulator(features));
        if features.black_to_move() { -cp } else { cp }
    }

    /// Centipawns of a White logit returned by [`ValueNet::logit`] or [`ValueNet::evaluate`].
    pub fn logit_to_centipawns(&self, logit: f32) -> f32 {
        logit * self.centipawns_per_unit
    }
}

/// The feature-transformer rows that differ between two positions: `rows[0]` added,
/// `rows[1]` removed, each from both perspectives (white's, black's); `refresh[v]` when
/// perspective `v` must be computed from scratch instead (its king changed halves under
/// horizontal mirroring, or king buckets, which changes every row of it).
struct Changes {
    rows: [[[u16; MAX_ACTIVE]; 2]; 2],
    added: usize,
    removed: usize,
    refresh: [bool; 2],
}

impl Changes {
    /// The pieces of `new` not in `old` and those of `old` not in `new`.
    #[inline(always)]
    fn between(old: &FeatureBits, new: &FeatureBits, layout: ValueInputLayout) -> Changes {
        let maps = |f: &FeatureBits| [Color::White, Color::Black].map(|c| layout.map(f.king_square(c)));
        let (old_maps, new_maps) = (maps(old), maps(new));
        let refresh = [old_maps[0] != new_maps[0], old_maps[1] != new_maps[1]];
        let mut changes = Changes { rows: [[[0; MAX_ACTIVE]; 2]; 2], added: 0, removed: 0, refresh };
        old.piece_changes(new, |f, add| {
            let (list, n) = if add {
                (&mut changes.rows[0], &mut changes.added)
            } else {
                (&mut changes.rows[1], &mut changes.removed)
            };
            list[0][*n] = new_maps[0].row(perspective_feature(f, Color::White));
            list[1][*n] = new_maps[1].row(perspective_feature(f, Color::Black));
            *n += 1;
        });
        changes
    }
}

/// Integer kernels, each written once as a plain loop and compiled for AVX-512, AVX2 and
/// the baseline, chosen at run time.
pub mod kernels {
    use deepchess_core::arch::VALUE_FT_QUANT;

    /// Lanes of the SCReLU dot product's 32-bit partial sums (widths are multiples of 16;
    /// a lane sums `width / 16` products of at most 255 · 255 · 127, so widths up to 2,048
    /// cannot overflow it).
    const LANES: usize = 16;

    /// `out = base + Σ W[a, :] − Σ W[r, :]` over `a` in `add` and `r` in `remove`, in one
    /// pass (a child's accumulator from its parent's, or one from the biases).
    #[inline]
    pub fn update(out: &mut [i16], base: &[i16], weight: &[i16], add: &[u16], remove: &[u16]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU supports AVX-512BW (checked just above).
                return unsafe { update_avx512(out, base, weight, add, remove) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { update_avx2(out, base, weight, add, remove) };
            }
        }
        update_generic(out, base, weight, add, remove)
    }

    /// `Σ clamp(acc[i], 0, 255)² · w[i]`: the SCReLU half of the output layer.
    #[inline]
    pub fn screlu_dot(acc: &[i16], weight: &[i16]) -> i64 {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU supports AVX-512BW (checked just above).
                return unsafe { screlu_dot_avx512(acc, weight) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { screlu_dot_avx2(acc, weight) };
            }
        }
        screlu_dot_generic(acc, weight)
    }

    /// The portable kernel of [`update`] (the width is a multiple of 16): blocks of the
    /// output stay in registers while the rows stream by.
    #[inline(always)]
    pub fn update_generic(out: &mut [i16], base: &[i16], weight: &[i16], add: &[u16], remove: &[u16]) {
        debug_assert!(out.len().is_multiple_of(LANES) && out.len() == base.len());
        let mut start = 0;
        while start + 8 * LANES <= out.len() {
            update_block::<{ 8 * LANES }>(out, base, weight, add, remove, start);
            start += 8 * LANES;
        }
        while start < out.len() {
            update_block::<LANES>(out, base, weight, add, remove, start);
            start += LANES;
        }
    }

    /// Outputs `start..start + B` of [`update_generic`].
    #[inline(always)]
    fn update_block<const B: usize>(
        out: &mut [i16],
        base: &[i16],
        weight: &[i16],
        add: &[u16],
        remove: &[u16],
        start: usize,
    ) {
        let width = out.len();
        let mut acc: [i16; B] = base[start..start + B].try_into().expect("block");
        for &a in add {
            let row = &weight[usize::from(a) * width + start..][..B];
            acc.iter_mut().zip(row).for_each(|(x, w)| *x = x.wrapping_add(*w));
        }
        for &r in remove {
            let row = &weight[usize::from(r) * width + start..][..B];
            acc.iter_mut().zip(row).for_each(|(x, w)| *x = x.wrapping_sub(*w));
        }
        out[start..start + B].copy_from_slice(&acc);
    }

    /// The portable kernel of [`screlu_dot`] (the width is a multiple of 16). Each lane
    /// sums two adjacent products `(v·w)·v` per step, the shape of `pmaddwd`, which the
    /// compiler then uses.
    #[inline(always)]
    pub fn screlu_dot_generic(acc: &[i16], weight: &[i16]) -> i64 {
        debug_assert!(acc.len().is_multiple_of(LANES) && acc.len() == weight.len());
        let mut lanes = [0i32; LANES];
        for (a, w) in acc.chunks_exact(2 * LANES).zip(weight.chunks_exact(2 * LANES)) {
            let mut v = [0i16; 2 * LANES];
            let mut vw = [0i16; 2 * LANES];
            for k in 0..2 * LANES {
                v[k] = a[k].clamp(0, VALUE_FT_QUANT as i16);
                // |w| ≤ 127 and v ≤ 255: v·w fits in i16.
                vw[k] = v[k].wrapping_mul(w[k]);
            }
            for k in 0..LANES {
                lanes[k] +=
                    i32::from(vw[2 * k]) * i32::from(v[2 * k]) + i32::from(vw[2 * k + 1]) * i32::from(v[2 * k + 1]);
            }
        }
        let tail = acc.len() - acc.len() % (2 * LANES);
        for (lane, (&a, &w)) in lanes.iter_mut().zip(acc[tail..].iter().zip(&weight[tail..])) {
            let v = a.clamp(0, VALUE_FT_QUANT as i16);
            *lane += i32::from(v.wrapping_mul(w)) * i32::from(v);
        }
        lanes.iter().map(|&x| i64::from(x)).sum()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    fn update_avx512(out: &mut [i16], base: &[i16], weight: &[i16], add: &[u16], remove: &[u16]) {
        update_generic(out, base, weight, add, remove)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn update_avx2(out: &mut [i16], base: &[i16], weight: &[i16], add: &[u16], remove: &[u16]) {
        update_generic(out, base, weight, add, remove)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    fn screlu_dot_avx512(acc: &[i16], weight: &[i16]) -> i64 {
        screlu_dot_generic(acc, weight)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn screlu_dot_avx2(acc: &[i16], weight: &[i16]) -> i64 {
        screlu_dot_generic(acc, weight)
    }
}
