//! The evaluation search's transposition table: exact, lower and upper bounds keyed by
//! Zobrist keys, shared lock-free between threads (Lazy SMP).
//!
//! An entry (move, score, depth, bound, the generation of the search that stored it and
//! the static evaluation, so that a position met again is not evaluated again) is two
//! 64-bit words, `key ^ data` and `data`; a reader accepts the entry only when the two
//! agree, so a torn write by another thread reads as a miss.
//!
//! Each search starts a new generation ([`Table::new_search`]): an entry of the same
//! position stored by an earlier search gives way to any new result (within one search a
//! deeper one is kept), and `hashfull` counts the entries of the current search, so that
//! what earlier, unrelated searches left behind neither holds slots nor fills the table.

use std::collections::TryReserveError;
use std::sync::atomic::{AtomicU64, Ordering};

use shakmaty::{Chess, Move, Position, Role, Square};

use super::{MAX_PLY, TB_WIN_BOUND};

/// Which bound an entry's score is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The exact score.
    Exact,
    /// A lower bound (the search failed high).
    Lower,
    /// An upper bound (the search failed low).
    Upper,
}

impl Bound {
    /// The bound that a fail-soft search result `best` is for the window
    /// `(alpha, beta)`, where `alpha` is the window's lower end on entry.
    pub fn of(best: i32, alpha: i32, beta: i32) -> Bound {
        if best <= alpha {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        }
    }
}

/// A decoded entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Best or refuting move, packed (see [`pack_move`]); 0 for none.
    pub packed_move: u16,
    /// Score, mate scores relative to the node (see [`Table::store`]).
    pub score: i32,
    /// Depth searched.
    pub depth: i32,
    /// Bound type.
    pub bound: Bound,
    /// The static evaluation of the position (none in check).
    pub eval: Option<i32>,
}

impl Entry {
    /// Whether the entry's score settles a search of the window `(alpha, beta)`.
    pub fn cuts_off(&self, alpha: i32, beta: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score >= beta,
            Bound::Upper => self.score <= alpha,
        }
    }
}

/// The stored `eval` field of an entry without a static evaluation.
const NO_EVAL: i16 = i16::MIN;

/// Entries sampled for [`Table::hashfull`] (and the comparison search's table).
pub const HASHFULL_SAMPLE: usize = 1000;

/// Generations an entry tells apart (its 6 bits).
const GENERATIONS: u64 = 64;
/// Where an entry's generation sits in its data word.
const GENERATION_SHIFT: u32 = 42;

/// The shared table.
pub struct Table {
    slots: Vec<[AtomicU64; 2]>,
    /// The generation of the current search, below [`GENERATIONS`].
    generation: AtomicU64,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({} entries)", self.slots.len())
    }
}

impl Table {
    /// A table of about `megabytes` MB (at least one entry).
    ///
    /// # Panics
    /// When the memory cannot be allocated; [`Table::try_new`] reports that instead.
    pub fn new(megabytes: usize) -> Table {
        Table::try_new(megabytes).expect("memory for the transposition table")
    }

    /// A table of about `megabytes` MB, or an error when the memory cannot be allocated.
    pub fn try_new(megabytes: usize) -> Result<Table, TryReserveError> {
        let entries = (megabytes.saturating_mul(1 << 20) / 16).max(1);
        let mut slots = Vec::new();
        slots.try_reserve_exact(entries)?;
        slots.extend((0..entries).map(|_| [AtomicU64::new(0), AtomicU64::new(0)]));
        Ok(Table { slots, generation: AtomicU64::new(0) })
    }

    /// Starts a new search: the entries stored so far become older than the ones to come.
    pub fn new_search(&self) {
        let next = (self.generation.load(Ordering::Relaxed) + 1) % GENERATIONS;
        self.generation.store(next, Ordering::Relaxed);
    }

    /// The generation of the current search.
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// Forgets everything.
    pub fn clear(&self) {
        for slot in &self.slots {
            slot[0].store(0, Ordering::Relaxed);
            slot[1].store(0, Ordering::Relaxed);
        }
    }

    /// How full the table is, in permille: the share of entries stored by the current
    /// search among the first 1000 (all of a smaller table), as UCI's `hashfull`.
    pub fn hashfull(&self) -> u32 {
        let sample = &self.slots[..self.slots.len().min(HASHFULL_SAMPLE)];
        let current = |data: u64| data != 0 && data_generation(data) == self.generation();
        let used = sample.iter().filter(|slot| current(slot[1].load(Ordering::Relaxed))).count();
        (used * 1000 / sample.len()) as u32
    }

