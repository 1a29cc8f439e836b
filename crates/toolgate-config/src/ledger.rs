//! `[ledger]`: the idempotency ledger's retention and derived-key window, as spans.

use std::time::Duration;

/// The built-in retention of ledger entries: 24 hours
/// ([`toolgate_core::LedgerOptions::default`]).
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// Parses a span of the `[ledger]` table: humantime syntax (`90s`, `10m`, `24h`, `7d`; `0s`
/// is zero), at most 100 years.
///
/// # Errors
/// A message saying what is wrong and what to write instead.
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let shown: String = t.chars().take(40).collect();
    let d = humantime::parse_duration(t)
        .map_err(|e| format!("{shown:?} is not a span such as \"90s\", \"10m\" or \"24h\": {e}"))?;
    if d > Duration::from_secs(100 * 365 * 86_400) {
        return Err(format!("{shown:?} is longer than 100 years"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_parse_and_bad_ones_say_why() {
        assert_eq!(parse_span("24h"), Ok(DEFAULT_RETENTION));
        assert_eq!(parse_span(" 0s "), Ok(Duration::ZERO));
        for (bad, says) in [
            ("", "not a span"),
            ("soon", "not a span"),
            ("-1h", "not a span"),
            ("200y", "longer than 100 years"),
        ] {
            let e = parse_span(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
