//! `deepchess genfens`: OpenBench's datagen openings (see docs/openbench.md). The worker
//! runs `deepchess "genfens N seed S book <None|PATH> [EXTRA]" "quit"`; `main` splits that
//! first argument into words, so `deepchess genfens N seed S book None` works from a shell too.

use std::path::PathBuf;

use deepchess_datagen::genfens::{GenfensRequest, genfens};
use deepchess_engine::nn::Networks;

/// Arguments of `deepchess genfens`.
#[derive(clap::Args)]
pub struct GenfensArgs {
    /// `N seed S book <None|PATH>`, then optional `KEY VALUE` pairs (`random_plies`,
    /// `opening_nodes`, `opening_bound`), then optionally `quit`.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true, trailing_var_arg = true)]
    request: Vec<String>,
    /// Directory with the value net that scores the openings (default: the embedded one).
    #[arg(long)]
    models: Option<PathBuf>,
}

/// The command line with OpenBench's one-argument request (`"genfens N seed ..."`) split into
/// words; any other command line unchanged.
pub fn split_openbench_request(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    match args.get(1).and_then(|a| a.to_str()) {
        Some(request) if request.starts_with("genfens ") => {
            let words = request.split_whitespace().map(std::ffi::OsString::from);
            args[..1].iter().cloned().chain(words).chain(args[2..].iter().cloned()).collect()
        }
        _ => args,
    }
}

/// Runs `deepchess genfens`.
pub fn run(args: GenfensArgs) -> anyhow::Result<()> {
    let words: Vec<&str> = std::iter::once("genfens").chain(args.request.iter().map(String::as_str)).collect();
    let request = GenfensRequest::parse(&words)?;
    let networks = Networks::load_or_embedded(args.models.as_deref()).map_err(|e| {
        anyhow::anyhow!(
            "--models {}: {e}",
            args.models.as_ref().map_or("<embedded>".into(), |m| m.display().to_string())
        )
    })?;
    genfens(&request, &networks, &mut std::io::stdout().lock())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    #[test]
    fn openbench_requests_are_split_into_words_and_other_command_lines_kept() {
        let args = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            split_openbench_request(args(&["deepchess", "genfens 8 seed 3 book None ", "quit"])),
            args(&["deepchess", "genfens", "8", "seed", "3", "book", "None", "quit"])
        );
        let kept = args(&["deepchess", "bench", "genfens 1"]);
        assert_eq!(split_openbench_request(kept.clone()), kept);
    }
}
