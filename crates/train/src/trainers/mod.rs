//! The four trainers, one per network kind.

pub mod autoencoder;
pub mod comparator;
pub mod movepred;
pub mod value;
