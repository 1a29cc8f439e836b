//! The names toolgate lists upstream tools by: `<upstream><separator><tool>`, within MCP's
//! tool-name rule (`A-Z a-z 0-9 _ - .`) and a 64-character budget (OpenAI's function names,
//! and clients that copy its cap).
//!
//! A character of the upstream's name outside the rule becomes `_`; such a name, and one past
//! the budget (cut to it), ends in `-` and 6 hex digits of the SHA-256 of the upstream's own
//! name, so two names that clean or cut alike stay apart. The mapping back is kept by the tool, never parsed from the
//! listed name.

use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// The longest listed name.
pub const MAX_NAME: usize = toolgate_config::upstreams::MAX_LISTED_NAME;

/// The listed name of `upstream`'s tool `tool`.
pub fn listed_name(upstream: &str, separator: &str, tool: &str) -> String {
    let clean: Cow<'_, str> = if tool
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        Cow::Borrowed(tool)
    } else {
        Cow::Owned(
            tool.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect(),
        )
    };
    let mut name = format!("{upstream}{separator}{clean}");
    let changed = matches!(clean, Cow::Owned(_));
    if changed || tool.is_empty() || name.len() > MAX_NAME {
        let digest = Sha256::digest(tool.as_bytes());
        let suffix = format!("-{:02x}{:02x}{:02x}", digest[0], digest[1], digest[2]);
        name.truncate(MAX_NAME - suffix.len());
        name.push_str(&suffix);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::spec::validate_name;

    #[test]
    fn names_follow_the_rule_and_the_budget() {
        assert_eq!(listed_name("fs", "__", "read_file"), "fs__read_file");
        assert!(listed_name("fs", ".", "a/b c").starts_with("fs.a_b_c-"));
        assert_ne!(listed_name("fs", ".", "a/b"), listed_name("fs", ".", "a b"));
        let long = "x".repeat(100);
        let a = listed_name("fs", "__", &long);
        let b = listed_name("fs", "__", &format!("{long}y"));
        assert_eq!(a.len(), MAX_NAME);
        assert_ne!(a, b);
        for n in [&a, &b, &listed_name("fs", "__", "é")] {
            validate_name(n).unwrap();
        }
        assert!(listed_name("fs", "__", "").starts_with("fs__-"));
    }
}
