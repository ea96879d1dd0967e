//! Self-play data for the evaluation net: the evaluation search plays itself from random
//! openings, and every searched position becomes a dataset record (score, move, result).
//! Runs append game by game, so a killed run loses only its games in progress and a
//! restart resumes. See `docs/datagen.md`.
//!
//! * [`options`]: the settings; [`run`]: the worker threads and the writing loop.
//! * [`opening`], [`game`], [`adjudication`], [`player`]: playing one game.
//! * [`output`], [`summary`], [`pgn`], [`pgn_resume`]: the output directory; [`export`]: the text form.
//! * [`genfens`]: OpenBench's `genfens` workload (the openings of its datagen tests).
//! * [`siblings`]: sibling positions scored by the search, pairs for the student comparator.

pub mod adjudication;
pub mod error;
pub mod export;
pub mod game;
pub mod genfens;
pub mod opening;
pub mod options;
pub mod output;
pub mod pgn;
pub mod pgn_resume;
pub mod player;
pub mod rng;
pub mod run;
pub mod siblings;
pub mod summary;

pub use error::DatagenError;
pub use options::{GameOptions, RunOptions, Target};
pub use run::{RunReport, run};
pub use summary::Summary;