    fn slot(&self, key: u64) -> &[AtomicU64; 2] {
        let index = ((u128::from(key) * self.slots.len() as u128) >> 64) as usize;
        &self.slots[index]
    }

    /// Asks the CPU to bring `key`'s slot into cache, so that a probe issued a little
    /// later (after the work of entering a node) does not wait for memory.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch never faults and the pointer is that of a live slot; SSE
            // is part of every x86-64 CPU.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(self.slot(key).as_ptr().cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry for `key` at `ply` (mate and tablebase scores made relative to the root
    /// again).
    pub fn probe(&self, key: u64, ply: usize) -> Option<Entry> {
        self.read(key).map(|data| decode(data, ply))
    }

    /// The data word of `key`'s entry, if its slot holds it.
    fn read(&self, key: u64) -> Option<u64> {
        let slot = self.slot(key);
        let (mixed, data) = (slot[0].load(Ordering::Relaxed), slot[1].load(Ordering::Relaxed));
        (data != 0 && mixed ^ data == key).then_some(data)
    }

    /// Stores a result and the position's static evaluation `eval` (within ±32,767); mate
    /// and tablebase scores are made relative to this node so that they stay right wherever the position
    /// recurs. Keeps a deeper entry of the same position stored by the current search.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        depth: i32,
        score: i32,
        bound: Bound,
        packed_move: u16,
        eval: Option<i32>,
    ) {
        let slot = self.slot(key);
        let generation = self.generation();
        if let Some(old) = self.read(key)
            && data_generation(old) == generation
            && decode(old, ply).depth > depth
            && bound != Bound::Exact
        {
            return;
        }
        let bound_bits: u64 = match bound {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        let data = u64::from(packed_move)
            | (u64::from(to_tt(score, ply) as i16 as u16) << 16)
            | (u64::from(depth.clamp(-100, 127) as i8 as u8) << 32)
            | (bound_bits << 40)
            | (generation << GENERATION_SHIFT)
            | (u64::from(eval.map_or(NO_EVAL, |e| e.clamp(-i32::from(i16::MAX), i32::from(i16::MAX)) as i16) as u16)
                << 48);
        slot[0].store(key ^ data, Ordering::Relaxed);
        slot[1].store(data, Ordering::Relaxed);
    }
}

/// The entry that the data word `data` holds, read at `ply`.
fn decode(data: u64, ply: usize) -> Entry {
    let packed_move = data as u16;
    let score = i32::from((data >> 16) as i16);
    let depth = i32::from((data >> 32) as i8);
    let bound = match (data >> 40) & 3 {
        1 => Bound::Exact,
        2 => Bound::Lower,
        _ => Bound::Upper,
    };
    let eval = (data >> 48) as i16;
    let eval = (eval != NO_EVAL).then_some(i32::from(eval));
    Entry { packed_move, score: from_tt(score, ply), depth, bound, eval }
}

/// The generation of the search that stored the data word `data`.
fn data_generation(data: u64) -> u64 {
    (data >> GENERATION_SHIFT) % GENERATIONS
}

