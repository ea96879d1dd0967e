//! Writes seeded, randomly initialised models of the standard shapes (all four kinds)
//! into a directory: the stand-ins committed in `models/` until trained weights land.
//!
//! `cargo run --release -p deepchess-engine --example random_models -- DIR [--force]`

use std::path::PathBuf;

use deepchess_core::ModelKind;
use deepchess_engine::nn::random_model;

/// Seed of the committed stand-in models.
const SEED: u64 = 20_160_906;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force = args.iter().any(|a| a == "--force");
    let dir = PathBuf::from(args.iter().find(|a| *a != "--force").ok_or("usage: random_models DIR [--force]")?);
    for (i, kind) in ModelKind::ALL.into_iter().enumerate() {
        let path = dir.join(format!("{}.safetensors", kind.name()));
        if !force && std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
            return Err(format!("{} exists; pass --force to replace it", path.display()).into());
        }
        random_model(kind, SEED + i as u64).save(&dir)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
