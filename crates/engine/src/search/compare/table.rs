//! The comparison search's table: per position the depth, bound positions and best move.
//! It stores bound positions only (a lower bound after a cutoff, an upper bound when
//! nothing beat alpha), never exact entries: the comparator is not transitive (thesis 5.7.1).

use shakmaty::Move;

use super::Outcome;
use crate::search::tt::{HASHFULL_SAMPLE, pack_move};

/// The comparison search's table.
pub struct CompareTable {
    slots: Vec<Option<TableEntry>>,
}

/// One position's entry.
#[derive(Clone)]
pub(super) struct TableEntry {
    key: u64,
    /// Depth the bounds were searched to.
    pub depth: i32,
    /// What the side to move is assured of at least.
    pub lower: Option<Outcome>,
    /// What the side to move gets at most.
    pub upper: Option<Outcome>,
    /// The best move, packed.
    pub packed_move: u16,
}

impl std::fmt::Debug for CompareTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompareTable({} slots)", self.slots.len())
    }
}

impl CompareTable {
    /// A table of about `megabytes` MB (an entry with two leaves takes about 8 KB).
    ///
    /// # Panics
    /// When the memory cannot be allocated; [`CompareTable::try_new`] reports that instead.
    pub fn new(megabytes: usize) -> CompareTable {
        CompareTable::try_new(megabytes).expect("memory for the comparison table")
    }

    /// A table of about `megabytes` MB, or an error when the memory cannot be allocated.
    pub fn try_new(megabytes: usize) -> Result<CompareTable, std::collections::TryReserveError> {
        let len = megabytes.saturating_mul(1 << 20) / 8192 + 1;
        let mut slots = Vec::new();
        slots.try_reserve_exact(len)?;
        slots.resize(len, None);
        Ok(CompareTable { slots })
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// How full the table is, in permille of the first 1000 slots (UCI's `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = &self.slots[..self.slots.len().min(HASHFULL_SAMPLE)];
        (sample.iter().filter(|slot| slot.is_some()).count() * 1000 / sample.len()) as u32
    }

    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.slots.len() as u128) >> 64) as usize
    }

    /// The entry of the position with `key`, if stored.
    pub(super) fn get(&self, key: u64) -> Option<&TableEntry> {
        self.slots[self.index(key)].as_ref().filter(|e| e.key == key)
    }

    /// Stores `bound` (lower, upper) and the best move of a position searched to `depth`;
    /// an entry of the same position from a deeper search is kept.
    pub(super) fn store(
        &mut self,
        key: u64,
        depth: i32,
        bound: Option<(Option<Outcome>, Option<Outcome>)>,
        best_move: Option<Move>,
    ) {
        let index = self.index(key);
        let slot = &mut self.slots[index];
        let mut entry = match slot.take() {
            Some(e) if e.key == key && e.depth == depth => e,
            Some(e) if e.key == key && e.depth > depth => {
                *slot = Some(e);
                return;
            }
            _ => TableEntry { key, depth, lower: None, upper: None, packed_move: 0 },
        };
        if let Some((lower, upper)) = bound {
            entry.lower = lower.or(entry.lower);
            entry.upper = upper.or(entry.upper);
        }
        entry.packed_move = best_move.as_ref().map_or(entry.packed_move, pack_move);
        *slot = Some(entry);
    }
}
