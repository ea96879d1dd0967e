//! `deepchess train`: the trainers.

use deepchess_train::run::RunArgs;
use deepchess_train::trainers::{autoencoder, comparator, movepred, student, value};

/// Arguments of `deepchess train`.
#[derive(clap::Args)]
pub struct TrainArgs {
    #[command(subcommand)]
    network: Network,
}

#[derive(clap::Subcommand)]
enum Network {
    /// The evaluation net for search (game results blended with [%eval] scores).
    Value {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        options: value::ValueOptions,
    },
    /// The seven move predictors (piece type, destination square per piece type).
    Movepred {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        options: movepred::MovepredOptions,
    },
    /// The Pos2Vec autoencoder: layer-wise pre-training, then fine-tuning.
    Autoencoder {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        options: autoencoder::AutoencoderOptions,
    },
    /// The siamese comparator (encoder initialised from --pos2vec).
    Comparator {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        options: comparator::ComparatorOptions,
    },
    /// The student comparator for search: the --value net's codes and a head over two
    /// codes, trained on pairs labelled by [%eval] scores.
    Student {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        options: student::StudentOptions,
    },
}

/// Runs `deepchess train`.
pub fn run(args: TrainArgs) -> anyhow::Result<()> {
    let build = |mut run: RunArgs| {
        run.git_commit = Some(env!("DEEPCHESS_GIT_COMMIT").to_string());
        run
    };
    let (dir, model) = match args.network {
        Network::Value { run, options } => (run.out.clone(), value::train(&build(run), &options)?),
        Network::Movepred { run, options } => (run.out.clone(), movepred::train(&build(run), &options)?),
        Network::Autoencoder { run, options } => (run.out.clone(), autoencoder::train(&build(run), &options)?),
        Network::Comparator { run, options } => (run.out.clone(), comparator::train(&build(run), &options)?),
        Network::Student { run, options } => (run.out.clone(), student::train(&build(run), &options)?),
    };
    println!("model written to {}/{}.{{safetensors,json}}", dir.display(), model.card.kind.name());
    Ok(())
}
