//! Network building blocks: parameters, the sparse first layer, the burn forward pass
//! and its gradients, the data-parallel training step, losses, Adam, and the evaluation
//! net's hand-written passes with the factoriser of its king buckets.

pub mod adam;
pub mod factoriser;
pub mod graph;
pub mod loss;
pub mod params;
pub mod perspective;
pub mod sparse;
pub mod step;
