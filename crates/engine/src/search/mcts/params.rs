//! Tuning constants (read from `MCTS_*` environment variables while tuning).

use std::sync::OnceLock;

/// The search's constants.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// PUCT exploration constant at the root.
    pub c_root: f64,
    /// PUCT exploration constant below the root.
    pub c_tree: f64,
    /// Visits over which the exploration constant grows by `ln`: `c·(1 + ln((N + B)/B))`.
    pub c_scale: f64,
    /// First-play urgency reduction.
    pub fpu: f64,
    /// Prior temperature at the root.
    pub t_root: f32,
    /// Prior temperature below the root.
    pub t_tree: f32,
    /// Plies of the leaf's capture search (0: the net alone).
    pub resolve_plies: usize,
    /// Visits from which a node's priors come from the move predictors (before: cheap
    /// capture heuristics); 0: always the predictors.
    pub prior_visits: u32,
}

/// The constants.
pub fn params() -> &'static Params {
    static PARAMS: OnceLock<Params> = OnceLock::new();
    PARAMS.get_or_init(|| {
        let get = |name: &str, default: f64| {
            std::env::var(format!("MCTS_{name}")).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
        };
        Params {
            c_root: get("C_ROOT", 1.2),
            c_tree: get("C_TREE", 0.9),
            c_scale: get("C_SCALE", 8000.0),
            fpu: get("FPU", 0.3),
            t_root: get("T_ROOT", 1.6) as f32,
            t_tree: get("T_TREE", 1.3) as f32,
            resolve_plies: get("RESOLVE", 6.0) as usize,
            prior_visits: get("PRIOR_VISITS", 0.0) as u32,
        }
    })
}
