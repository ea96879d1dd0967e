//! `deepchess`: one binary for the whole toolkit.

mod commands;

use clap::{Parser, Subcommand};

/// Learns chess evaluation from game databases and plays with it.
#[derive(Parser)]
#[command(name = "deepchess", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Turn PGN databases into training datasets.
    Prepare(commands::prepare::PrepareArgs),
    /// Train the networks (Pos2Vec, comparator, move predictors, evaluation net).
    Train(commands::train::TrainArgs),
    /// Measure trained networks on any PGN file.
    Eval(commands::eval::EvalArgs),
    /// Run the engine under the UCI protocol on standard input/output.
    Uci(commands::uci::UciArgs),
    /// Analyse one position and print best move, score and principal variation.
    Analyse(commands::analyse::AnalyseArgs),
    /// Run an EPD test suite such as STS.
    Sts(commands::sts::StsArgs),
    /// Play engine-vs-engine matches and estimate Elo.
    Match(commands::matches::MatchArgs),
    /// Benchmarks: search, network inference, training throughput.
    Bench(commands::bench::BenchArgs),
    /// Self-play games of the evaluation search → datasets for the evaluation net.
    Datagen(commands::datagen::DatagenArgs),
    /// Write a dataset as text, one `FEN | score | result` line per record.
    Export(commands::export::ExportArgs),
    /// Pack the PGN of `deepchess datagen --pgn` into packed games (a third of its size).
    Pack(commands::packing::PackArgs),
    /// Unpack packed games into the PGN they were packed from.
    Unpack(commands::packing::UnpackArgs),
    /// Sibling positions scored by the evaluation search: the student comparator's pairs.
    Siblings(commands::siblings::SiblingsArgs),
    /// OpenBench's datagen openings: `genfens N seed S book <None|PATH>`, one
    /// `info string genfens <FEN>` line each.
    Genfens(commands::genfens::GenfensArgs),
    /// The evaluation search's tuned numbers as OpenBench's SPSA input (each is a UCI option).
    SpsaInputs(commands::spsa::SpsaInputsArgs),
}

/// mimalloc rather than the system allocator: burn allocates and frees buffers of
/// megabytes at every operation of a training step, which glibc serves with fresh memory
/// maps (page faults, zeroing, a kernel lock shared by all threads): `deepchess bench
/// train` 1.10×, `bench train-value` 1.15× on two cores (docs/training.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Without arguments the binary is a UCI engine, as chess GUIs and OpenBench start it.
    // OpenBench's workers ask for openings in one argument: `"genfens N seed S book B" "quit"`.
    let args = commands::genfens::split_openbench_request(std::env::args_os().collect());
    let cli = if args.len() <= 1 { Cli::parse_from(["deepchess", "uci"]) } else { Cli::parse_from(args) };
    if matches!(
        cli.command,
        Command::Analyse(_) | Command::Eval(_) | Command::Bench(_) | Command::Genfens(_) | Command::SpsaInputs(_)
    ) {
        restore_sigpipe();
    }
    if matches!(
        cli.command,
        Command::Prepare(_)
            | Command::Train(_)
            | Command::Export(_)
            | Command::Siblings(_)
            | Command::Pack(_)
            | Command::Unpack(_)
    ) {
        // Ctrl-C and SIGTERM remove the temporaries of the output being written
        deepchess_core::atomic::install_interrupt_handler();
    }
    let result = match cli.command {
        Command::Prepare(args) => commands::prepare::run(args),
        Command::Train(args) => commands::train::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Uci(args) => commands::uci::run(args),
        Command::Analyse(args) => commands::analyse::run(args),
        Command::Sts(args) => commands::sts::run(args),
        Command::Match(args) => commands::matches::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Datagen(args) => commands::datagen::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Genfens(args) => commands::genfens::run(args),
        Command::Pack(args) => commands::packing::run_pack(args),
        Command::Unpack(args) => commands::packing::run_unpack(args),
        Command::Siblings(args) => commands::siblings::run(args),
        Command::SpsaInputs(args) => commands::spsa::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by `: `, leaving out a cause whose text the message
/// already contains (our error types name the file and quote their I/O cause).
fn error_chain(e: &anyhow::Error) -> String {
    let mut message = e.to_string();
    for cause in e.chain().skip(1).map(ToString::to_string) {
        if !message.contains(&cause) {
            message = format!("{message}: {cause}");
        }
    }
    message
}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`deepchess analyse ... | head -2`)
/// would panic; with the default action the process ends quietly, as command-line tools do.
/// Only for the commands that write nothing but their report: `match`, `sts` and the UCI
/// server write to engines and GUIs that may die, and handle the error themselves.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called in `main` before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
