//! A small synthetic dataset with a learnable signal: seeded random games biased
//! towards captures; each game's result is the sign of the final material balance and
//! each position's `[%eval]` is its material balance in centipawns.

use std::path::Path;

use deepchess_core::dataset::file_name;
use deepchess_core::{Content, DatasetWriter, GameInfo, PlayedMove, Record, Split};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Color, Position, Role};

fn material(pos: &Chess) -> i32 {
    let value = |role: Role| match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 0,
    };
    let board = pos.board();
    Role::ALL
        .iter()
        .map(|&r| {
            let w = (board.by_role(r) & board.by_color(Color::White)).count() as i32;
            let b = (board.by_role(r) & board.by_color(Color::Black)).count() as i32;
            value(r) * (w - b)
        })
        .sum()
}

/// Writes `games` synthetic games into `dir` as a prepared dataset (every fifth game in
/// the validation split); returns the number of training positions.
pub fn write_dataset(dir: &Path, games: usize, seed: u64) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut writers: Vec<((Content, Split), DatasetWriter)> = [Content::Positions, Content::Moves]
        .into_iter()
        .flat_map(|c| [Split::Train, Split::Validation].map(|s| (c, s)))
        .map(|(c, s)| ((c, s), DatasetWriter::create(&dir.join(file_name(c, s)), c, s).unwrap()))
        .collect();
    for game in 0..games {
        let mut pos = Chess::default();
        let mut history = Vec::new();
        for _ in 0..40 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let captures: Vec<_> = moves.iter().filter(|m| m.is_capture()).collect();
            let m = if !captures.is_empty() && rng.random_bool(0.85) {
                *captures[rng.random_range(0..captures.len())]
            } else {
                moves[rng.random_range(0..moves.len())]
            };
            history.push((pos.clone(), PlayedMove::new(&pos, &m).unwrap()));
            pos.play_unchecked(m);
        }
        let result = material(&pos).signum() as i8;
        let split = if game % 5 == 4 { Split::Validation } else { Split::Train };
        // the last plies only: their material balance is close to the final one
        let first = history.len().saturating_sub(16);
        for (ply, (p, played)) in history.iter().enumerate().skip(first) {
            let info = GameInfo { game: game as u32, result };
            let eval = (material(p) * 100) as i16;
            let record = Record::new(p, ply as u16, eval, info, Some(*played)).unwrap();
            for ((c, s), w) in writers.iter_mut() {
                if *s == split && (*c == Content::Moves || result != 0 || ply % 2 == 0) {
                    w.push(&record).unwrap();
                }
            }
        }
    }
    let mut train_positions = 0;
    for ((c, s), w) in writers {
        let n = w.finish().unwrap();
        if (c, s) == (Content::Positions, Split::Train) {
            train_positions = n as usize;
        }
    }
    train_positions
}
