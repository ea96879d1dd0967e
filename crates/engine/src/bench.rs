//! Benchmarks: the search bench (fixed positions, fixed depth, deterministic node count),
//! the MCTS bench (the same positions, fixed playouts) and single-thread network
//! throughput.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deepchess_core::{FeatureBits, SparseFeatures};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use shakmaty::{Chess, Position};

use crate::engine::Engine;
use crate::nn::{Code, Networks, Scratch};
use crate::position_history::Game;
use crate::search::eval::{self, EvalOptions};
use crate::search::history::Histories;
use crate::search::ordering::move_probabilities;
use crate::search::tt::Table;
use crate::search::{Control, Limits, SearchResult};

/// Positions of the search bench: openings, middlegames and endgames.
pub const BENCH_POSITIONS: [&str; 8] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "2r3k1/pp3ppp/2n1b3/3p4/3P4/2NB1N2/PP3PPP/4R1K1 b - - 3 20",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "8/8/4k3/8/2P5/4K3/8/8 w - - 0 1",
];

/// Default depth of the search bench: about 1.6 million nodes, 1–3 s on a desktop core, long
/// enough for a stable speed (OpenBench scales its time controls by it, as by Stockfish's).
pub const BENCH_DEPTH: u32 = 13;

/// One position's search-bench result.
#[derive(Clone, Debug)]
pub struct BenchPosition {
    /// The FEN searched.
    pub fen: &'static str,
    /// The search's result.
    pub result: SearchResult,
    /// Wall time.
    pub elapsed: Duration,
}

/// Searches every bench position to `depth` with the evaluation alpha-beta search
/// (`options`, the engine's defaults unless changed) on one thread, a fresh 16 MB table and
/// fresh histories each, so the node count depends only on the code, the options and the
/// networks.
pub fn search_bench(
    networks: &Networks,
    depth: u32,
    options: EvalOptions,
    mut each: impl FnMut(&BenchPosition),
) -> (u64, Duration) {
    let (mut nodes, mut elapsed) = (0, Duration::ZERO);
    for fen in BENCH_POSITIONS {
        let game = Game::from_uci(Some(fen), &[]).expect("bench positions are valid");
        let tt = Table::new(16);
        let start = Instant::now();
        let mut histories = Histories::default();
        let control = Control::unlimited(Some(depth));
        let result = eval::search(networks, &game, options, &tt, &mut histories, &control, 1, None, &mut |_| {});
        let position = BenchPosition { fen, result, elapsed: start.elapsed() };
        nodes += position.result.nodes;
        elapsed += position.elapsed;
        each(&position);
    }
    (nodes, elapsed)
}

/// Default playouts per position of the MCTS bench: about 0.1 s each on a desktop core,
/// the tree sizes of a 100 ms search.
pub const MCTS_BENCH_PLAYOUTS: u64 = 30_000;

/// Searches every bench position for `playouts` playouts with `engine` as set (`Search
/// mcts` and any other options), after a `ucinewgame` each (the tree dropped, its memory
/// kept) and one untimed search of the first position that brings the tree's memory in,
/// so that the time is the playouts' alone. Returns the playouts and the time.
pub fn mcts_bench(engine: &mut Engine, playouts: u64, mut each: impl FnMut(&BenchPosition)) -> (u64, Duration) {
    let search = |engine: &mut Engine, game: &Game| {
        engine.new_game();
        let limits = Limits { nodes: Some(playouts), ..Limits::default() };
        let start = Instant::now();
        let result = engine.go(game, &limits, Arc::default(), &mut |_| {}).expect("bench positions have moves");
        (result, start.elapsed())
    };
    let games: Vec<Game> =
        BENCH_POSITIONS.iter().map(|fen| Game::from_uci(Some(fen), &[]).expect("bench positions are valid")).collect();
    search(engine, &games[0]);
    let (mut total, mut elapsed) = (0, Duration::ZERO);
    for (fen, game) in BENCH_POSITIONS.into_iter().zip(&games) {
        let (result, time) = search(engine, game);
        let position = BenchPosition { fen, result, elapsed: time };
        total += position.result.nodes;
        elapsed += time;
        each(&position);
    }
    (total, elapsed)
}

/// One network throughput figure.
#[derive(Clone, Debug)]
pub struct Throughput {
    /// What was measured.
    pub name: &'static str,
    /// Operations per second.
    pub per_second: f64,
}

