//! deepchess engine: network inference, searches and the UCI protocol.
//!
//! * [`nn`]: plain-Rust inference of the comparator, move predictors and evaluation net.
//! * [`search`]: evaluation alpha-beta, comparison alpha-beta, MCTS, policy players.
//! * [`engine`]: the engine facade, its options and the dispatch of `go`;
//!   [`uci_server`]: the protocol, engine side; [`position_history`]: a position with the
//!   keys of the positions before it; [`tablebase`]: Syzygy endgame tables;
//!   [`bench`](mod@bench): benchmarks.

pub mod bench;
pub mod engine;
pub mod nn;
pub mod position_history;
#[cfg(test)]
mod random_games;
pub mod search;
pub mod tablebase;
pub mod uci_server;
