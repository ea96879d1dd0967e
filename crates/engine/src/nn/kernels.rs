//! f32 kernels of fully connected layers with `[in, out]` row-major weights.
//!
//! Every kernel is written once as a plain loop over the output dimension (which the
//! compiler vectorises) and compiled twice: for the baseline target and, on x86-64, for
//! AVX-512 or AVX2 with fused multiply-add, chosen at run time. A layer is evaluated in
//! "axpy" form, `out += x[i] · W[i, :]` for every non-zero input `x[i]`, which skips the
//! zeros that ReLU-style activations and the sparse board encoding produce.

/// A stored weight: f32, or bfloat16 (the upper half of an f32, widened by a shift, so
/// the conversion vectorises; half the memory traffic for ~3 significant digits).
pub trait Weight: Copy + Send + Sync + 'static {
    /// The weight as f32.
    fn get(self) -> f32;
}

impl Weight for f32 {
    #[inline(always)]
    fn get(self) -> f32 {
        self
    }
}

/// A bfloat16 weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// Rounds an f32 to the nearest bfloat16 (ties to even).
    pub fn from_f32(value: f32) -> Bf16 {
        let bits = value.to_bits();
        let rounding = 0x7fff + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(rounding) >> 16) as u16)
    }
}

impl Weight for Bf16 {
    #[inline(always)]
    fn get(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// Adds `xs[k] · W[rows[k], :]` to `out` for every `k`; `weight` has `out.len()` columns.
#[inline]
pub fn accumulate_rows<W: Weight>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    debug_assert_eq!(rows.len(), xs.len());
    dispatch(out, weight, rows, xs)
}

/// Ones, the input value of every active feature of a sparse 0/1 layer.
pub const ONES: [f32; MAX_ROWS] = [1.0; MAX_ROWS];
/// Minus ones, for removing rows.
const MINUS_ONES: [f32; MAX_ROWS] = [-1.0; MAX_ROWS];
/// Most rows a sparse update may name at once.
pub const MAX_ROWS: usize = 2 * deepchess_core::features::MAX_ACTIVE;

/// `out = bias + input · W` (dense input), skipping zero inputs.
pub fn dense_forward<W: Weight>(out: &mut [f32], bias: &[f32], weight: &[W], input: &[f32]) {
    debug_assert_eq!(weight.len(), input.len() * out.len());
    out.copy_from_slice(bias);
    const CHUNK: usize = 256;
    let mut rows = [0u16; CHUNK];
    let mut xs = [0f32; CHUNK];
    for (c, chunk) in input.chunks(CHUNK).enumerate() {
        // Branch-free compaction of the non-zero inputs: about half of them are zero
        // after ReLU, in no predictable pattern.
        let mut n = 0;
        for (i, &x) in chunk.iter().enumerate() {
            rows[n] = (c * CHUNK + i) as u16;
            xs[n] = x;
            n += usize::from(x != 0.0);
        }
        accumulate_rows(out, weight, &rows[..n], &xs[..n]);
    }
}

/// `out += W[i, :]` for every index in `add` and `out -= W[i, :]` for every index in
/// `remove` (the accumulator update of a sparse first layer).
pub fn update_rows(out: &mut [f32], weight: &[f32], add: &[u16], remove: &[u16]) {
    for chunk in add.chunks(MAX_ROWS) {
        accumulate_rows(out, weight, chunk, &ONES[..chunk.len()]);
    }
    for chunk in remove.chunks(MAX_ROWS) {
        accumulate_rows(out, weight, chunk, &MINUS_ONES[..chunk.len()]);
    }
}

/// The dot product of two vectors of equal length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { dot_avx512(a, b) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_generic::<false>(a, b)
}