/// Positions of a seeded random game, for the network bench.
fn sample_positions(count: usize, seed: u64) -> Vec<Chess> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut positions = Vec::with_capacity(count);
    let mut position = Chess::default();
    while positions.len() < count {
        let moves = position.legal_moves();
        if moves.is_empty() || position.halfmoves() > 60 {
            position = Chess::default();
            continue;
        }
        position.play_unchecked(moves[rng.random_range(0..moves.len())]);
        positions.push(position.clone());
    }
    positions
}

/// Runs `op` over and over for about `budget` and returns operations per second.
fn rate(budget: Duration, ops_per_call: usize, mut op: impl FnMut(usize)) -> f64 {
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < budget {
        for _ in 0..64 {
            op(calls);
            calls += 1;
        }
    }
    (calls * ops_per_call) as f64 / start.elapsed().as_secs_f64()
}

/// Single-thread throughput of every network, each measured for about `budget`.
pub fn nn_bench(networks: &Networks, budget: Duration) -> Vec<Throughput> {
    let positions = sample_positions(512, 2016);
    let features: Vec<SparseFeatures> = positions.iter().map(SparseFeatures::from_position).collect();
    let n = positions.len();
    let mut scratch = Scratch::default();
    let comparator = &networks.comparator;
    let codes: Vec<Code> = features.iter().map(|f| comparator.code(f, &mut scratch)).collect();
    let mut sink = 0.0f32;
    let mut out = Vec::new();

    let per_second =
        rate(budget, 1, |i| sink += comparator.compare(&codes[i % n], &codes[(i * 7 + 3) % n], &mut scratch));
    out.push(Throughput {
        name: "comparator comparisons/s (codes with cached head projections, as in search)",
        per_second,
    });
    let per_second = rate(budget, 1, |i| {
        sink += comparator.compare_codes(&codes[i % n].code, &codes[(i * 7 + 3) % n].code, &mut scratch)
    });
    out.push(Throughput { name: "comparator comparisons/s (whole head on two codes)", per_second });
    let per_second = rate(budget, 1, |i| sink += comparator.encode(&features[i % n], &mut scratch)[0]);
    out.push(Throughput { name: "Pos2Vec codes/s", per_second });
    let per_second = rate(budget, 1, |i| sink += comparator.code(&features[i % n], &mut scratch).code[0]);
    out.push(Throughput { name: "Pos2Vec codes + head projections/s", per_second });

    let value = &networks.value;
    let bits: Vec<FeatureBits> = positions.iter().map(FeatureBits::from_position).collect();
    let mut accumulators = [value.accumulator(&bits[0]), value.accumulator(&bits[0])];
    let per_second = rate(budget, 1, |i| {
        let (a, b) = accumulators.split_at_mut(1);
        let (parent, child) = if i % 2 == 0 { (&a[0], &mut b[0]) } else { (&b[0], &mut a[0]) };
        value.update(parent, &bits[i % n], child);
        sink += value.logit(child);
    });
    out.push(Throughput { name: "value evals/s (incremental accumulator)", per_second });
    let per_second = rate(budget, 1, |i| sink += value.evaluate(&bits[i % n]));
    out.push(Throughput { name: "value evals/s (from scratch)", per_second });

    let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
    let per_second = rate(budget, 1, |i| {
        sink += move_probabilities(&networks.movepred, &positions[i % n], &moves[i % n], &mut scratch)
            .first()
            .copied()
            .unwrap_or(0.0)
    });
    out.push(Throughput { name: "move-predictor positions/s (all legal moves scored)", per_second });
    std::hint::black_box(sink);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcts_bench_spends_the_playouts_on_every_position_and_repeats() {
        let mut engine = Engine::new(Networks::random(5));
        engine.set_option("Search", "mcts").unwrap();
        let mut seen = Vec::new();
        let (total, _) = mcts_bench(&mut engine, 300, |p| seen.push((p.fen, p.result.nodes, p.result.best)));
        assert_eq!(seen.len(), BENCH_POSITIONS.len());
        assert_eq!(total, seen.iter().map(|s| s.1).sum::<u64>());
        // Every position but the mate in one (proven at once) takes the playouts asked.
        let mate = BENCH_POSITIONS[6];
        assert!(seen.iter().all(|&(fen, nodes, _)| if fen == mate { nodes < 300 } else { nodes == 300 }), "{seen:?}");
        let mut again = Vec::new();
        mcts_bench(&mut engine, 300, |p| again.push((p.fen, p.result.nodes, p.result.best)));
        assert_eq!(seen, again, "a fresh tree each: the same playouts and moves");
    }
}
