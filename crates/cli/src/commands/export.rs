//! `deepchess export`: a dataset as text, one `FEN | score | result` line per record (the
//! text format of the bullet trainer; see docs/datagen.md).

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use deepchess_core::atomic::{self, check_overwrite, temporary_path};
use deepchess_core::dataset::file_name;
use deepchess_core::{Content, Dataset, Split};
use deepchess_datagen::export::{from_line, to_line};
use deepchess_train::guard;

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
    /// Replace an existing output file: only an earlier export (`FEN | score | result`
    /// lines), never a dataset or another file.
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

/// Refuses an `--out` that is an input, and one that exists unless `--force` is given and
/// it is an earlier export.
fn check_output(args: &ExportArgs, inputs: &[std::path::PathBuf]) -> anyhow::Result<()> {
    let out = &args.out;
    for input in inputs.iter().chain([&args.data]) {
        if guard::same_path(out, input) {
            anyhow::bail!("--out {} is the input {}: write the text elsewhere", out.display(), input.display());
        }
    }
    if std::fs::symlink_metadata(out).is_err() {
        return Ok(());
    }
    check_overwrite(out, args.force)?;
    let refuse = |why: String| {
        anyhow::anyhow!(
            "--force: {} is not an earlier `deepchess export` ({why}); --force replaces only those: choose another --out",
            out.display()
        )
    };
    let meta = std::fs::symlink_metadata(out).with_context(|| out.display().to_string())?;
    if !meta.is_file() {
        return Err(refuse("it is not a regular file".into()));
    }
    let mut head = Vec::new();
    let file = std::fs::File::open(out).with_context(|| out.display().to_string())?;
    file.take(4096).read_to_end(&mut head).with_context(|| out.display().to_string())?;
    if head.is_empty() {
        return Ok(());
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    match std::str::from_utf8(first).map_err(|e| e.to_string()).and_then(from_line) {
        Ok(_) => Ok(()),
        Err(e) => Err(refuse(format!("its first line: {e}"))),
    }
}

/// Runs `deepchess export`.
pub fn run(args: ExportArgs) -> anyhow::Result<()> {
    let content = match args.content {
        ContentArg::Moves => Content::Moves,
        ContentArg::Positions => Content::Positions,
    };
    let splits = match args.split {
        None => vec![Split::Train, Split::Validation],
        Some(SplitArg::Train) => vec![Split::Train],
        Some(SplitArg::Validation) => vec![Split::Validation],
    };
    let inputs: Vec<std::path::PathBuf> =
        splits.iter().map(|&split| args.data.join(file_name(content, split))).collect();
    check_output(&args, &inputs)?;
    let name = args.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    guard::sweep(args.out.parent().unwrap_or(std::path::Path::new(".")), |n| n == name)?;
    let datasets = inputs.iter().map(|path| Dataset::open(path)).collect::<Result<Vec<_>, _>>()?;
    let tmp = temporary_path(&args.out);
    atomic::register_temporary(&tmp);
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
        atomic::publish(&tmp, &args.out).with_context(|| args.out.display().to_string())?;
        Ok((lines, skipped))
    })();
    if written.is_err() {
        atomic::remove_temporary(&tmp);
    }
    let (lines, skipped) = written?;
    println!("{}: {lines} lines ({skipped} records without an evaluation left out)", args.out.display());
    Ok(())
}
