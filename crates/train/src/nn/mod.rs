//! Network building blocks: parameters, the sparse first layer, the burn forward pass
//! and its gradients, losses and Adam.

pub mod adam;
pub mod graph;
pub mod loss;
pub mod params;
pub mod sparse;
