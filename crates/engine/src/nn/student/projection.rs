//! The student head's first layer on 8-bit integers: a position's accumulators through the
//! rows of both parts of the head (`F` and `S` side by side), as `u8` inputs times `i8`
//! weights summed in i32.
//!
//! An input is `x = clamp(a, 0, 255)² / 255²` of an accumulator entry `a`; it is kept as
//! `q = (clamp(a, 0, 255)² + 128) >> 8`, so `x ≈ q · 256 / 255²` (an error of at most
//! 0.002). The weights of each output are scaled to fill `i8` (`127 / max |w|`). Four
//! consecutive inputs meet four weights in a 32-bit lane, the shape of AVX-512 VNNI's
//! `vpdpbusd`, which runs 64 outputs × 4 inputs in four instructions, the inputs quantised
//! 32 at a time; where the CPU lacks VNNI the same sums run as a plain loop compiled for
//! AVX-512BW, AVX2 or the baseline, chosen at run time, skipping all-zero groups.

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

    /// `out[j] = bias[j] + Σ_i x_i W[i, j]` for the SCReLU inputs `x` of `values` (an
    /// accumulator's entries, `inputs` of them); `out` and `bias` have the outputs' length.
    pub fn forward(&self, values: &[i16], bias: &[f32], out: &mut [f32]) {
        debug_assert_eq!(values.len(), self.inputs);
        let mut totals = [0i32; MAX_OUTPUTS];
        let totals = &mut totals[..self.padded];
        add_projection(&self.weight, values, totals);
        for (((o, &b), &s), &unit) in out.iter_mut().zip(bias).zip(totals.iter()).zip(&self.unit) {
            *o = b + s as f32 * unit;
        }
    }
}

/// The quantised SCReLU input of an accumulator entry `a`: `(clamp(a, 0, 255)² + 128) >> 8`.
#[inline(always)]
fn quantise(a: i16) -> u8 {
    let c = a.clamp(0, VALUE_FT_QUANT as i16) as u16;
    ((u32::from(c) * u32::from(c) + 128) >> 8) as u8
}

/// `sums[j] += Σ_i q(values[i]) · W[i, j]` ([`quantise`]; `weight` laid out as
/// [`Projection`]'s), on the best kernel the CPU has.
fn add_projection(weight: &[i8], values: &[i16], sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vnni") && std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512F/BW and VNNI (checked just above).
            return unsafe { projection_vnni(weight, values, sums) };
        }
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512BW (checked just above).
            return unsafe { projection_avx512(weight, values, sums) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { projection_avx2(weight, values, sums) };
        }
    }
    projection_generic(weight, values, sums)
}

