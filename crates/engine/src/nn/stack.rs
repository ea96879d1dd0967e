//! A stack of fully connected layers, copied out of a [`Model`] into owned buffers.

use deepchess_core::model::LayerRef;
use deepchess_core::{Activation, Model};

use super::NetworkError;
use super::kernels::{Bf16, ONES, accumulate_rows, dense_forward, dot};

/// How a stack stores the weights of its dense layers (all but the first, sparse one,
/// whose rows also feed incremental accumulators and stay f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// f32 everywhere.
    #[default]
    F32,
    /// bfloat16 weights in the dense layers (f32 arithmetic): half the memory traffic.
    Bf16Dense,
}

/// One fully connected layer: `[inputs, outputs]` row-major weights and biases.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// Weights, row `i` holds input `i`'s contribution to every output.
    pub weight: Vec<f32>,
    /// Biases.
    pub bias: Vec<f32>,
    /// The weights in bfloat16, used instead of `weight` when present.
    pub bf16: Option<Vec<Bf16>>,
}

impl Layer {
    fn from_ref(layer: LayerRef<'_>) -> Layer {
        Layer {
            inputs: layer.inputs,
            outputs: layer.outputs,
            weight: layer.weight.to_vec(),
            bias: layer.bias.to_vec(),
            bf16: None,
        }
    }

    /// `out = bias + input · W` with the stored precision.
    fn forward(&self, out: &mut [f32], input: &[f32]) {
        match &self.bf16 {
            Some(weight) => dense_forward(out, &self.bias, weight, input),
            None => dense_forward(out, &self.bias, &self.weight, input),
        }
    }

    /// The rows of this layer whose input index lies in `range` (a view of part of the input).
    pub fn rows(&self, range: std::ops::Range<usize>) -> &[f32] {
        &self.weight[range.start * self.outputs..range.end * self.outputs]
    }
}

/// Scratch buffers for a forward pass, sized for the widest layer of any stack.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
}

/// A chain of layers with an activation after each hidden layer (and after the last one
/// when the stack says so).
#[derive(Clone, Debug)]
pub struct Stack {
    /// Tensor name prefix.
    pub name: String,
    /// Layers, input first.
    pub layers: Vec<Layer>,
    activation: Activation,
    final_activation: bool,
    /// The last layer's weights by output (`[outputs, inputs]`), for [`Stack::outputs_at`].
    last_by_output: Vec<f32>,
}

impl Stack {
    /// Copies stack `name` out of `model` in f32.
    pub fn from_model(model: &Model, name: &str) -> Result<Stack, NetworkError> {
        Stack::with_precision(model, name, Precision::F32)
    }

    /// Copies stack `name` out of `model`, storing its dense layers in `precision`.
    pub fn with_precision(model: &Model, name: &str, precision: Precision) -> Result<Stack, NetworkError> {
        let missing = || NetworkError::MissingStack { kind: model.card.kind.name(), stack: name.to_string() };
        let spec = model.stack(name).ok_or_else(missing)?;
        let layers = model.layers(name).ok_or_else(missing)?;
        let mut layers: Vec<Layer> = layers.into_iter().map(Layer::from_ref).collect();
        if precision == Precision::Bf16Dense {
            for layer in layers.iter_mut().skip(1) {
                layer.bf16 = Some(layer.weight.iter().map(|&w| Bf16::from_f32(w)).collect());
            }
        }
        Ok(Stack {
            name: name.to_string(),
            layers,
            activation: spec.activation,
            final_activation: spec.final_activation,
            last_by_output: Vec::new(),
        })
    }

    /// Keeps a copy of the last layer's weights by output, so that [`Stack::outputs_at`]
    /// reads each output's weights in one run.
    pub fn keep_weights_by_output(&mut self) {
        let last = self.layers.last().expect("a stack has layers");
        let (inputs, outputs) = (last.inputs, last.outputs);
        self.last_by_output = (0..outputs * inputs).map(|k| last.weight[(k % inputs) * outputs + k / inputs]).collect();
    }

