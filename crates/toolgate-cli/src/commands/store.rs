//! What the store commands (`audit`, `stats`) share: where the store is, and times.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use toolgate_store::Store;

/// Where the store is: `--store PATH`, or the store of `--workspace DIR` (default: the current
/// directory), `<DIR>/.toolgate/toolgate.db`.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// The store file (default `<workspace>/.toolgate/toolgate.db`).
    #[arg(long, value_name = "PATH", conflicts_with = "workspace")]
    pub store: Option<PathBuf>,
    /// The workspace whose store to read (default: the current directory).
    #[arg(long, short, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

impl StoreArgs {
    /// The store file.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        if let Some(p) = &self.store {
            return Ok(p.clone());
        }
        let dir = match &self.workspace {
            Some(d) => d.clone(),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        Ok(store_of(&dir))
    }

    /// Opens the store, creating it when missing: a `--store` file in its existing directory,
    /// or the workspace's (with its `.toolgate` directory, made confined to the workspace).
    pub fn open_or_create(&self) -> anyhow::Result<Store> {
        let path = match &self.store {
            Some(p) => p.clone(),
            None => super::workspace_store(&super::open_workspace(self.workspace.as_deref())?)?,
        };
        Store::open(&path).with_context(|| format!("opening the store {}", path.display()))
    }

    /// Opens the store, which must exist.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        let path = self.path()?;
        Ok(Store::open_existing(&path)?)
    }
}

/// The store of the workspace at `dir` (its canonical root when it exists).
pub fn store_of(dir: &Path) -> PathBuf {
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    toolgate_store::default_path(&root)
}

/// `--since` as clap parses it ([`parse_since`] at the time of parsing), so a bad value is a
/// usage error (exit 2) that names the flag.
///
/// # Errors
/// What is wrong with the value, and what to give instead.
pub fn since_arg(text: &str) -> Result<u64, String> {
    parse_since(text, SystemTime::now()).map_err(|e| format!("{e:#}"))
}

/// Parses `--since`: an RFC 3339 time (`2026-01-31T12:00:00Z`, `2026-01-31T14:00:00+02:00`,
/// or without an offset for UTC) or a time span back from `now` (`90s`, `30m`, `1h`, `2d`,
/// `1h 30m`). Returns microseconds since the Unix epoch.
///
/// # Errors
/// An empty value, or one that is neither (the message says what to give instead).
pub fn parse_since(text: &str, now: SystemTime) -> anyhow::Result<u64> {
    let t = text.trim();
    if t.is_empty() {
        bail!("it is empty: give an RFC 3339 time such as 2026-01-31T12:00:00Z or a span such as 1h or 30m");
    }
    if let Ok(span) = humantime::parse_duration(t) {
        let at = now.checked_sub(span).unwrap_or(SystemTime::UNIX_EPOCH);
        return Ok(toolgate_core::audit::now_us(at));
    }
    let (local, offset) = split_offset(t);
    let utc = humantime::parse_rfc3339_weak(local).with_context(|| {
        "it is neither an RFC 3339 time such as 2026-01-31T12:00:00Z nor a span back from now \
         such as 1h or 30m"
    })?;
    let at = if offset >= 0 {
        utc.checked_sub(Duration::from_secs(offset.unsigned_abs()))
    } else {
        utc.checked_add(Duration::from_secs(offset.unsigned_abs()))
    }
    .unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(toolgate_core::audit::now_us(at))
}

/// Splits a trailing `+HH:MM` / `-HH:MM` offset off an RFC 3339 time; the offset in seconds.
fn split_offset(t: &str) -> (&str, i64) {
    let b = t.as_bytes();
    if b.len() > 6 && t.is_char_boundary(b.len() - 6) {
        let (head, tail) = t.split_at(b.len() - 6);
        let tb = tail.as_bytes();
        let digits = |r: std::ops::Range<usize>| tail.get(r).and_then(|s| s.parse::<i64>().ok());
        if (tb[0] == b'+' || tb[0] == b'-') && tb[3] == b':' && head.contains('T') {
            if let (Some(h), Some(m)) = (digits(1..3), digits(4..6)) {
                if h < 24 && m < 60 {
                    let sign = if tb[0] == b'-' { -1 } else { 1 };
                    return (head, sign * (h * 3600 + m * 60));
                }
            }
        }
    }
    (t, 0)
}

/// The last second RFC 3339 can write (9999-12-31T23:59:59Z), in microseconds since the epoch.
const LAST_RFC3339_US: u64 = 253_402_300_799_999_999;

