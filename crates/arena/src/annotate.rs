//! A PGN game annotated by a search: every position searched, `{ [%eval] }` after each
//! move (lichess's placement and notation), and the search's line as a variation where its
//! choice differs from the move played.

use deepchess_engine::position_history::Game;
use deepchess_engine::search::SearchResult;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};

use crate::pgn::{eval_text, write_movetext, write_tag};
use crate::pgn_game::PgnGame;
use crate::uci::flipped;

/// `m` in SAN with its check or mate suffix.
pub fn san(position: &Chess, m: &Move) -> String {
    SanPlus::from_move(position.clone(), *m).to_string()
}

/// A line of moves from `position` in SAN, with move numbers (`12... Nf6 13. Bg5`).
pub fn san_line(position: &Chess, line: &[Move]) -> String {
    let mut position = position.clone();
    let mut text = Vec::new();
    for (i, m) in line.iter().enumerate() {
        let number = position.fullmoves();
        if position.turn() == Color::White {
            text.push(format!("{number}."));
        } else if i == 0 {
            text.push(format!("{number}..."));
        }
        text.push(SanPlus::from_move_and_play_unchecked(&mut position, *m).to_string());
    }
    text.join(" ")
}

/// `[%eval]` text of `position`: the search's score turned to White's view, or for a
/// finished game (no search) `#0` / `#-0` when White / Black has mated, `0.00` for a draw.
fn position_eval(search: Option<&SearchResult>, position: &Chess) -> String {
    let Some(result) = search else {
        return match position.is_checkmate() {
            true if position.turn() == Color::Black => "#0".to_owned(),
            true => "#-0".to_owned(),
            false => "0.00".to_owned(),
        };
    };
    eval_text(if position.turn() == Color::White { result.score } else { flipped(result.score) })
}

/// The annotated game as PGN text (its tags, an `Annotator` tag unless it has one, the
/// annotated main line and its result), ending with a blank line. `search` is asked for
/// every position of the game in order, the last included, and returns `None` for a
/// position without legal moves.
pub fn annotate(pgn: &PgnGame, mut search: impl FnMut(&Game) -> Option<SearchResult>) -> String {
    let mut game = Game::new(pgn.start.clone());
    let mut positions = Vec::with_capacity(pgn.moves.len() + 1);
    let mut results = Vec::with_capacity(pgn.moves.len() + 1);
    for &m in &pgn.moves {
        positions.push(game.position().clone());
        results.push(search(&game));
        game.play(m);
    }
    positions.push(game.position().clone());
    results.push(search(&game));

    let mut text = String::new();
    for (name, value) in &pgn.tags {
        write_tag(&mut text, name, value);
    }
    if !pgn.tags.iter().any(|(name, _)| name == "Annotator") {
        write_tag(&mut text, "Annotator", "deepchess");
    }
    text.push('\n');
    let mut tokens: Vec<String> = Vec::new();
    for (i, m) in pgn.moves.iter().enumerate() {
        let before = &positions[i];
        let dots = if before.turn() == Color::White { "." } else { "..." };
        tokens.push(format!("{}{dots} {}", before.fullmoves(), san(before, m)));
        tokens.push(format!("{{ [%eval {}] }}", position_eval(results[i + 1].as_ref(), &positions[i + 1])));
        if let Some(choice) = &results[i]
            && choice.best != *m
        {
            // The search's line, its score after its first move as lichess places it.
            let pv = &choice.pv;
            let mut variation =
                format!("( {} {{ [%eval {}] }}", san_line(before, &pv[..1]), position_eval(Some(choice), before));
            if pv.len() > 1 {
                let mut after = before.clone();
                after.play_unchecked(pv[0]);
                variation.push(' ');
                variation.push_str(&san_line(&after, &pv[1..]));
            }
            tokens.push(variation + " )");
        }
    }
    tokens.push(pgn.outcome.to_string());
    write_movetext(&mut text, tokens);
    text
}

#[cfg(test)]
mod tests {
    use deepchess_engine::search::Score;

    use super::*;
    use crate::pgn_game::read_game;

    /// A search that always prefers the first legal move, scoring it `score` for the side
    /// to move, with a two-move line when there is one.
    fn first_move(score: Score) -> impl FnMut(&Game) -> Option<SearchResult> {
        move |game: &Game| {
            let position = game.position();
            let best = position.legal_moves().first().copied()?;
            let mut pv = vec![best];
            let after = position.clone().play(best).ok()?;
            pv.extend(after.legal_moves().first().copied());
            Some(SearchResult { best, score, pv, depth: 1, nodes: 1 })
        }
    }

    #[test]
    fn evals_variations_and_tags() {
        let pgn = "[Event \"a \\\"b\\\"\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n";
        let game = read_game(pgn.as_bytes(), 1).unwrap();
        let mut asked = 0;
        let mut search = first_move(Score::Cp(25));
        let text = annotate(&game, |g| {
            asked += 1;
            search(g)
        });
        assert_eq!(asked, 8, "every position, the last included");
        assert!(text.starts_with("[Event \"a \\\"b\\\"\"]\n[Result \"1-0\"]\n[Annotator \"deepchess\"]\n\n"), "{text}");
        let movetext = text.split("\n\n").nth(1).unwrap().replace('\n', " ");
        // After White's move Black is to move: +0.25 for Black is -0.25 from White's view;
        // the search's choice differs from 1. e4 and is given with its score for White.
        let start = Chess::default();
        let choice = san(&start, &start.legal_moves()[0]);
        assert!(
            movetext.starts_with(&format!("1. e4 {{ [%eval -0.25] }} ( 1. {choice} {{ [%eval 0.25] }}")),
            "{movetext}"
        );
        assert!(movetext.contains("1... e5 { [%eval 0.25] }"), "{movetext}");
        assert!(movetext.contains("4. Qxf7# { [%eval #0] }"), "checkmate by White, no search: {movetext}");
        assert!(movetext.ends_with(" 1-0"), "{movetext}");
        assert!(text.lines().all(|l| l.len() <= 79), "{text}");
        assert!(text.ends_with("1-0\n\n"));
    }

    #[test]
    fn mates_and_draws_from_whites_view() {
        let pgn = "[FEN \"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\"]\n\n1. Kf2 Kf8 *\n";
        let game = read_game(pgn.as_bytes(), 1).unwrap();
        let text = annotate(&game, first_move(Score::Mate(-3))).replace('\n', " ");
        // Black to move after 1. Kf2: mated in 3 for Black is #3 for White.
        assert!(text.contains("1. Kf2 { [%eval #3] }"), "{text}");
        assert!(text.contains("1... Kf8 { [%eval #-3] }"), "{text}");
        let stalemate = "[FEN \"7k/5Q2/8/6K1/8/8/8/8 w - - 0 1\"]\n\n1. Kg6 1/2-1/2\n";
        let game = read_game(stalemate.as_bytes(), 1).unwrap();
        let text = annotate(&game, first_move(Score::Cp(0)));
        assert!(text.contains("1. Kg6 { [%eval 0.00] }"), "{text}");
    }

    #[test]
    fn san_lines_number_black_first_moves() {
        let game =
            read_game("[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 0 40\"]\n\n40... Kd7 41. e4 *\n".as_bytes(), 1).unwrap();
        assert_eq!(san_line(&game.start, &game.moves), "40... Kd7 41. e4");
    }
}