    /// Some outputs of a stack of two layers or more whose weights are kept by output
    /// ([`Stack::keep_weights_by_output`]): `out[k]` for output `columns[k]`, run from the
    /// first layer's pre-activation `first`; the last layer computes just those columns.
    pub fn outputs_at(&self, first: &[f32], columns: &[usize], out: &mut [f32], scratch: &mut Scratch) {
        debug_assert!(self.layers.len() >= 2 && !self.last_by_output.is_empty(), "weights kept by output");
        let last = self.layers.last().expect("a stack has layers");
        scratch.a.clear();
        scratch.a.extend_from_slice(first);
        self.hidden_layers(scratch);
        for (o, &c) in out.iter_mut().zip(columns) {
            *o = last.bias[c] + dot(&scratch.a, &self.last_by_output[c * last.inputs..(c + 1) * last.inputs]);
        }
        if self.final_activation {
            activate(self.activation, out);
        }
    }

    /// Turns the first layer's pre-activation in `scratch.a` into the last layer's input
    /// (a stack of two layers or more): the activation, then every layer but the last.
    fn hidden_layers(&self, scratch: &mut Scratch) {
        let Scratch { a, b } = scratch;
        activate(self.activation, a);
        for layer in &self.layers[1..self.layers.len() - 1] {
            b.resize(layer.outputs, 0.0);
            layer.forward(b, a);
            activate(self.activation, b);
            std::mem::swap(a, b);
        }
    }

    /// Output width.
    pub fn outputs(&self) -> usize {
        self.layers.last().expect("a stack has layers").outputs
    }

    /// Width of the first layer's output.
    pub fn first_width(&self) -> usize {
        self.layers[0].outputs
    }

    /// Pre-activation of the first layer for a 0/1 input given by its active indices.
    pub fn first_layer_sparse(&self, active: &[u16], out: &mut [f32]) {
        let layer = &self.layers[0];
        out.copy_from_slice(&layer.bias);
        accumulate_rows(out, &layer.weight, active, &ONES[..active.len()]);
    }

    /// Runs the stack with the first layer's pre-activation written by `first` into a
    /// buffer of the first layer's width.
    pub fn forward_with<'s>(&self, scratch: &'s mut Scratch, first: impl FnOnce(&mut [f32])) -> &'s [f32] {
        scratch.a.resize(self.first_width(), 0.0);
        first(&mut scratch.a);
        self.propagate(scratch)
    }

    /// Runs the stack from the first layer's pre-activation `first` to the output.
    pub fn from_first<'s>(&self, first: &[f32], scratch: &'s mut Scratch) -> &'s [f32] {
        self.forward_with(scratch, |a| a.copy_from_slice(first))
    }

    /// Full forward pass for a 0/1 input given by its active indices.
    pub fn forward_sparse<'s>(&self, active: &[u16], scratch: &'s mut Scratch) -> &'s [f32] {
        self.forward_with(scratch, |a| self.first_layer_sparse(active, a))
    }

    /// Full forward pass for a dense input.
    pub fn forward_dense<'s>(&self, input: &[f32], scratch: &'s mut Scratch) -> &'s [f32] {
        self.forward_with(scratch, |a| self.layers[0].forward(a, input))
    }

    /// Runs layers 1.. on the first layer's pre-activation held in `scratch.a`.
    fn propagate<'s>(&self, scratch: &'s mut Scratch) -> &'s [f32] {
        if self.layers.len() > 1 {
            self.hidden_layers(scratch);
            let Scratch { a, b } = scratch;
            let last = self.layers.last().expect("a stack has layers");
            b.resize(last.outputs, 0.0);
            last.forward(b, a);
            std::mem::swap(a, b);
        }
        if self.final_activation {
            activate(self.activation, &mut scratch.a);
        }
        &scratch.a
    }
}

/// Applies `activation` in place.
pub fn activate(activation: Activation, values: &mut [f32]) {
    match activation {
        Activation::Relu => values.iter_mut().for_each(|v| *v = v.max(0.0)),
        Activation::LeakyRelu => values.iter_mut().for_each(|v| *v = if *v > 0.0 { *v } else { 0.01 * *v }),
        Activation::ClippedRelu => values.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0)),
        Activation::SquaredClippedRelu => values.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0).powi(2)),
    }
}