fn to_tt(score: i32, ply: usize) -> i32 {
    let ply = ply.min(MAX_PLY) as i32;
    if score >= TB_WIN_BOUND {
        score + ply
    } else if score <= -TB_WIN_BOUND {
        score - ply
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    let ply = ply.min(MAX_PLY) as i32;
    if score >= TB_WIN_BOUND {
        score - ply
    } else if score <= -TB_WIN_BOUND {
        score + ply
    } else {
        score
    }
}

/// Packs a move into 16 bits: from (6), to (6), promotion role (3); never 0 for a move.
pub fn pack_move(m: &Move) -> u16 {
    let from = m.from().map_or(0, |s| s as u16);
    let promotion = m.promotion().map_or(0, |r| r as u16);
    (from | (m.to() as u16) << 6 | promotion << 12) | 0x8000
}

/// The legal move of `position` that `packed` stands for (none when the entry's move is
/// not legal here: a key collision).
pub fn unpack_move(position: &Chess, packed: u16) -> Option<Move> {
    if packed == 0 {
        return None;
    }
    let from = Square::new(u32::from(packed & 63));
    let to = Square::new(u32::from((packed >> 6) & 63));
    let promotion = Role::try_from((packed >> 12) & 7).ok();
    position.legal_moves().into_iter().find(|m| m.from() == Some(from) && m.to() == to && m.promotion() == promotion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;

    #[test]
    fn store_and_probe_with_mate_distance() {
        let table = Table::new(1);
        table.store(42, 3, 5, MATE - 7, Bound::Exact, 0x8123, Some(-37));
        let e = table.probe(42, 3).unwrap();
        assert_eq!((e.score, e.depth, e.bound, e.packed_move, e.eval), (MATE - 7, 5, Bound::Exact, 0x8123, Some(-37)));
        // The same position two plies deeper: the mate is two plies further from the root.
        assert_eq!(table.probe(42, 5).unwrap().score, MATE - 9);
        assert_eq!(table.probe(43, 3), None);
        table.store(42, 0, -1, -250, Bound::Upper, 0, None);
        assert_eq!(table.probe(42, 0).unwrap().score, MATE - 4, "deeper entry kept");
        table.store(7, 0, 2, 15, Bound::Lower, 0, None);
        assert_eq!(table.probe(7, 0).unwrap().eval, None, "in check: no evaluation");
    }

    #[test]
    fn a_new_search_ages_the_entries_which_then_give_way_and_leave_hashfull() {
        let table = Table::new(1);
        table.store(42, 0, 9, 120, Bound::Lower, 0x8123, Some(30));
        table.store(42, 0, 3, 80, Bound::Upper, 0, None);
        assert_eq!(table.probe(42, 0).unwrap().depth, 9, "the same search keeps the deeper entry");
        assert_eq!(table.hashfull(), 1, "one entry in the sample");
        table.new_search();
        assert_eq!(table.hashfull(), 0, "the entries of earlier searches do not fill the table");
        assert_eq!(table.probe(42, 0).unwrap().score, 120, "but are still read");
        table.store(42, 0, 3, 80, Bound::Upper, 0, None);
        let e = table.probe(42, 0).unwrap();
        assert_eq!((e.depth, e.score, e.bound), (3, 80, Bound::Upper), "an older entry gives way");
        // The generation wraps around without disturbing entries.
        for _ in 0..GENERATIONS {
            table.new_search();
        }
        table.store(7, 2, 4, -MATE + 9, Bound::Exact, 0, Some(-5));
        let e = table.probe(7, 2).unwrap();
        assert_eq!((e.score, e.depth, e.eval), (-MATE + 9, 4, Some(-5)));
    }

    #[test]
    fn hashfull_counts_used_entries_among_the_first_thousand_and_clear_empties() {
        let table = Table::new(1);
        assert_eq!(table.hashfull(), 0);
        // 2^16 entries: a key's slot is its top 16 bits.
        let slots = table.slots.len() as u64;
        assert_eq!(slots, 1 << 16);
        let in_slot = |i: u64| (i << 48) | 1;
        for i in 0..250 {
            table.store(in_slot(i), 0, 1, 0, Bound::Exact, 0, None);
        }
        // Entries beyond the sample do not count.
        table.store(in_slot(5000), 0, 1, 0, Bound::Exact, 0, None);
        assert_eq!(table.hashfull(), 250);
        table.clear();
        assert_eq!((table.hashfull(), table.slots.len() as u64), (0, slots));
        assert_eq!(Table::new(0).hashfull(), 0, "a one-entry table");
    }

    #[test]
    fn moves_round_trip_and_illegal_ones_unpack_to_none() {
        use shakmaty::CastlingMode;
        use shakmaty::fen::Fen;
        // Castling both ways, en passant, promotions and under-promotions with and
        // without capture, a pinned piece, plain moves.
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "1n2k3/P1P5/8/8/8/8/8/4K3 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/8/8/8/8/8/4r3/4K2R w K - 0 1",
        ];
        for fen in fens {
            let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let legal = position.legal_moves();
            for m in &legal {
                assert_eq!(unpack_move(&position, pack_move(m)), Some(*m), "{fen}");
            }
            // Every other from/to/promotion (none or a role) pattern is refused.
            for packed in 0x8000..0xf000 {
                if let Some(m) = unpack_move(&position, packed) {
                    assert!(legal.contains(&m) && pack_move(&m) == packed, "{fen}: {packed:#x}");
                }
            }
        }
    }
}