/// A time as RFC 3339 in UTC to the second. A time past year 9999 (only a damaged or hand-made
/// row holds one) is shown as the microseconds it is, never a panic.
pub fn format_time(us: u64) -> String {
    if us > LAST_RFC3339_US {
        return format!("after-9999 ({us}µs)");
    }
    let t = SystemTime::UNIX_EPOCH + Duration::from_micros(us);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A duration in microseconds for a person: `85µs`, `1.25ms`, `3.40s`.
pub fn format_us(us: u64) -> String {
    if us < 1_000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{:.2}ms", us as f64 / 1e3)
    } else {
        format!("{:.2}s", us as f64 / 1e6)
    }
}

/// `s` for a table column of `max` characters: escaped as every operator view escapes text
/// a model controls ([`toolgate_core::escape::operator`]: controls, bidirectional overrides,
/// line separators shown as `\u{..}`), then cut to `max` characters with `…` when longer.
pub fn clip(s: &str, max: usize) -> String {
    let escaped = toolgate_core::escape::operator(s, max);
    if escaped.chars().count() <= max {
        escaped.into_owned()
    } else {
        let mut t: String = escaped.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A name (a tool's) for a table column of `max` characters: escaped as [`clip`], then, when
/// longer, its start and its end around `…`, so names that differ only at the end (a gateway's
/// `toolgate.upstream.web.sampling` and `.elicitation`, `web__read` and `web__write`) stay
/// apart.
pub fn clip_name(s: &str, max: usize) -> String {
    let escaped = toolgate_core::escape::operator(s, s.len());
    let n = escaped.chars().count();
    if n <= max {
        return escaped.into_owned();
    }
    let tail = max.saturating_sub(1) / 2;
    let head = max.saturating_sub(1) - tail;
    let mut t: String = escaped.chars().take(head).collect();
    t.push('…');
    t.extend(escaped.chars().skip(n - tail));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_name_keeps_both_ends_so_names_differing_at_the_end_stay_apart() {
        assert_eq!(clip_name("web__read", 16), "web__read");
        let a = clip_name("toolgate.upstream.web.sampling", 16);
        let b = clip_name("toolgate.upstream.web.elicitation", 16);
        assert_eq!(a, "toolgate…ampling");
        assert_eq!(b, "toolgate…itation");
        assert_eq!(a.chars().count(), 16);
        assert_eq!(clip_name("éééééééé", 5), "éé…éé");
        // escaped first: no hidden character survives
        assert!(!clip_name("a\u{202e}bcdefghijklmnopqrstuvwxyz", 10).contains('\u{202e}'));
    }

    #[test]
    fn clip_counts_characters_and_escapes_what_a_model_could_hide() {
        assert_eq!(clip("abc", 5), "abc");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("éééééé", 3), "éé…");
        assert_eq!(clip("a\u{1b}[2Jb", 20), "a\\u{1b}[2Jb");
        assert_eq!(clip("a\u{202e}b\u{2028}c", 40), "a\\u{202e}b\\u{2028}c");
        // cut after escaping: no hidden character survives a cut
        assert_eq!(clip("\u{202e}abcdef", 6), "\\u{20…");
    }

    #[test]
    fn every_stored_time_can_be_shown() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(LAST_RFC3339_US), "9999-12-31T23:59:59Z");
        for us in [LAST_RFC3339_US + 1, i64::MAX as u64, u64::MAX] {
            assert_eq!(format_time(us), format!("after-9999 ({us}µs)"));
        }
    }

    #[test]
    fn since_takes_rfc3339_with_and_without_offsets_and_spans() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let base = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z
        assert_eq!(parse_since("2026-01-01T00:00:00Z", now).unwrap(), base);
        assert_eq!(parse_since("2026-01-01T00:00:00", now).unwrap(), base);
        assert_eq!(parse_since("2026-01-01T02:00:00+02:00", now).unwrap(), base);
        assert_eq!(parse_since("2025-12-31T19:30:00-04:30", now).unwrap(), base);
        assert_eq!(
            parse_since("2026-01-01T00:00:00.5Z", now).unwrap(),
            base + 500_000
        );
        assert_eq!(
            parse_since("1h", now).unwrap(),
            (1_800_000_000 - 3600) * 1_000_000
        );
        assert_eq!(
            parse_since("30m", now).unwrap(),
            (1_800_000_000 - 1800) * 1_000_000
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "1h ago",
            "+02:00",
            "é",
        ] {
            let e = since_arg(bad).unwrap_err();
            assert!(e.contains("such as 1h or 30m"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_us(85), "85µs");
        assert_eq!(format_us(1_250), "1.25ms");
        assert_eq!(format_us(3_400_000), "3.40s");
        assert_eq!(format_time(1_767_225_600_000_000), "2026-01-01T00:00:00Z");
    }
}
