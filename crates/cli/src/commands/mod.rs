//! One module per subcommand: argument definitions and the glue to the library crates.

pub mod analyse;
pub mod bench;
pub mod datagen;
pub mod eval;
pub mod export;
pub mod genfens;
pub mod matches;
pub mod packing;
pub mod prepare;
pub mod siblings;
pub mod spsa;
pub mod sts;
pub mod train;
pub mod uci;
