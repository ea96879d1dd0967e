//! The trainers, one per network kind.

pub mod autoencoder;
pub mod comparator;
pub mod movepred;
pub mod student;
pub mod value;
