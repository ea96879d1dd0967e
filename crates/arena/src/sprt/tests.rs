//! Tests of the SPRT: likelihood ratios against fishtest, bounds and verdicts, settings, Elo
//! estimates, pairing of games.

use super::*;

fn settings(text: &str) -> SprtSettings {
    text.parse().unwrap()
}

/// Expected LLRs from an independent Python implementation of fishtest's
/// `server/fishtest/stats/LLRcalc.py` formulas (`LLR_logistic`, `LLR_normalized`: counts
/// regularised with 1e-3, `MLE_expected` / `MLE_t_value`, secular equation solved with
/// scipy's `brentq`, t-value iteration run to 1e-12), scipy 1.17.
const EXPECTED: [([u32; 5], f64, f64, f64, f64); 10] = [
    // counts, elo0, elo1, logistic LLR, normalized LLR
    ([10, 20, 40, 25, 5], 0.0, 10.0, -0.4374862329, -0.2821129157),
    ([10, 20, 40, 25, 5], -3.0, 1.0, -0.0979273277, -0.0732138024),
    ([39, 2226, 31451, 2412, 40], 0.5, 2.5, -10.4145896465, 2.3379000175),
    ([39, 2226, 31451, 2412, 40], -5.0, 0.0, 145.3350577618, 17.8322235958),
    ([10789, 19328, 33806, 19402, 10543], -3.0, 1.0, 2.1310678118, 0.3008697855),
    ([1, 4, 9, 6, 2], 0.0, 10.0, 0.1944577800, 0.1444561853),
    ([0, 0, 12, 0, 0], 0.0, 10.0, -0.3440064419, -0.0167688702),
    ([0, 0, 12, 0, 0], -5.0, 0.0, 0.1682346069, 0.0033480245),
    ([0, 0, 0, 0, 7], 0.0, 10.0, 0.1986329917, 0.2790753420),
    ([3, 0, 0, 0, 0], 0.0, 10.0, -0.0876485423, -0.1245854100),
];

#[test]
fn llr_matches_fishtest() {
    for (counts, elo0, elo1, logistic, normalized) in EXPECTED {
        for (model, expected) in [(EloModel::Logistic, logistic), (EloModel::Normalized, normalized)] {
            let s = SprtSettings::new(elo0, elo1, 0.05, 0.05, model).unwrap();
            let llr = Pentanomial(counts).llr(&s);
            assert!(
                (llr - expected).abs() < 1e-6 * expected.abs().max(1.0),
                "{counts:?} {elo0} {elo1} {model}: {llr} vs {expected}"
            );
        }
    }
}

#[test]
fn bounds_and_verdicts() {
    let s = settings("elo0=0,elo1=10,alpha=0.05,beta=0.05");
    // ln(0.05 / 0.95) and ln(0.95 / 0.05)
    assert!((s.lower_bound() + 2.944_438_979).abs() < 1e-9 && (s.upper_bound() - 2.944_438_979).abs() < 1e-9);
    assert_eq!((s.verdict(2.95), s.verdict(-2.95), s.verdict(0.0)), (Verdict::H1, Verdict::H0, Verdict::Continue));
    assert_eq!(s, settings("elo1 = 10, elo0 = 0"), "alpha and beta default to 0.05, normalized Elo");
    assert_eq!(settings("elo0=-5,elo1=0,model=logistic").model(), EloModel::Logistic);
    let asymmetric = settings("elo0=0,elo1=5,alpha=0.1,beta=0.01");
    assert!((asymmetric.lower_bound() - (0.01f64 / 0.9).ln()).abs() < 1e-12);
}

#[test]
fn bad_settings_are_named() {
    let error = |text: &str| text.parse::<SprtSettings>().unwrap_err();
    assert!(error("elo0=10,elo1=0").contains("less than elo1"));
    assert!(error("elo0=0").contains("required"));
    assert!(error("elo0=0,elo1=x").contains("elo1: \"x\""));
    assert!(error("elo0=0,elo1=5,alpha=0").contains("alpha"));
    assert!(error("elo0=0,elo1=5,alpha=0.6,beta=0.5").contains("alpha + beta"));
    assert!(error("elo0=0,elo1=5,gamma=1").contains("unknown key \"gamma\""));
    assert!(error("elo0=0,elo1=500").contains("±200"));
    assert!(error("elo0=0,elo1=5,model=bayes").contains("model"));
    assert!(error("elo0 0").contains("key=value"));
    assert_eq!(error("elo0=0,elo1=10,elo1=20"), "elo1 is given twice");
    assert_eq!(error("elo0=0,elo1=1e308"), "normalized Elo bounds must lie within ±200 (got 0, 1e308)");
    assert_eq!(error("elo0=0,elo1=1e308,model=logistic"), "logistic Elo bounds must lie within ±1000 (got 0, 1e308)");
    assert_eq!(error("elo0=0,elo1=5,alpha=1e300"), "alpha must lie between 0 and 1 (got 1e300)");
    assert!(SprtSettings::new(f64::NAN, 1.0, 0.05, 0.05, EloModel::Logistic).is_err());
}

