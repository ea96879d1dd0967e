//! deepchess engine: network inference, searches and the UCI protocol (issue 3).
//!
//! * [`nn`]: plain-Rust inference of the comparator, move predictors and evaluation net.

pub mod nn;
pub mod game;
pub mod search;
pub mod bench;
