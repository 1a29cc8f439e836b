//! [`GrantExpiry`]: how long the grants of approvers' scoped answers hold, from the
//! configuration's `[approvals]` table, overridable by command-line flags.

use std::time::Duration;
pub use toolgate_core::grant::MAX_EXPIRY;

/// The built-in expiry of an `always` grant whose answer does not say: 24 hours.
pub const DEFAULT_ALWAYS_EXPIRES: Duration = Duration::from_secs(24 * 3600);

/// How long the grants an approver's answer creates hold (each `None`: no expiry, or no cap).
///
/// Built-in defaults ([`GrantExpiry::default`]): a `session` grant holds until its session
/// ends or it is revoked, an `always` grant for [`DEFAULT_ALWAYS_EXPIRES`], and an answer may
/// ask for any expiry. The configuration's `[approvals]` table replaces them
/// ([`crate::Config::grant_expiry`]); command-line flags replace those
/// ([`GrantExpiry::with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantExpiry {
    /// How long a `session` grant holds (`None`: until its session ends or it is revoked).
    pub session: Option<Duration>,
    /// How long an `always` grant holds when the answer does not say (`None`: until revoked).
    pub always: Option<Duration>,
    /// The longest expiry an answer may ask for (`None`: no cap; then `never` may be asked).
    pub max: Option<Duration>,
}

impl Default for GrantExpiry {
    fn default() -> Self {
        GrantExpiry {
            session: None,
            always: Some(DEFAULT_ALWAYS_EXPIRES),
            max: None,
        }
    }
}

/// One setting given on the command line: `Some(Some(span))`, `Some(None)` for `never`, or
/// `None` when not given.
pub type Override = Option<Option<Duration>>;

impl GrantExpiry {
    /// These settings with the ones given on the command line in place of their own, within
    /// the cap ([`GrantExpiry::within_cap`]).
    ///
    /// # Errors
    /// A message when a span given on the command line exceeds the cap.
    pub fn with(self, session: Override, always: Override, max: Override) -> Result<Self, String> {
        let e = GrantExpiry {
            session: session.unwrap_or(self.session),
            always: always.unwrap_or(self.always),
            max: max.unwrap_or(self.max),
        };
        for (name, given) in [("session", session), ("always", always), ("max", max)] {
            if let Some(Some(v)) = given {
                check_span(v).map_err(|e| format!("the {name} grant expiry {e}"))?;
            }
        }
        for (name, given) in [("session", session), ("always", always)] {
            if let Some(v) = given {
                if !e.allows(v) {
                    return Err(format!(
                        "the {name} grant expiry ({}) is longer than the maximum expiry ({})",
                        span_text(v),
                        span_text(e.max)
                    ));
                }
            }
        }
        Ok(e.within_cap())
    }

    /// The defaults cut to the cap: a `session` grant that would hold until its session ends
    /// and an `always` grant longer than the cap (or without an expiry) get the cap.
    pub fn within_cap(self) -> Self {
        let cut = |d: Option<Duration>| match (d, self.max) {
            (d, None) => d,
            (None, Some(m)) => Some(m),
            (Some(d), Some(m)) => Some(d.min(m)),
        };
        GrantExpiry {
            session: cut(self.session),
            always: cut(self.always),
            max: self.max,
        }
    }

    /// Whether an answer may ask for `expires` (`None`: never): always without a cap, else
    /// a span of at most the cap.
    pub fn allows(&self, expires: Option<Duration>) -> bool {
        match (self.max, expires) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(max), Some(e)) => e <= max,
        }
    }
}

/// A span as written back (`1day 2h`, or `never`).
pub fn span_text(d: Option<Duration>) -> String {
    match d {
        Some(d) => humantime::format_duration(d).to_string(),
        None => "never".into(),
    }
}

