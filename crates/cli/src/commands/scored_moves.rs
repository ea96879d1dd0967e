//! `deepchess scored-moves`: every legal move of a dataset's positions scored by the
//! evaluation search, as move records shared out by a softmax of the scores and the move
//! played, the move predictors' soft targets (`train movepred --data OUT`; see
//! docs/training.md).

use std::path::PathBuf;

use deepchess_datagen::groups::Parents;
use deepchess_datagen::scored_moves::{ScoredMoveOptions, scored_moves};
use deepchess_engine::nn::Networks;

/// Arguments of `deepchess scored-moves`.
#[derive(clap::Args)]
pub struct ScoredMovesArgs {
    /// Dataset directory whose `moves` records are the parents (`datagen` or `prepare` output).
    #[arg(long)]
    data: PathBuf,
    /// Output directory: `moves-{train,validation}.bin`, `--samples` records per parent.
    #[arg(long)]
    out: PathBuf,
    /// One parent every this many records.
    #[arg(long, default_value_t = 4)]
    every: usize,
    /// Parents before this ply are skipped.
    #[arg(long, default_value_t = 0)]
    min_ply: u16,
    /// Soft node limit of the search that scores each legal move (hard limit: four times).
    #[arg(long, default_value_t = 400)]
    nodes: u64,
    /// Records per parent.
    #[arg(long, default_value_t = 16)]
    samples: usize,
    /// Records of the `--samples` that carry the move the game played; the others are
    /// shared out by the softmax of the moves' scores.
    #[arg(long, default_value_t = 8)]
    played: usize,
    /// Softmax temperature in centipawns: a move this much below the best gets 1/e of its
    /// weight.
    #[arg(long, default_value_t = 60.0)]
    temperature: f32,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Directory with the value net that scores (default: the embedded one).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Replace the output's datasets if they exist (never the input's).
    #[arg(long)]
    force: bool,
}

/// Runs `deepchess scored-moves`.
pub fn run(args: ScoredMovesArgs) -> anyhow::Result<()> {
    let networks = Networks::load_or_embedded(args.models.as_deref()).map_err(|e| {
        anyhow::anyhow!(
            "--models {}: {e}",
            args.models.as_ref().map_or("<embedded>".into(), |m| m.display().to_string())
        )
    })?;
    let parents = Parents { every: args.every, min_ply: args.min_ply, threads: args.threads, force: args.force };
    let options = ScoredMoveOptions {
        parents,
        nodes: args.nodes,
        samples: args.samples,
        played: args.played,
        temperature: args.temperature,
    };
    let started = std::time::Instant::now();
    for (split, counts) in scored_moves(&args.data, &args.out, &options, &networks)? {
        println!(
            "{}: {} positions, {} records ({:.0} s)",
            args.out.join(deepchess_core::dataset::file_name(deepchess_core::Content::Moves, split)).display(),
            counts.groups,
            counts.records,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
