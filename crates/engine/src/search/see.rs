//! Static exchange evaluation: the material balance of the capture sequence on one square
//! when both sides always recapture with their least valuable attacker and may stop
//! whenever continuing would lose (x-rays through the pieces that have captured are
//! seen; pins and checks are not).

use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Role, Square, attacks};

/// Material values used by the exchange evaluation, in centipawns.
pub fn piece_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 20_000,
    }
}

/// Roles from the least to the most valuable, the order attackers are taken in.
const CHEAPEST_FIRST: [Role; 6] = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];

/// Whether `m` is a capture that loses material by SEE. A capture of a piece worth at
/// least the capturer's never does, and skips the exchange evaluation.
pub fn loses_material(position: &Chess, m: &Move) -> bool {
    m.capture().is_some_and(|victim| piece_value(victim) < piece_value(m.role())) && !see_ge(position, m, 0)
}

/// Whether [`see`] of `m` is at least `threshold`, found without the whole exchange
/// (as Stockfish's `see_ge`): the balance is kept against the threshold and the exchange
/// stops as soon as the side to capture cannot change the answer; the attackers are found
/// once and the sliders behind a capturing pawn, bishop, rook or queen added as it leaves.
/// The same answer as `see(position, m) >= threshold` for every move (tested).
pub fn see_ge(position: &Chess, m: &Move, threshold: i32) -> bool {
    let (Some(from), to) = (m.from(), m.to()) else { return 0 >= threshold };
    if m.is_castle() {
        return 0 >= threshold;
    }
    let board = position.board();
    let mut occupied = board.occupied() ^ Bitboard::from(from);
    if m.is_en_passant() {
        occupied ^= Bitboard::from(Square::from_coords(to.file(), from.rank()));
    }
    let promotion_gain = m.promotion().map_or(0, |role| piece_value(role) - piece_value(Role::Pawn));
    // What the mover's side is ahead of the threshold if the exchange stops here.
    let mut swap = m.capture().map_or(0, piece_value) + promotion_gain - threshold;
    if swap < 0 {
        return false;
    }
    // What the other side is ahead of it after taking the piece on the square.
    swap = m.promotion().map_or(piece_value(m.role()), piece_value) - swap;
    if swap <= 0 {
        return true;
    }
    let diagonal = board.bishops_and_queens();
    let straight = board.rooks_and_queens();
    // Both sides' attackers, each slider lookup done once.
    let mut attackers = (attacks::rook_attacks(to, occupied) & straight)
        | (attacks::bishop_attacks(to, occupied) & diagonal)
        | (attacks::knight_attacks(to) & board.knights())
        | (attacks::king_attacks(to) & board.kings())
        | (attacks::pawn_attacks(Color::Black, to) & board.pawns() & board.white())
        | (attacks::pawn_attacks(Color::White, to) & board.pawns() & board.black());
    let mut side = position.turn();
    // Whether the mover's side reaches the threshold if the exchange stops now.
    let mut reached = true;
    loop {
        side = !side;
        attackers &= occupied;
        let ours = attackers & board.by_color(side);
        let Some((role, square)) = cheapest(board, ours) else { break };
        if role == Role::King {
            // The king may not capture onto a defended square.
            return if (attackers & !board.by_color(side)).any() { reached } else { !reached };
        }
        reached = !reached;
        swap = piece_value(role) - swap;
        if swap < i32::from(reached) {
            break;
        }
        occupied ^= Bitboard::from(square);
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
            attackers |= attacks::bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen) {
            attackers |= attacks::rook_attacks(to, occupied) & straight;
        }
    }
    reached
}

