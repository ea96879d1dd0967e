//! deepchess engine: network inference, searches and the UCI protocol (issue 3).
//!
//! * [`nn`]: plain-Rust inference of the comparator, move predictors and evaluation net.
//! * [`search`]: evaluation alpha-beta, comparison alpha-beta, MCTS, policy players.
//! * [`engine`]: options and dispatch; [`uci`]: the protocol; [`bench`]: benchmarks.

pub mod bench;
pub mod engine;
pub mod game;
pub mod nn;
pub mod search;
pub mod uci;
