//! The student head's first layer on 8-bit integers: a position's accumulators through the
//! rows of both parts of the head (`F` and `S` side by side), as `u8` inputs times `i8`
//! weights summed in i32.
//!
//! An input is `x = clamp(a, 0, 255)² / 255²` of an accumulator entry `a`; it is kept as
//! `q = (clamp(a, 0, 255)² + 128) >> 8`, so `x ≈ q · 256 / 255²` (an error of at most
//! 0.002). The weights of each output are scaled to fill `i8` (`127 / max |w|`). Four
//! consecutive inputs meet four weights in a 32-bit lane, the shape of AVX-512 VNNI's
//! `vpdpbusd`, which runs 64 outputs × 4 inputs in four instructions; where the CPU lacks
//! it the same sums run as a plain loop compiled for AVX-512BW, AVX2 or the baseline,
//! chosen at run time. All-zero groups of four inputs are skipped.

use deepchess_core::arch::VALUE_FT_QUANT;

/// Outputs of one kernel block (four 512-bit registers of 16 i32 sums).
const BLOCK: usize = 64;
/// Most outputs (padded) of a projection: both parts of a head of
/// [`super::STUDENT_MAX_HIDDEN`] units.
const MAX_OUTPUTS: usize = 2 * super::STUDENT_MAX_HIDDEN;
/// Inputs quantised and summed per step (a stack buffer).
const CHUNK: usize = 512;

/// A dense layer `[inputs, outputs]` on quantised SCReLU inputs (no biases).
#[derive(Clone, Debug)]
pub struct Projection {
    inputs: usize,
    /// Outputs padded with zero weights to a multiple of [`BLOCK`].
    padded: usize,
    /// `[inputs / 4][padded][4]`: the weights of four consecutive inputs to each output.
    weight: Vec<i8>,
    /// Per output: the float value of one unit of its integer sum.
    unit: Vec<f32>,
}

impl Projection {
    /// Quantises the row-major float layer `weight` (`[inputs][outputs]`); `inputs` is a
    /// multiple of 4 and `outputs` at most [`MAX_OUTPUTS`] (the student's loader checks both).
    pub fn new(weight: &[f32], inputs: usize, outputs: usize) -> Projection {
        let padded = outputs.div_ceil(BLOCK) * BLOCK;
        assert!(inputs.is_multiple_of(4) && padded <= MAX_OUTPUTS && weight.len() == inputs * outputs);
        let grid = f32::from(VALUE_FT_QUANT as u16).powi(2) / 256.0;
        let scale: Vec<f32> = (0..outputs)
            .map(|j| {
                let max = (0..inputs).map(|i| weight[i * outputs + j].abs()).fold(0.0, f32::max);
                if max > 0.0 { 127.0 / max } else { 1.0 }
            })
            .collect();
        let mut quantised = vec![0i8; inputs * padded];
        for i in 0..inputs {
            for j in 0..outputs {
                let w = (weight[i * outputs + j] * scale[j]).round().clamp(-127.0, 127.0) as i8;
                quantised[((i / 4) * padded + j) * 4 + i % 4] = w;
            }
        }
        let unit = scale.iter().map(|s| 1.0 / (grid * s)).collect();
        Projection { inputs, padded, weight: quantised, unit }
    }

    /// `out[j] += Σ_i x_i W[i, j]` for the SCReLU inputs `x` of `values` (an accumulator's
    /// entries, `inputs` of them).
    pub fn forward(&self, values: &[i16], out: &mut [f32]) {
        debug_assert_eq!(values.len(), self.inputs);
        let mut totals = [0i32; MAX_OUTPUTS];
        let totals = &mut totals[..self.padded];
        let mut bytes = [0u8; CHUNK];
        for (c, chunk) in values.chunks(CHUNK).enumerate() {
            for (q, &a) in bytes.iter_mut().zip(chunk) {
                let c = a.clamp(0, VALUE_FT_QUANT as i16) as u16;
                *q = ((u32::from(c) * u32::from(c) + 128) >> 8) as u8;
            }
            let weight = &self.weight[c * CHUNK * self.padded..][..chunk.len() * self.padded];
            add_dot_sums(weight, &bytes[..chunk.len()], totals);
        }
        for ((o, &s), &unit) in out.iter_mut().zip(totals.iter()).zip(&self.unit) {
            *o += s as f32 * unit;
        }
    }
}

