//! The search's constants, each kept by games (docs/engine.md lists the SPRTs).

/// PUCT exploration constant at the root.
pub const C_ROOT: f64 = 0.8;
/// PUCT exploration constant below the root (0.45 against 0.6 with the 2-ply leaves: SPRT H1).
pub const C_TREE: f64 = 0.45;
/// Visits over which the exploration constant grows by `ln`: `c·(1 + ln((N + B)/B))` (4,000
/// and 16,000 against 8,000 at 1 s + 0.01 s: +17 and +9, both within the noise).
pub const C_SCALE: f64 = 8000.0;
/// Softmax temperature of the predictors' priors at the root.
pub const ROOT_TEMPERATURE: f32 = 1.6;
/// Softmax temperature of the predictors' priors below the root.
pub const TREE_TEMPERATURE: f32 = 1.3;
/// Deepest ply of the leaf's capture search: a capture and its recapture (against 6 plies:
/// 1.4× the playouts, +65 at 1 s + 0.01 s).
pub const RESOLVE_PLIES: usize = 2;
/// Visits from which a node's priors come from the move predictors (before that, cheap
/// priors from the captures; the root always has the predictors'). 2 against 4 once the
/// priors cost a fraction of a playout: SPRT H1.
pub const PRIOR_VISITS: u32 = 2;
/// Weight of the value of each move's position in the root's priors (SPRT H1, +34.9; 1.0:
/// +4.9, no decision): `p · exp(w · v)`, `v` the leaf evaluation's logit for the side that
/// plays it.
pub const VALUE_PRIOR_WEIGHT: f32 = 0.5;
/// The same weight in the priors of a node below the root with [`VALUE_PRIOR_VISITS`]
/// (1.0 against 0.5, the same work: SPRT pooled H1, +22.2 nElo over 1,114 pairs with
/// w512b).
pub const NODE_VALUE_PRIOR_WEIGHT: f32 = 1.0;
/// Visits from which a node's priors are weighted by the value of each move's position
/// (one leaf evaluation per move, once per node; 64 against never: SPRT H1, +70.6 nElo at
/// 2,000 playouts, 50.7% at 1 s + 0.01 s; 256: +17.1; 32 against 64: +25.0 at 2,000 playouts,
/// −13 at 1 s + 0.01 s).
pub const VALUE_PRIOR_VISITS: u32 = 64;
/// Share of the cheap capture priors kept in a node's priors once the move predictors'
/// arrive: `(1 − s)·predictors + s·cheap` (0.25 against none: SPRT H1, +34.3; 0.5 against
/// 0.25 once the cheap priors see checks and threats: SPRT H1, +40.3).
pub const CHEAP_PRIOR_SHARE: f32 = 0.5;
/// Cheap prior score of a quiet move that gives check from its destination, where other
/// quiet moves score 0 and captures that keep material 1.5 and more (against none: SPRT
/// H1, +61.8; +79 at 1 s + 0.01 s; 1.0 against 0.5: −1.0, no decision).
pub const QUIET_CHECK_SCORE: f32 = 0.5;
/// Cheap prior score of a quiet move that takes a threatened piece (attacked by a cheaper
/// piece, or attacked and undefended) to a square where SEE does not lose it (against 0:
/// SPRT pooled H1, +25.0 nElo; +45 at 1 s + 0.01 s).
pub const ESCAPE_SCORE: f32 = 0.5;
/// The soft time limit of a clock scaled for MCTS (within the hard limit, which 2.0 reaches):
/// the early stop (a root move that cannot be overtaken) left half of the plain limit unused
/// (2.0 against 1.0: +47 at 2 s + 0.02 s; 1.5: +37).
pub const SOFT_TIME_SCALE: f64 = 2.0;
