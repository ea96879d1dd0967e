//! deepchess training side: PGN ingestion into datasets, and training and evaluation of
//! the networks (Pos2Vec autoencoder, siamese comparator, move predictors, evaluation
//! net) with burn, on the CPU or (feature `wgpu`) a GPU.

pub mod bench;
pub mod checkpoint;
pub mod data;
pub mod device;
pub mod eval;
pub mod eval_positions;
pub mod guard;
pub mod metrics;
pub mod mix;
pub mod nn;
pub mod packed;
pub mod pgn;
pub mod prepare;
pub mod run;
pub mod trainers;