/// Checks a span is one a grant can hold: at most [`MAX_EXPIRY`] (100 years).
///
/// # Errors
/// A message, starting after the name of what was given, saying what to give instead.
pub fn check_span(d: Duration) -> Result<(), String> {
    if d > MAX_EXPIRY {
        return Err(format!(
            "({}) is longer than the longest expiry, 100 years ({} days): give a shorter span, \
             or \"never\" for grants that hold until revoked",
            span_text(Some(d)),
            MAX_EXPIRY.as_secs() / 86_400
        ));
    }
    Ok(())
}

/// Parses an expiry as the configuration and the command line write it: a span such as
/// `30m`, `8h` or `7d` (humantime syntax, at least one second, at most [`MAX_EXPIRY`]: 100
/// years), or `never` (`None`).
///
/// # Errors
/// A message saying what is wrong and what to write instead.
pub fn parse_expiry(text: &str) -> Result<Option<Duration>, String> {
    let t = text.trim();
    if t == "never" {
        return Ok(None);
    }
    let shown: String = t.chars().take(40).collect();
    let d = humantime::parse_duration(t).map_err(|e| {
        format!("{shown:?} is not a span such as \"30m\", \"8h\" or \"7d\", nor \"never\": {e}")
    })?;
    if d < Duration::from_secs(1) {
        return Err(format!(
            "{shown:?} is shorter than one second: grants expire in whole seconds"
        ));
    }
    check_span(d).map_err(|e| format!("{shown:?} {e}"))?;
    Ok(Some(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries_parse_and_bad_ones_say_why() {
        assert_eq!(parse_expiry("8h"), Ok(Some(Duration::from_secs(8 * 3600))));
        assert_eq!(parse_expiry(" never "), Ok(None));
        assert_eq!(parse_expiry("1s"), Ok(Some(Duration::from_secs(1))));
        assert_eq!(parse_expiry("36525d"), Ok(Some(MAX_EXPIRY)));
        for (bad, says) in [
            ("", "not a span"),
            ("soon", "not a span"),
            ("-1h", "not a span"),
            ("0s", "shorter than one second"),
            ("500ms", "shorter than one second"),
            ("99999999999999999999y", "not a span"),
            ("1000000y", "longer than the longest expiry, 100 years"),
            ("101y", "longer than the longest expiry"),
            ("36526d", "longer than the longest expiry"),
        ] {
            let e = parse_expiry(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn flags_replace_the_configuration_within_the_cap() {
        let h = |n: u64| Some(Duration::from_secs(n * 3600));
        let config = GrantExpiry {
            session: h(1),
            always: h(8),
            max: h(24),
        };
        assert_eq!(config.with(None, None, None), Ok(config));
        assert_eq!(
            config.with(Some(h(2)), Some(h(3)), None),
            Ok(GrantExpiry {
                session: h(2),
                always: h(3),
                max: h(24)
            })
        );
        let e = config.with(None, Some(h(48)), None).unwrap_err();
        assert!(e.contains("always") && e.contains("maximum"), "{e}");
        let e = config.with(None, Some(None), None).unwrap_err();
        assert!(e.contains("never"), "{e}");
        // a flag in hours past 100 years (serve --always-expires-hours) is refused too
        let e = config
            .with(None, Some(h(u64::from(u32::MAX))), Some(None))
            .unwrap_err();
        assert!(e.contains("always") && e.contains("100 years"), "{e}");
        // a lower cap cuts the defaults it was not given with
        assert_eq!(
            config.with(None, None, Some(h(4))),
            Ok(GrantExpiry {
                session: h(1),
                always: h(4),
                max: h(4)
            })
        );
        // no cap: never may be asked for
        let open = config.with(Some(None), Some(None), Some(None)).unwrap();
        assert_eq!((open.session, open.always), (None, None));
        assert!(config.allows(h(24)) && !config.allows(h(25)) && !config.allows(None));
        assert!(GrantExpiry::default().allows(None));
        // a session grant under a cap holds at most the cap
        let capped = GrantExpiry::default().with(None, None, Some(h(2))).unwrap();
        assert_eq!((capped.session, capped.always), (h(2), h(2)));
    }
}
