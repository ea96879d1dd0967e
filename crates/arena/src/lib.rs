//! Evaluation tools of deepchess: EPD test suites with STS scoring, a robust UCI client for
//! engine processes, engine-vs-engine matches with the rules of chess and adjudication,
//! Elo statistics, the SPRT of engine testing, PGN output and games annotated by a search. Engines are always separate
//! processes, our own searches included (`deepchess uci`), so a crash or a hang costs a
//! game, never the run.

pub mod annotate;
pub mod elo;
pub mod epd;
pub mod game;
pub mod limits;
pub mod openings;
pub mod pgn;
pub mod pgn_game;
pub mod player;
pub mod sprt;
pub mod standings;
pub mod suite;
pub mod suite_runner;
pub mod tournament;
pub mod uci;
