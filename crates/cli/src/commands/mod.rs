//! One module per subcommand: argument definitions and the glue to the library crates.

pub mod analyse;
pub mod bench;
pub mod eval;
pub mod matches;
pub mod prepare;
pub mod sts;
pub mod train;
pub mod uci;

/// Error for a subcommand whose issue has not landed yet.
fn pending(command: &str, issue: u32) -> anyhow::Result<()> {
    anyhow::bail!("`deepchess {command}` is not available yet (tracked in issue {issue})")
}