/// The exchange value of `m` in `position` for the side playing it, in centipawns
/// (0 for castling; a quiet move scores minus what it loses if the piece is taken).
pub fn see(position: &Chess, m: &Move) -> i32 {
    let (Some(from), to) = (m.from(), m.to()) else { return 0 };
    if m.is_castle() {
        return 0;
    }
    let board = position.board();
    let mut occupied = board.occupied() ^ Bitboard::from(from);
    if m.is_en_passant() {
        // The captured pawn stands beside the destination, on the mover's rank.
        let captured = Square::from_coords(to.file(), from.rank());
        occupied ^= Bitboard::from(captured);
    }
    let promotion_gain = m.promotion().map_or(0, |role| piece_value(role) - piece_value(Role::Pawn));
    let mut gains = [0i32; 32];
    gains[0] = m.capture().map_or(0, piece_value) + promotion_gain;
    // Value of the piece now standing on the square, which the next capture wins.
    let mut on_square = m.promotion().map_or(piece_value(m.role()), piece_value);
    let mut side = !position.turn();
    let mut depth = 0;
    while depth + 1 < gains.len() {
        let attackers = board.attacks_to(to, side, occupied) & occupied;
        let Some((role, square)) = cheapest(board, attackers) else { break };
        if role == Role::King && (board.attacks_to(to, !side, occupied) & occupied).any() {
            // The king may not capture onto a defended square.
            break;
        }
        depth += 1;
        gains[depth] = on_square - gains[depth - 1];
        on_square = piece_value(role);
        occupied ^= Bitboard::from(square);
        side = !side;
    }
    while depth > 0 {
        gains[depth - 1] = -(-gains[depth - 1]).max(gains[depth]);
        depth -= 1;
    }
    gains[0]
}

/// The least valuable piece among `attackers` and its square.
fn cheapest(board: &Board, attackers: Bitboard) -> Option<(Role, Square)> {
    CHEAPEST_FIRST.iter().find_map(|&role| (attackers & board.by_role(role)).first().map(|square| (role, square)))
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::{CastlingMode, Chess};

    use super::{see, see_ge};

    fn see_of(fen: &str, uci: &str) -> i32 {
        let position: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let m = UciMove::from_ascii(uci.as_bytes()).unwrap().to_move(&position).unwrap();
        see(&position, &m)
    }

    #[test]
    fn undefended_pawn_wins_a_pawn() {
        assert_eq!(see_of("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5"), 100);
    }

    #[test]
    fn defended_pawn_taken_by_a_knight_loses_knight_for_pawn() {
        // NxP, nxN, RxN, bxR, QxB, qxQ: Black stops after nxN, White loses a knight for a pawn.
        assert_eq!(see_of("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1", "d3e5"), 100 - 320);
    }

    #[test]
    fn x_ray_recaptures_are_counted() {
        // Rxd5 with a queen behind the rook; Black defends with one rook: R takes P, r takes
        // R, Q takes r: +100 - 500 + 500 = +100.
        assert_eq!(see_of("3r2k1/8/8/3p4/8/8/3R4/3Q2K1 w - - 0 1", "d2d5"), 100);
    }

    #[test]
    fn queen_taking_a_defended_pawn_loses_the_queen() {
        assert_eq!(see_of("4k3/8/2p5/3p4/8/8/8/3QK3 w - - 0 1", "d1d5"), 100 - 900);
    }

    #[test]
    fn en_passant_and_quiet_moves() {
        // exd6 e.p., nothing recaptures: a pawn.
        assert_eq!(see_of("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"), 100);
        // A quiet knight move onto a square a pawn attacks loses the knight; a safe one is 0.
        assert_eq!(see_of("4k3/8/8/8/5p2/8/8/4KN2 w - - 0 1", "f1g3"), -320);
        assert_eq!(see_of("4k3/8/8/8/5p2/8/8/4KN2 w - - 0 1", "f1d2"), 0);
    }

    #[test]
    fn see_ge_answers_as_the_whole_exchange_does() {
        use shakmaty::Position;
        let thresholds = [-900, -321, -320, -101, -100, -1, 0, 1, 99, 100, 220, 320, 500, 900];
        let (mut checked, mut exchanges) = (0, 0);
        for game in 0..60 {
            for position in crate::random_games::random_game(game, 100) {
                for m in &position.legal_moves() {
                    let value = see(&position, m);
                    exchanges += usize::from(value != 0 && m.capture().is_none() || value < 0);
                    for threshold in thresholds {
                        checked += 1;
                        assert_eq!(
                            see_ge(&position, m, threshold),
                            value >= threshold,
                            "{m:?} (see {value}) at {threshold} in {}",
                            shakmaty::fen::Fen::from_position(&position, shakmaty::EnPassantMode::Legal)
                        );
                    }
                }
            }
        }
        assert!(checked > 500_000 && exchanges > 5_000, "{checked} answers, {exchanges} losing exchanges");
    }
}