/// `sums[j] += Σ_k Σ_t input[4k + t] · weight[(k · outputs + j) · 4 + t]`, on the best
/// kernel the CPU has.
fn add_dot_sums(weight: &[i8], input: &[u8], sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vnni") && std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512F/BW and VNNI (checked just above).
            return unsafe { sums_vnni(weight, input, sums) };
        }
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            return unsafe { sums_avx512(weight, input, sums) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { sums_avx2(weight, input, sums) };
        }
    }
    sums_generic(weight, input, sums)
}

/// The portable kernel of [`add_dot_sums`].
#[inline(always)]
fn sums_generic(weight: &[i8], input: &[u8], sums: &mut [i32]) {
    let outputs = sums.len();
    for (k, x) in input.chunks_exact(4).enumerate() {
        if x == [0; 4] {
            continue;
        }
        let rows = &weight[k * outputs * 4..][..outputs * 4];
        for (s, w) in sums.iter_mut().zip(rows.chunks_exact(4)) {
            *s += (0..4).map(|t| i32::from(x[t]) * i32::from(w[t])).sum::<i32>();
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn sums_avx512(weight: &[i8], input: &[u8], sums: &mut [i32]) {
    sums_generic(weight, input, sums)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sums_avx2(weight: &[i8], input: &[u8], sums: &mut [i32]) {
    sums_generic(weight, input, sums)
}

/// [`add_dot_sums`] with `vpdpbusd`: per block of 64 outputs, four registers of sums stay put
/// while the groups of four inputs stream by.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn sums_vnni(weight: &[i8], input: &[u8], sums: &mut [i32]) {
    use std::arch::x86_64::*;
    let outputs = sums.len();
    debug_assert!(outputs.is_multiple_of(BLOCK) && weight.len() == input.len() * outputs);
    for block in (0..outputs).step_by(BLOCK) {
        let mut acc = [0, 1, 2, 3].map(|r| {
            let sums = &sums[block + 16 * r..][..16];
            // SAFETY: `sums` holds 16 i32, one 512-bit register.
            unsafe { _mm512_loadu_si512(sums.as_ptr().cast()) }
        });
        for (k, x) in input.chunks_exact(4).enumerate() {
            let x = u32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            if x == 0 {
                continue;
            }
            let x = _mm512_set1_epi32(x as i32);
            let rows = &weight[(k * outputs + block) * 4..][..4 * BLOCK];
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: `rows` holds 4 · 64 bytes, so bytes 64r..64r + 64 are in it.
                let w = unsafe { _mm512_loadu_si512(rows.as_ptr().add(64 * r).cast()) };
                *acc = _mm512_dpbusd_epi32(*acc, x, w);
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let out = &mut sums[block + 16 * r..][..16];
            // SAFETY: `out` holds 16 i32, one 512-bit register.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *acc) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(inputs: usize, outputs: usize) -> Vec<f32> {
        (0..inputs * outputs).map(|i| ((i * 37 % 101) as f32 - 50.0) / 200.0).collect()
    }

    #[test]
    fn every_kernel_gives_the_portable_sums() {
        let (inputs, outputs) = (64, 128);
        let projection = Projection::new(&layer(inputs, outputs), inputs, outputs);
        let input: Vec<u8> = (0..inputs).map(|i| if i % 3 == 0 { 0 } else { (i * 53 % 256) as u8 }).collect();
        let mut expected: Vec<i32> = (0..projection.padded as i32).collect();
        sums_generic(&projection.weight, &input, &mut expected);
        let mut got: Vec<i32> = (0..projection.padded as i32).collect();
        add_dot_sums(&projection.weight, &input, &mut got);
        assert_eq!(got, expected);
        assert!(expected.iter().any(|&s| s != 0));
    }

    #[test]
    fn forward_is_close_to_the_float_layer() {
        // more inputs than one chunk, outputs not a multiple of the block
        let (inputs, outputs) = (CHUNK + 96, 40);
        let weight = layer(inputs, outputs);
        let projection = Projection::new(&weight, inputs, outputs);
        assert_eq!(projection.unit.len(), outputs);
        let values: Vec<i16> = (0..inputs).map(|i| (i as i16 * 29 % 400) - 100).collect();
        let mut out = vec![0.5; outputs];
        projection.forward(&values, &mut out);
        for (j, o) in out.iter().enumerate() {
            let expected: f32 = 0.5
                + (0..inputs)
                    .map(|i| (f32::from(values[i].clamp(0, 255)) / 255.0).powi(2) * weight[i * outputs + j])
                    .sum::<f32>();
            assert!((o - expected).abs() < 0.02, "output {j}: {o} against {expected}");
        }
    }
}
