//! One forward pass in burn over a [`Params`] set, and the gradients it yields.
//!
//! A [`Graph`] turns the parameter buffers it needs into burn tensors (leaves that
//! require a gradient when training), runs layers and stacks, and after `backward`
//! collects every gradient back into flat buffers for [`super::adam::Adam`]. A stack
//! whose input is a [`SparseBatch`] computes its first layer by hand ([`super::sparse`])
//! and hands burn the pre-activation as a leaf; that leaf's gradient is scattered back
//! onto the active rows of the weight.

use std::collections::BTreeMap;

use burn::tensor::{Device, Gradients, Tensor, TensorData, activation};
use deepchess_core::Activation;

use super::params::Params;
use super::sparse::{self, SparseBatch};

/// Slope of the leaky ReLU for x < 0.
pub const LEAKY_SLOPE: f64 = 0.01;

/// Input of a stack (moved once into each stack call, so its size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Input<'b> {
    /// Sparse 0/1 rows (a batch of positions).
    Sparse(&'b SparseBatch),
    /// Dense rows.
    Dense(Tensor<2>),
}

struct SparseUse {
    layer: String,
    batch: SparseBatch,
    pre: Tensor<2>,
    inputs: usize,
    outputs: usize,
}

/// One forward pass. See the module docs.
pub struct Graph<'a> {
    params: &'a Params,
    device: Device,
    trainable: Box<dyn Fn(&str) -> bool + 'a>,
    weights: BTreeMap<String, Tensor<2>>,
    biases: BTreeMap<String, Tensor<1>>,
    sparse: Vec<SparseUse>,
}

impl<'a> Graph<'a> {
    /// A graph for inference: no gradients are tracked.
    pub fn inference(params: &'a Params, device: &Device) -> Graph<'a> {
        Graph::new(params, device, |_| false)
    }

    /// A graph where the tensors for which `trainable(name)` holds get gradients; the
    /// device must have autodiff enabled when any does.
    pub fn new(params: &'a Params, device: &Device, trainable: impl Fn(&str) -> bool + 'a) -> Graph<'a> {
        Graph {
            params,
            device: device.clone(),
            trainable: Box::new(trainable),
            weights: BTreeMap::new(),
            biases: BTreeMap::new(),
            sparse: Vec::new(),
        }
    }

    /// The device tensors live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A dense `[rows, cols]` tensor from row-major values (no gradient).
    pub fn constant(&self, values: Vec<f32>, rows: usize, cols: usize) -> Tensor<2> {
        Tensor::from_data(TensorData::new(values, [rows, cols]), &self.device)
    }

    fn leaf<const D: usize>(&self, name: &str, shape: [usize; D]) -> Tensor<D> {
        let t = Tensor::from_data(TensorData::new(self.params.get(name).to_vec(), shape), &self.device);
        if (self.trainable)(name) { t.require_grad() } else { t }
    }

    fn weight(&mut self, name: String, inputs: usize, outputs: usize) -> Tensor<2> {
        if let Some(t) = self.weights.get(&name) {
            return t.clone();
        }
        let t = self.leaf(&name, [inputs, outputs]);
        self.weights.insert(name, t.clone());
        t
    }

    fn bias(&mut self, name: String, outputs: usize) -> Tensor<1> {
        if let Some(t) = self.biases.get(&name) {
            return t.clone();
        }
        let t = self.leaf(&name, [outputs]);
        self.biases.insert(name, t.clone());
        t
    }

    fn widths(&self, stack: &str, i: usize) -> (usize, usize) {
        let layers = &self.params.stack(stack).layers;
        (layers[i], layers[i + 1])
    }

    /// Layer `i` of `stack` on dense input, before its activation: `x · W + b`.
    pub fn linear(&mut self, stack: &str, i: usize, x: Tensor<2>) -> Tensor<2> {
        let (inputs, outputs) = self.widths(stack, i);
        let w = self.weight(format!("{stack}.{i}.weight"), inputs, outputs);
        let b = self.bias(format!("{stack}.{i}.bias"), outputs);
        x.matmul(w) + b.unsqueeze::<2>()
    }

    /// Layer `i` of `stack` on sparse input, before its activation (see [`sparse`]).
    pub fn sparse_linear(&mut self, stack: &str, i: usize, batch: &SparseBatch) -> Tensor<2> {
        let (inputs, outputs) = self.widths(stack, i);
        let layer = format!("{stack}.{i}");
        let (w, b) = (self.params.get(&format!("{layer}.weight")), self.params.get(&format!("{layer}.bias")));
        let pre = self.constant(sparse::forward(batch, w, b), batch.rows(), outputs);
        if !(self.trainable)(&format!("{layer}.weight")) {
            return pre;
        }
        let pre = pre.require_grad();
        self.sparse.push(SparseUse { layer, batch: batch.clone(), pre: pre.clone(), inputs, outputs });
        pre
    }

    /// Runs layers `from..to` of `stack` with its activation after each hidden layer
    /// (and after the last when the stack says so).
    pub fn layers(&mut self, stack: &str, from: usize, to: usize, input: Input<'_>) -> Tensor<2> {
        let spec = self.params.stack(stack).clone();
        let last = spec.layers.len() - 2;
        let mut x = match input {
            Input::Sparse(batch) => self.sparse_linear(stack, from, batch),
            Input::Dense(x) => self.linear(stack, from, x),
        };
        for i in from..to {
            if i > from {
                x = self.linear(stack, i, x);
            }
            if i < last || spec.final_activation {
                x = activate(x, spec.activation);
            }
        }
        x
    }

    /// Runs the whole of `stack`.
    pub fn stack(&mut self, stack: &str, input: Input<'_>) -> Tensor<2> {
        let n = self.params.stack(stack).layers.len() - 1;
        self.layers(stack, 0, n, input)
    }

    /// Collects the gradients of every trainable tensor used, after `loss.backward()`.
    pub fn gradients(self, grads: &Gradients) -> BTreeMap<String, Vec<f32>> {
        let mut out = BTreeMap::new();
        let values = |t: Tensor<2>| t.into_data().try_into_vec::<f32>().expect("f32 gradient");
        for (name, t) in self.weights {
            if let Some(g) = t.grad(grads) {
                out.insert(name, values(g));
            }
        }
        for (name, t) in self.biases {
            if let Some(g) = t.grad(grads) {
                out.insert(name, values(g.unsqueeze::<2>()));
            }
        }
        for s in self.sparse {
            let Some(g) = s.pre.grad(grads) else { continue };
            let (gw, gb) = sparse::backward(&s.batch, &values(g), s.inputs, s.outputs);
            for (name, g) in [(format!("{}.weight", s.layer), gw), (format!("{}.bias", s.layer), gb)] {
                match out.get_mut(&name) {
                    Some(acc) => acc.iter_mut().zip(g).for_each(|(a, g): (&mut f32, f32)| *a += g),
                    None => {
                        out.insert(name, g);
                    }
                }
            }
        }
        out
    }
}

/// Applies a hidden activation.
pub fn activate(x: Tensor<2>, a: Activation) -> Tensor<2> {
    match a {
        Activation::Relu => activation::relu(x),
        Activation::LeakyRelu => activation::leaky_relu(x, LEAKY_SLOPE),
        Activation::ClippedRelu => x.clamp(0.0, 1.0),
        Activation::SquaredClippedRelu => x.clamp(0.0, 1.0).powi_scalar(2),
    }
}

/// A tensor's values, row-major.
pub fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 tensor")
}
