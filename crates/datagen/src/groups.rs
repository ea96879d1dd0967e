//! Groups of records made from the positions of a dataset, one group per chosen parent,
//! written as one "game" each of a `moves` dataset: the frame of `siblings` (sibling
//! positions scored by the search), apart from how a group is made.
//! The parents are split between worker threads in order, and a group depends on its
//! parent's record index alone, so the output is the same with any number of threads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deepchess_core::atomic::{self, check_overwrite, temporary_path};
use deepchess_core::dataset::{DatasetWriter, file_name};
use deepchess_core::{Content, Dataset, Record, Split};

use crate::error::{DatagenError, io_error};

/// Which records of the input are parents, and how the run goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parents {
    /// One parent every this many records.
    pub every: usize,
    /// Records before this ply are skipped (openings played at random).
    pub min_ply: u16,
    /// Worker threads.
    pub threads: usize,
    /// Replace an earlier output.
    pub force: bool,
}

/// Counts of a run, per split.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupCounts {
    /// Parents that gave a group.
    pub groups: u64,
    /// Records written.
    pub records: u64,
}

/// Seconds between two progress lines on standard error.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// Writes `out/moves-{train,validation}.bin`: for each parent of
/// `data/moves-{train,validation}.bin` (a split that `data` lacks is skipped), the records
/// `group(worker, dataset, input, index)` makes of record `index` (an empty group is
/// dropped), each worker thread with its own `new_worker()`. Each file is written under a
/// temporary name and renamed; an existing one is replaced only with `parents.force`, and
/// `out` may not be `data`. `what` names the run in its progress lines.
pub fn write_groups<W, G>(
    data: &Path,
    out: &Path,
    parents: &Parents,
    what: &str,
    new_worker: impl Fn() -> W + Sync,
    group: G,
) -> Result<Vec<(Split, GroupCounts)>, DatagenError>
where
    G: Fn(&mut W, &Dataset, &Path, usize) -> Result<Vec<Record>, DatagenError> + Sync,
{
    let invalid = |message: String| DatagenError::Invalid(message);
    if parents.every == 0 || parents.threads == 0 {
        return Err(invalid("--every and --threads must be at least 1".into()));
    }
    let same = |a: &Path, b: &Path| a.canonicalize().ok().is_some_and(|a| b.canonicalize().ok() == Some(a));
    if same(data, out) {
        return Err(invalid(format!("--out {} is the input --data: choose another directory", out.display())));
    }
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let mut counts = Vec::new();
    for split in Split::ALL {
        let input = data.join(file_name(Content::Moves, split));
        if !input.exists() {
            continue;
        }
        let target = out.join(file_name(Content::Moves, split));
        check_overwrite(&target, parents.force).map_err(DatagenError::Io)?;
        let dataset = Dataset::open(&input)?;
        let chosen: Vec<usize> =
            (0..dataset.len()).step_by(parents.every).filter(|&i| dataset.get(i).ply() >= parents.min_ply).collect();
        let label = format!("{what} {}", input.display());
        let groups = make_groups(&dataset, &input, &chosen, parents.threads, &label, &new_worker, &group)?;
        let first = counts.iter().map(|(_, c): &(Split, GroupCounts)| c.groups).sum::<u64>() as u32;
        counts.push((split, write(&target, split, &groups, first)?));
    }
    if counts.is_empty() {
        return Err(invalid(format!("{}: no moves-train.bin or moves-validation.bin", data.display())));
    }
    Ok(counts)
}

/// The groups of `parents`, in their order, on `threads` threads; a progress line on
/// standard error every [`PROGRESS_EVERY`].
fn make_groups<W, G>(
    dataset: &Dataset,
    input: &Path,
    parents: &[usize],
    threads: usize,
    label: &str,
    new_worker: &(impl Fn() -> W + Sync),
    group: &G,
) -> Result<Vec<Vec<Record>>, DatagenError>
where
    G: Fn(&mut W, &Dataset, &Path, usize) -> Result<Vec<Record>, DatagenError> + Sync,
{
    let chunk = parents.len().div_ceil(threads).max(1);
    let done = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = parents
            .chunks(chunk)
            .map(|share| {
                let done = &done;
                scope.spawn(move || {
                    let mut worker = new_worker();
                    share
                        .iter()
                        .map(|&i| {
                            let made = group(&mut worker, dataset, input, i);
                            done.fetch_add(1, Ordering::Relaxed);
                            made
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        let mut last = Instant::now();
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                let finished = done.load(Ordering::Relaxed);
                let rate = finished as f64 / started.elapsed().as_secs_f64();
                eprintln!("{label}: {finished} / {} parents ({rate:.1} a second)", parents.len());
            }
        }
        let mut groups = Vec::with_capacity(parents.len());
        for worker in workers {
            groups.extend(worker.join().expect("a group worker panicked")?);
        }
        Ok(groups)
    })
}

/// Writes the groups to `target` (a temporary first), numbering them as games from `first`
/// (the groups of the splits written before, so that numbers are unique across splits).
fn write(target: &Path, split: Split, groups: &[Vec<Record>], first: u32) -> Result<GroupCounts, DatagenError> {
    let tmp: PathBuf = temporary_path(target);
    atomic::register_temporary(&tmp);
    let result = (|| {
        let mut writer = DatasetWriter::create(&tmp, Content::Moves, split)?;
        let mut counts = GroupCounts::default();
        for group in groups.iter().filter(|g| !g.is_empty()) {
            for record in group {
                let mut record = *record;
                record.set_game(first + counts.groups as u32);
                writer.push(&record)?;
                counts.records += 1;
            }
            counts.groups += 1;
        }
        writer.finish()?;
        atomic::publish(&tmp, target).map_err(io_error(target))?;
        Ok(counts)
    })();
    if result.is_err() {
        atomic::remove_temporary(&tmp);
    }
    result
}
