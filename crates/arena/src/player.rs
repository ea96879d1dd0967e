//! Players: an external UCI command (`name=SF,cmd="stockfish",hash=64`) or one of our own
//! searches (`name=B,search=eval,tt=true`), which runs as `deepchess uci` with `setoption`s.

use deepchess_engine::engine::options::OPTIONS;

use crate::uci::EngineCommand;

/// The option name for a key: `option.NAME` for any engine option, or the name of one of
/// our engine's options ([`OPTIONS`]), matched by its name or an alias without case, `-`,
/// `_` or spaces, so `mcts_leaf=rollout` sets `MctsLeaf` and `move_overhead=5` sets
/// `Move Overhead`.
pub fn option_name(key: &str) -> Option<String> {
    if let Some(name) = key.strip_prefix("option.") {
        return (!name.is_empty()).then(|| name.to_owned());
    }
    let normal = |s: &str| s.replace(['-', '_', ' '], "").to_ascii_lowercase();
    OPTIONS.iter().find(|o| o.names().any(|n| normal(n) == normal(key))).map(|o| o.name.to_owned())
}

/// Splits `key=value,key="value, with commas",...`.
fn split_pairs(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = spec.chars().peekable();
    loop {
        let mut key = String::new();
        let mut found_equals = false;
        for c in chars.by_ref() {
            if c == '=' {
                found_equals = true;
                break;
            }
            key.push(c);
        }
        let key = key.trim().to_owned();
        if key.is_empty() || !found_equals {
            return Err(format!("expected key=value in \"{spec}\""));
        }
        let mut value = String::new();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut closed = false;
            for c in chars.by_ref() {
                if c == '"' {
                    closed = true;
                    break;
                }
                value.push(c);
            }
            if !closed {
                return Err(format!("unterminated quote after {key}= in \"{spec}\""));
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            match chars.next() {
                None | Some(',') => {}
                Some(c) => return Err(format!("unexpected '{c}' after the quoted value of {key} in \"{spec}\"")),
            }
        } else {
            value = chars.by_ref().take_while(|c| *c != ',').collect::<String>().trim().to_owned();
        }
        pairs.push((key, value));
        if chars.peek().is_none() {
            return Ok(pairs);
        }
    }
}

/// Splits a command line as a POSIX shell would (quotes, escapes), without running a shell.
pub fn split_command(cmd: &str) -> Result<Vec<String>, String> {
    match shlex::split(cmd) {
        Some(argv) if argv.first().is_some_and(|p| !p.is_empty()) => Ok(argv),
        _ => Err(format!("cannot read the command \"{cmd}\" (empty or unbalanced quotes)")),
    }
}

/// Parses a player given as `name=X,cmd="...",key=value,...`. Without `cmd`, the player is
/// our own engine, started as `own_engine` (for example `[current_exe, "uci"]`).
pub fn parse_player(spec: &str, own_engine: &[String]) -> Result<EngineCommand, String> {
    let mut name = None;
    let mut argv = None;
    let mut options = Vec::new();
    for (key, value) in split_pairs(spec)? {
        match key.as_str() {
            "name" => name = Some(value),
            "cmd" => argv = Some(split_command(&value)?),
            _ => match option_name(&key) {
                Some(option) => options.push((option, value)),
                None => {
                    return Err(format!(
                        "unknown key \"{key}\" in \"{spec}\": expected name, cmd, option.NAME or one of {}",
                        OPTIONS.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
                    ));
                }
            },
        }
    }
    let argv = argv.unwrap_or_else(|| own_engine.to_vec());
    let name = name.unwrap_or_else(|| default_name(&argv, &options));
    Ok(EngineCommand { name, argv, options })
}

/// A name from the program and the options: `stockfish`, `deepchess search=eval tt=true`.
pub fn default_name(argv: &[String], options: &[(String, String)]) -> String {
    let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p).to_owned()).unwrap_or_default();
    std::iter::once(program)
        .chain(options.iter().map(|(k, v)| format!("{}={v}", k.to_ascii_lowercase())))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own() -> Vec<String> {
        vec!["/bin/deepchess".into(), "uci".into()]
    }

    #[test]
    fn external_and_own_players() {
        let sf = parse_player("name=SF, cmd=\"stockfish --flag 'a b'\",hash=64,option.UCI_Elo=1500", &own()).unwrap();
        assert_eq!(sf.name, "SF");
        assert_eq!(sf.argv, ["stockfish", "--flag", "a b"]);
        assert_eq!(sf.options, [("Hash".to_owned(), "64".to_owned()), ("UCI_Elo".into(), "1500".into())]);
        let ours = parse_player("search=eval,tt=true,mcts_leaf=rollout,models=\"a,b\"", &own()).unwrap();
        assert_eq!(ours.argv, own());
        assert_eq!(ours.options[2], ("MctsLeaf".into(), "rollout".into()));
        assert_eq!(ours.options[3], ("Models".into(), "a,b".into()));
        assert_eq!(ours.name, "deepchess search=eval tt=true mctsleaf=rollout models=a,b");
    }

    #[test]
    fn every_option_of_our_engine_is_a_key() {
        for option in OPTIONS {
            for name in option.names() {
                let key = name.replace(' ', "_").to_ascii_lowercase();
                assert_eq!(option_name(&key).as_deref(), Some(option.name), "{key}");
            }
        }
        let ours = parse_player("move_overhead=5,moveoverhead=6,null-move=false,lmr=false", &own()).unwrap();
        let names: Vec<&str> = ours.options.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Move Overhead", "Move Overhead", "NullMove", "LMR"]);
    }

    #[test]
    fn bad_specs() {
        assert!(parse_player("name=A,colour=red", &own()).unwrap_err().contains("unknown key \"colour\""));
        assert!(parse_player("name=A,cmd=\"x", &own()).unwrap_err().contains("unterminated"));
        assert!(parse_player("cmd=''", &own()).unwrap_err().contains("cannot read the command"));
        assert!(parse_player("nothing", &own()).unwrap_err().contains("key=value"));
    }
}
