//! What `deepchess siblings` and `deepchess visits` share: the input and output datasets,
//! the threads, the networks, and the lines that say what was written.

use std::path::{Path, PathBuf};
use std::time::Instant;

use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Split};
use deepchess_datagen::DatagenError;
use deepchess_datagen::groups::{GroupCounts, Parents};
use deepchess_engine::nn::Networks;

/// The arguments of a command that makes groups of records from a dataset's positions.
#[derive(clap::Args)]
pub struct GroupArgs {
    /// Dataset directory whose `moves` records are the parents (`datagen` or `prepare` output).
    #[arg(long)]
    data: PathBuf,
    /// Output directory: `moves-{train,validation}.bin`, one group of records per parent.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (the output is the same with any number).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Directory with the networks the search uses (default: the embedded ones).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Replace the output's datasets if they exist (never the input's).
    #[arg(long)]
    force: bool,
}

impl GroupArgs {
    /// Loads the networks, runs `write(data, out, parents, networks)` with one parent every
    /// `every` records from ply `min_ply` on, and prints one line per split written: its
    /// file, groups, records and the seconds taken.
    pub fn run(
        &self,
        every: usize,
        min_ply: u16,
        write: impl FnOnce(&Path, &Path, Parents, &Networks) -> Result<Vec<(Split, GroupCounts)>, DatagenError>,
    ) -> anyhow::Result<()> {
        let models = self.models.as_deref();
        let networks = Networks::load_or_embedded(models).map_err(|e| {
            anyhow::anyhow!("--models {}: {e}", models.map_or("<embedded>".into(), |m| m.display().to_string()))
        })?;
        let parents = Parents { every, min_ply, threads: self.threads, force: self.force };
        let started = Instant::now();
        for (split, counts) in write(&self.data, &self.out, parents, &networks)? {
            println!(
                "{}: {} groups, {} positions ({:.0} s)",
                self.out.join(file_name(Content::Moves, split)).display(),
                counts.groups,
                counts.records,
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }
}
