//! Siamese-comparator training throughput, as `deepchess bench train` reports it:
//! `cargo run --release -p deepchess-train --example bench_train [BATCHES]`.

fn main() -> anyhow::Result<()> {
    let batches = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(20);
    print!("{}", deepchess_train::bench::bench_train_report(1000, batches)?);
    Ok(())
}
