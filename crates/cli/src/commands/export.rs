//! `deepchess export`: a dataset as text, one `FEN | score | result` line per record (the
//! text format of the bullet trainer; see docs/datagen.md).

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use deepchess_core::atomic::{check_overwrite, temporary_path};
use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Dataset, Split};
use deepchess_datagen::export::to_line;

/// Arguments of `deepchess export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Dataset directory (from `deepchess datagen` or `deepchess prepare`).
    #[arg(long)]
    data: PathBuf,
    /// Text file to write (under a temporary name, then renamed).
    #[arg(long)]
    out: PathBuf,
    /// Only this split (default: train, then validation).
    #[arg(long, value_enum)]
    split: Option<SplitArg>,
    /// Which datasets: `moves` (datagen writes these) or `positions`.
    #[arg(long, value_enum, default_value_t = ContentArg::Moves)]
    content: ContentArg,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
}

/// `--split` values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum SplitArg {
    Train,
    Validation,
}

/// `--content` values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ContentArg {
    Moves,
    Positions,
}

/// Runs `deepchess export`.
pub fn run(args: ExportArgs) -> anyhow::Result<()> {
    check_overwrite(&args.out, args.force)?;
    let content = match args.content {
        ContentArg::Moves => Content::Moves,
        ContentArg::Positions => Content::Positions,
    };
    let splits = match args.split {
        None => vec![Split::Train, Split::Validation],
        Some(SplitArg::Train) => vec![Split::Train],
        Some(SplitArg::Validation) => vec![Split::Validation],
    };
    let datasets = splits
        .iter()
        .map(|&split| Dataset::open(&args.data.join(file_name(content, split))))
        .collect::<Result<Vec<_>, _>>()?;
    let tmp = temporary_path(&args.out);
    let written = (|| -> anyhow::Result<(u64, u64)> {
        let file = std::fs::File::create(&tmp).with_context(|| tmp.display().to_string())?;
        let mut out = BufWriter::new(file);
        let (mut lines, mut skipped) = (0, 0);
        for (dataset, split) in datasets.iter().zip(&splits) {
            for (i, record) in dataset.iter().enumerate() {
                let name = file_name(content, *split);
                match to_line(&record).with_context(|| format!("{name}: record {i}"))? {
                    Some(line) => {
                        writeln!(out, "{line}").with_context(|| tmp.display().to_string())?;
                        lines += 1;
                    }
                    None => skipped += 1,
                }
            }
        }
        let file = out.into_inner().map_err(|e| e.into_error()).with_context(|| tmp.display().to_string())?;
        file.sync_all().with_context(|| tmp.display().to_string())?;
        std::fs::rename(&tmp, &args.out).with_context(|| args.out.display().to_string())?;
        Ok((lines, skipped))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    let (lines, skipped) = written?;
    println!("{}: {lines} lines ({skipped} records without an evaluation left out)", args.out.display());
    Ok(())
}
