//! A run's stages and epochs, and the learning rate of each batch.

/// A learning-rate schedule: the rate of every batch of a stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    /// `lr × decay^epoch` (epoch within the stage, from 0), constant within an epoch.
    Exponential {
        /// Rate of the first epoch.
        lr: f64,
        /// Factor per epoch.
        decay: f64,
    },
    /// Linear warm-up over the stage's first `warmup` batches (`lr × (b + 1) / warmup` at
    /// batch `b`), then a cosine from `lr` down towards `min_lr` at the end of the stage.
    WarmupCosine {
        /// Peak rate, reached at the end of the warm-up.
        lr: f64,
        /// Batches of warm-up (0: none).
        warmup: u64,
        /// Rate the cosine ends at.
        min_lr: f64,
    },
}

/// Where a batch is within its stage, as a [`Schedule`] sees it. Batches are counted as
/// `epoch × batches + batch`, so a stage's epochs should have the same number of batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleAt {
    /// Epoch within the stage, from 0.
    pub epoch: u32,
    /// Epochs of the stage.
    pub epochs: u32,
    /// Batch within the epoch's pass, from 0.
    pub batch: usize,
    /// Batches of the pass.
    pub batches: usize,
}

impl Schedule {
    /// The learning rate at `at`.
    pub fn lr(&self, at: ScheduleAt) -> f64 {
        match *self {
            Schedule::Exponential { lr, decay } => lr * decay.powi(at.epoch as i32),
            Schedule::WarmupCosine { lr, warmup, min_lr } => {
                let step = u64::from(at.epoch) * at.batches as u64 + at.batch as u64;
                if step < warmup {
                    return lr * (step + 1) as f64 / warmup as f64;
                }
                let span = (u64::from(at.epochs) * at.batches as u64).saturating_sub(warmup).max(1);
                let t = ((step - warmup) as f64 / span as f64).min(1.0);
                min_lr + (lr - min_lr) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }
}

/// A part of a run with its own epochs and schedule (for example one layer's pre-training).
/// Every stage starts with fresh Adam moments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    /// Epochs (a stage with none is skipped).
    pub epochs: u32,
    /// Items per batch (the last batch of a pass may be smaller).
    pub batch: usize,
    /// Learning rate of its batches.
    pub schedule: Schedule,
}

impl Stage {
    /// A stage of `epochs` epochs of `batch` items at `lr × decay^epoch`.
    pub fn exponential(epochs: u32, batch: usize, lr: f64, decay: f64) -> Stage {
        Stage { epochs, batch, schedule: Schedule::Exponential { lr, decay } }
    }
}

/// Where an epoch is in the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochAt {
    /// The epoch's number over the whole run, from 0 (seed data orders with it: a resumed
    /// run then draws what the uninterrupted one would have).
    pub epoch: u32,
    /// Its stage: an index into [`super::Trainer::stages`].
    pub stage: usize,
    /// Epoch within the stage, from 0.
    pub stage_epoch: u32,
    /// Epochs of the stage.
    pub stage_epochs: u32,
}

impl EpochAt {
    /// Whether this is the stage's last epoch.
    pub fn last_of_stage(&self) -> bool {
        self.stage_epoch + 1 == self.stage_epochs
    }
}

/// The epoch `epoch` (from 0) of the run made of `stages`, or `None` past its end.
pub(crate) fn epoch_at(stages: &[Stage], epoch: u32) -> Option<EpochAt> {
    let mut start = 0u32;
    for (stage, s) in stages.iter().enumerate() {
        let end = start.saturating_add(s.epochs);
        if epoch < end {
            return Some(EpochAt { epoch, stage, stage_epoch: epoch - start, stage_epochs: s.epochs });
        }
        start = end;
    }
    None
}
