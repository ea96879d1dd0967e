"""What benches/sts_python_chess.py and benches/match_python_chess.py share: NAME=VALUE options
and starting a UCI engine through python-chess, each failure a clear message, not a traceback."""
import shlex

import chess.engine


def parse_options(pairs, flag):
    """`["Hash=16", ...]` -> `{"Hash": "16"}`; a pair without `=` names its flag."""
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"{flag} {pair}: expected NAME=VALUE")
        options[name] = value
    return options


def open_engine(command, options, flag):
    """Starts `command` (a shell-like command line) and sets `options`; exits naming `flag`
    when the program is missing, is not a UCI engine, or refuses an option."""
    try:
        engine = chess.engine.SimpleEngine.popen_uci(shlex.split(command))
    except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError) as error:
        raise SystemExit(f"{flag} {command!r}: cannot start a UCI engine: {error}")
    try:
        engine.configure(options)
    except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as error:
        engine.close()
        raise SystemExit(f"{flag} {command!r}: options {options}: {error}")
    return engine