/// [`dot`] in 16 lanes summed at the end, so that the compiler keeps them in vector registers.
#[inline(always)]
fn dot_generic<const FUSED: bool>(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0f32; LANES];
    let (a_blocks, b_blocks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_blocks.remainder().iter().zip(b_blocks.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_blocks.zip(b_blocks) {
        for k in 0..LANES {
            acc[k] = madd::<FUSED>(x[k], y[k], acc[k]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
    dot_generic::<true>(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_generic::<true>(a, b)
}

#[inline(always)]
fn accumulate_generic<W: Weight, const FUSED: bool>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    let width = out.len();
    let mut start = 0;
    while start + 64 <= width {
        block::<W, 64, FUSED>(out, start, weight, rows, xs);
        start += 64;
    }
    while start + 16 <= width {
        block::<W, 16, FUSED>(out, start, weight, rows, xs);
        start += 16;
    }
    for k in start..width {
        let mut acc = out[k];
        for (&i, &x) in rows.iter().zip(xs) {
            acc = madd::<FUSED>(x, weight[usize::from(i) * width + k].get(), acc);
        }
        out[k] = acc;
    }
}

/// Outputs `start..start + B`, kept in registers while every input row streams by.
#[inline(always)]
fn block<W: Weight, const B: usize, const FUSED: bool>(
    out: &mut [f32],
    start: usize,
    weight: &[W],
    rows: &[u16],
    xs: &[f32],
) {
    let width = out.len();
    let mut acc = [0f32; B];
    acc.copy_from_slice(&out[start..start + B]);
    for (&i, &x) in rows.iter().zip(xs) {
        let offset = usize::from(i) * width + start;
        let row: &[W; B] = weight[offset..offset + B].try_into().expect("block");
        for k in 0..B {
            acc[k] = madd::<FUSED>(x, row[k].get(), acc[k]);
        }
    }
    out[start..start + B].copy_from_slice(&acc);
}

#[inline(always)]
fn madd<const FUSED: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FUSED { a.mul_add(b, c) } else { a * b + c }
}

#[cfg(target_arch = "x86_64")]
fn dispatch<W: Weight>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F (checked just above).
        unsafe { accumulate_avx512(out, weight, rows, xs) }
    } else if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        unsafe { accumulate_avx2(out, weight, rows, xs) }
    } else {
        accumulate_generic::<W, false>(out, weight, rows, xs)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn dispatch<W: Weight>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    accumulate_generic::<W, false>(out, weight, rows, xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn accumulate_avx512<W: Weight>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    accumulate_generic::<W, true>(out, weight, rows, xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn accumulate_avx2<W: Weight>(out: &mut [f32], weight: &[W], rows: &[u16], xs: &[f32]) {
    accumulate_generic::<W, true>(out, weight, rows, xs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_forward_matches_the_definition() {
        let (n_in, n_out) = (7, 70);
        let weight: Vec<f32> = (0..n_in * n_out).map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0).collect();
        let bias: Vec<f32> = (0..n_out).map(|j| j as f32 / 8.0).collect();
        let input = [0.5, 0.0, -1.0, 2.0, 0.0, 0.25, 1.0];
        let mut out = vec![0.0; n_out];
        dense_forward(&mut out, &bias, &weight, &input);
        for j in 0..n_out {
            let expected: f32 = bias[j] + (0..n_in).map(|i| input[i] * weight[i * n_out + j]).sum::<f32>();
            assert!((out[j] - expected).abs() < 1e-4, "output {j}: {} vs {expected}", out[j]);
        }
    }

    #[test]
    fn dot_matches_the_definition_at_every_length() {
        for n in [0, 1, 15, 16, 17, 64, 256, 259] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 29 % 53) as f32 - 26.0) / 16.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 11 % 31) as f32 - 15.0) / 8.0).collect();
            let expected: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - expected).abs() < 1e-3, "length {n}");
            assert!((dot_generic::<false>(&a, &b) - expected).abs() < 1e-3, "portable, length {n}");
        }
    }

    #[test]
    fn bf16_rounds_to_nearest() {
        assert_eq!(Bf16::from_f32(1.0).get(), 1.0);
        assert_eq!(Bf16::from_f32(-0.5).get(), -0.5);
        for x in [0.1f32, -3.3, 1e-3, 123.456] {
            assert!(((Bf16::from_f32(x).get() - x) / x).abs() < 1.0 / 256.0, "{x}");
        }
    }

    #[test]
    fn update_rows_adds_and_removes() {
        let weight: Vec<f32> = (0..4 * 3).map(|i| i as f32).collect();
        let mut out = vec![1.0; 3];
        update_rows(&mut out, &weight, &[1, 3], &[0]);
        assert_eq!(out, vec![1.0 + 3.0 + 9.0 - 0.0, 1.0 + 4.0 + 10.0 - 1.0, 1.0 + 5.0 + 11.0 - 2.0]);
    }
}