#[test]
fn degenerate_counts_stay_finite() {
    let s = settings("elo0=0,elo1=10");
    let none = Pentanomial::default();
    assert_eq!((none.llr(&s), none.elo(), none.los(), none.normalized_elo()), (0.0, None, None, None));
    for counts in [[0, 0, 50, 0, 0], [0, 0, 0, 0, 50], [50, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 3, 0, 0, 0]] {
        let p = Pentanomial(counts);
        for model in [EloModel::Logistic, EloModel::Normalized] {
            let llr = p.llr(&SprtSettings::new(0.0, 10.0, 0.05, 0.05, model).unwrap());
            assert!(llr.is_finite(), "{counts:?} {model}: {llr}");
        }
        let (elo, nelo, los) = (p.elo().unwrap(), p.normalized_elo().unwrap(), p.los().unwrap());
        assert!(
            !elo.elo.is_nan() && !elo.low.is_nan() && !elo.high.is_nan() && nelo.is_finite(),
            "{counts:?}: {elo:?} {nelo}"
        );
        assert!((0.0..=1.0).contains(&los), "{counts:?}: {los}");
    }
    let draws = Pentanomial([0, 0, 50, 0, 0]);
    assert!(draws.elo().unwrap().elo.abs() < 1e-9 && (draws.los().unwrap() - 0.5).abs() < 1e-7, "symmetric");
    assert!(Pentanomial([0, 0, 0, 0, 50]).los().unwrap() > 0.999);
}

#[test]
fn elo_interval_and_los() {
    // [10, 20, 40, 25, 5]: per-game pair scores with mean 0.4875 and variance 0.06546875
    // per pair; s ± 1.96·sqrt(0.06546875 / 100).
    let p = Pentanomial([10, 20, 40, 25, 5]);
    let e = p.elo().unwrap();
    let (s, se) = (0.4875, (0.065_468_75f64 / 100.0).sqrt());
    assert!((e.elo - elo_from_score(s)).abs() < 1e-9 && (e.low - elo_from_score(s - Z_95 * se)).abs() < 1e-9);
    assert!((e.high - elo_from_score(s + Z_95 * se)).abs() < 1e-9);
    // Φ(-0.0125 / 0.0255869) = 0.3125865 (scipy.stats.norm.cdf).
    assert!((p.los().unwrap() - 0.312_586_5).abs() < 1e-6, "{}", p.los().unwrap());
    // (0.4875 - 0.5) / sqrt(2 · 0.06546875) · 800 / ln 10 = -12.001963
    assert!((p.normalized_elo().unwrap() + 12.001_963).abs() < 1e-5, "{}", p.normalized_elo().unwrap());
    // Within the fit's 1.2e-7.
    assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-7 && (normal_cdf(0.0) - 0.5).abs() < 1e-7);
    assert!((normal_cdf(-1.0) - 0.158_655_254).abs() < 1e-7 && (normal_cdf(3.0) - 0.998_650_102).abs() < 1e-7);
}

#[test]
fn pairs_from_games_in_any_order() {
    use crate::game::{GameEnd, GameRecord, GameResult, Termination};
    use crate::openings::Opening;
    use crate::tournament::Pairing;
    let game = |round: usize, white: usize, result: GameResult| FinishedGame {
        pairing: Pairing { round, white, black: 1 - white, opening: (round - 1) / 2 },
        record: GameRecord::new(
            "",
            "",
            &Opening::startpos(),
            Vec::new(),
            GameEnd::new(result, Termination::Normal, "", None),
        ),
    };
    let mut test = SprtTest::new(settings("elo0=0,elo1=100,alpha=0.1,beta=0.1"));
    // Pair 1: player 0 wins as White and draws as Black; pair 2 arrives second game first.
    assert_eq!(test.add(&game(1, 0, GameResult::WhiteWins)), None);
    assert_eq!(test.add(&game(4, 1, GameResult::BlackWins)), None);
    assert_eq!(test.add(&game(2, 1, GameResult::Draw)), None);
    assert_eq!(test.add(&game(3, 0, GameResult::WhiteWins)), None);
    assert_eq!(test.add(&game(5, 0, GameResult::BlackWins)), None);
    let report = test.report();
    assert_eq!(report.pentanomial, Pentanomial([0, 0, 0, 1, 1]));
    assert_eq!(report.record, Record { wins: 3, draws: 1, losses: 1 });
    assert_eq!((report.unpaired_games, report.verdict), (1, Verdict::Continue));
    let mut round = 5;
    let decided = loop {
        round += 1;
        // Player 0 wins every game from here: as Black in even rounds, as White in odd ones.
        let (white, result) = if round % 2 == 0 { (1, GameResult::BlackWins) } else { (0, GameResult::WhiteWins) };
        if let Some(v) = test.add(&game(round, white, result)) {
            break v;
        }
        assert!(round < 100, "a run of won pairs must decide the test");
    };
    assert_eq!(decided, Verdict::H1);
    let report = test.report();
    assert!(report.llr >= report.upper_bound && report.decided_after_pairs == Some(report.pentanomial.pairs()));
    let text = report.to_string();
    assert!(
        text.contains("H1 accepted after") && text.contains("pentanomial [LL, LD, DD+WL, WD, WW]: [0, 0, 1, 1,"),
        "{text}"
    );
}