/// The portable kernel of [`add_projection`]: inputs quantised a chunk at a time, groups of
/// four zero inputs skipped.
#[inline(always)]
fn projection_generic(weight: &[i8], values: &[i16], sums: &mut [i32]) {
    let outputs = sums.len();
    let mut bytes = [0u8; CHUNK];
    for (c, chunk) in values.chunks(CHUNK).enumerate() {
        for (q, &a) in bytes.iter_mut().zip(chunk) {
            *q = quantise(a);
        }
        let weight = &weight[c * CHUNK * outputs..][..chunk.len() * outputs];
        for (k, x) in bytes[..chunk.len()].chunks_exact(4).enumerate() {
            if x == [0; 4] {
                continue;
            }
            let rows = &weight[k * outputs * 4..][..outputs * 4];
            for (s, w) in sums.iter_mut().zip(rows.chunks_exact(4)) {
                *s += (0..4).map(|t| i32::from(x[t]) * i32::from(w[t])).sum::<i32>();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2")]
fn projection_avx512(weight: &[i8], values: &[i16], sums: &mut [i32]) {
    projection_generic(weight, values, sums)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn projection_avx2(weight: &[i8], values: &[i16], sums: &mut [i32]) {
    projection_generic(weight, values, sums)
}

/// [`add_projection`] with AVX-512: a chunk of inputs is quantised 64 at a time, then, per
/// block of 64 outputs, four registers of sums stay put while `vpdpbusd` adds the groups of
/// four inputs. (No group is skipped: the accumulators are dense, about 90% of their
/// entries positive, and in the comparison search no group of four was all zero.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn projection_vnni(weight: &[i8], values: &[i16], sums: &mut [i32]) {
    use std::arch::x86_64::*;
    let outputs = sums.len();
    debug_assert!(outputs.is_multiple_of(BLOCK) && weight.len() == values.len() * outputs);
    debug_assert!(values.len().is_multiple_of(4));
    let mut bytes = [0u8; CHUNK];
    let (zero, top, half) = (_mm512_setzero_si512(), _mm512_set1_epi16(VALUE_FT_QUANT as i16), _mm512_set1_epi16(128));
    for (c, chunk) in values.chunks(CHUNK).enumerate() {
        let whole = chunk.len() / 32 * 32;
        for start in (0..whole).step_by(32) {
            // SAFETY: `start + 32 <= whole <= chunk.len()`: 32 i16 of `chunk`.
            let a = unsafe { _mm512_loadu_si512(chunk.as_ptr().add(start).cast()) };
            let c = _mm512_min_epi16(_mm512_max_epi16(a, zero), top);
            // c² + 128 fits 16 unsigned bits (65,153 at most), so the wrapping product and
            // the logical shift give the unsigned result.
            let q = _mm512_cvtepi16_epi8(_mm512_srli_epi16::<8>(_mm512_add_epi16(_mm512_mullo_epi16(c, c), half)));
            // SAFETY: `start + 32 <= CHUNK`: 32 bytes of `bytes`.
            unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().add(start).cast(), q) };
        }
        for (q, &a) in bytes[whole..].iter_mut().zip(&chunk[whole..]) {
            *q = quantise(a);
        }
        let weight = &weight[c * CHUNK * outputs..][..chunk.len() * outputs];
        for block in (0..outputs).step_by(BLOCK) {
            let mut acc = [0, 1, 2, 3].map(|r| {
                let sums = &sums[block + 16 * r..][..16];
                // SAFETY: `sums` holds 16 i32, one 512-bit register.
                unsafe { _mm512_loadu_si512(sums.as_ptr().cast()) }
            });
            for (k, x) in bytes[..chunk.len()].chunks_exact(4).enumerate() {
                let x = _mm512_set1_epi32(i32::from_le_bytes([x[0], x[1], x[2], x[3]]));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(inputs: usize, outputs: usize) -> Vec<f32> {
        (0..inputs * outputs).map(|i| ((i * 37 % 101) as f32 - 50.0) / 200.0).collect()
    }

    #[test]
    fn every_kernel_gives_the_portable_sums() {
        // more inputs than one chunk, a tail shorter than 32, zero groups and saturated inputs
        let (inputs, outputs) = (CHUNK + 64 + 20, 128);
        let projection = Projection::new(&layer(inputs, outputs), inputs, outputs);
        let values: Vec<i16> =
            (0..inputs).map(|i| if (i / 4) % 3 == 0 { -7 } else { (i as i16 * 53 % 700) - 200 }).collect();
        let mut expected: Vec<i32> = (0..projection.padded as i32).collect();
        projection_generic(&projection.weight, &values, &mut expected);
        let mut got: Vec<i32> = (0..projection.padded as i32).collect();
        add_projection(&projection.weight, &values, &mut got);
        assert_eq!(got, expected);
        assert!(expected.iter().enumerate().any(|(j, &s)| s != j as i32));
    }

    #[test]
    fn forward_is_close_to_the_float_layer() {
        // more inputs than one chunk, outputs not a multiple of the block
        let (inputs, outputs) = (CHUNK + 96, 40);
        let weight = layer(inputs, outputs);
        let projection = Projection::new(&weight, inputs, outputs);
        assert_eq!(projection.unit.len(), outputs);
        let values: Vec<i16> = (0..inputs).map(|i| (i as i16 * 29 % 400) - 100).collect();
        let mut out = vec![0.0; outputs];
        projection.forward(&values, &vec![0.5; outputs], &mut out);
        for (j, o) in out.iter().enumerate() {
            let expected: f32 = 0.5
                + (0..inputs)
                    .map(|i| (f32::from(values[i].clamp(0, 255)) / 255.0).powi(2) * weight[i * outputs + j])
                    .sum::<f32>();
            assert!((o - expected).abs() < 0.02, "output {j}: {o} against {expected}");
        }
    }
}
