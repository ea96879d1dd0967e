//! `deepchess pack` and `deepchess unpack`: the PGN of `deepchess datagen --pgn` to packed
//! games (`NAME.dcpg.zst`, about a third of its compressed size) and back, byte for byte
//! (data/README.md, "Packed games").

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use deepchess_core::atomic::{self, check_overwrite};
use deepchess_core::selfplay_game::SelfPlayGame;
use deepchess_train::guard;
use deepchess_train::packed::{self, from_pgn};
use deepchess_train::pgn::input;

/// Arguments of `deepchess pack`.
#[derive(clap::Args)]
pub struct PackArgs {
    /// PGN written by `deepchess datagen --pgn`, plain or compressed (gzip, zstd, bzip2).
    input: PathBuf,
    /// Packed games file to write (`NAME.dcpg.zst`), under a temporary name, then renamed.
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing `--out` that holds packed games (never another file, never the input).
    #[arg(long)]
    force: bool,
}

/// Arguments of `deepchess unpack`.
#[derive(clap::Args)]
pub struct UnpackArgs {
    /// Packed games (`NAME.dcpg.zst`).
    input: PathBuf,
    /// PGN file to write (plain text), under a temporary name, then renamed.
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing `--out` that is datagen PGN (its first tag `[Event "deepchess
    /// datagen"]`; never another file, never the input).
    #[arg(long)]
    force: bool,
}

/// The first bytes of datagen's PGN.
const DATAGEN_PGN_HEAD: &[u8] = b"[Event \"deepchess datagen\"]";

/// Refuses an `--out` that is the input, and an existing one unless `--force` is given and
/// `earlier` says it is an output of this kind (`what`).
fn check_out(input: &Path, out: &Path, force: bool, earlier: impl Fn(&Path) -> bool, what: &str) -> anyhow::Result<()> {
    if guard::same_path(out, input) {
        anyhow::bail!("--out {} is the input: write it elsewhere", out.display());
    }
    if std::fs::symlink_metadata(out).is_err() {
        return Ok(());
    }
    check_overwrite(out, force)?;
    anyhow::ensure!(
        out.is_file() && earlier(out),
        "--force: {} is not {what}; --force replaces only those: choose another --out",
        out.display()
    );
    Ok(())
}

/// Writes `bytes` to `out` through a temporary, sweeping the temporaries a killed run left.
fn write(out: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    guard::sweep(out.parent().unwrap_or(Path::new(".")), |n| n == name)?;
    atomic::write_atomic(out, bytes)?;
    Ok(())
}

/// Positions of `games` (one per move).
fn positions(games: &[SelfPlayGame]) -> usize {
    games.iter().map(|g| g.moves.len()).sum()
}

/// Runs `deepchess pack`.
pub fn run_pack(args: PackArgs) -> anyhow::Result<()> {
    let what = "packed games";
    check_out(&args.input, &args.out, args.force, |p| packed::is_packed(p).unwrap_or(false), what)?;
    let mut text = Vec::new();
    let path = args.input.display();
    let mut pgn = input::open(&args.input).with_context(|| format!("{path}: cannot read it as PGN"))?;
    pgn.reader.read_to_end(&mut text).with_context(|| path.to_string())?;
    let games = from_pgn::games_of_pgn(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let bytes = packed::compress(&games).with_context(|| path.to_string())?;
    let back = packed::decode(&bytes).with_context(|| format!("{path}: its packed games"))?;
    anyhow::ensure!(
        back.iter().map(SelfPlayGame::pgn).collect::<String>().as_bytes() == text,
        "{path}: its packed games would not unpack to the same text: not written"
    );
    write(&args.out, &bytes)?;
    let positions = positions(&games);
    println!(
        "{}: {} games, {positions} positions, {} bytes ({:.2} bytes a position; {} bytes of PGN text)",
        args.out.display(),
        games.len(),
        bytes.len(),
        bytes.len() as f64 / positions.max(1) as f64,
        text.len()
    );
    Ok(())
}

/// Runs `deepchess unpack`.
pub fn run_unpack(args: UnpackArgs) -> anyhow::Result<()> {
    let earlier = |p: &Path| {
        let mut head = Vec::new();
        std::fs::File::open(p).and_then(|f| f.take(DATAGEN_PGN_HEAD.len() as u64).read_to_end(&mut head)).is_ok()
            && (head.is_empty() || head == DATAGEN_PGN_HEAD)
    };
    check_out(&args.input, &args.out, args.force, earlier, "datagen PGN")?;
    let games = packed::read(&args.input)?;
    let text: String = games.iter().map(SelfPlayGame::pgn).collect();
    write(&args.out, text.as_bytes())?;
    println!("{}: {} games, {} positions, {} bytes", args.out.display(), games.len(), positions(&games), text.len());
    Ok(())
}
