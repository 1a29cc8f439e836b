//! Bounds on a Cedar condition's shape, checked on its text before Cedar parses it: Cedar's
//! parser and evaluator recurse once per level of the expression tree, so a condition nested
//! deep enough (600 brackets, 5,000 nested `if`s, a chain of 10,000 `&&`) overflows the
//! thread's stack and aborts the process, in `toolgate check` and in `serve` alike.
//!
//! The tree's depth is bounded from the text: by the nesting of brackets (`(`, `[`, `{`),
//! at most [`MAX_NESTING`], and by the number of operators ([`MAX_OPERATORS`]: every binary
//! operator, `if`, member access `.`, `has`, `like`, `is`, `in`), since a chain of `n`
//! operators is a tree `n` deep. String literals and `//` comments are skipped. The limits
//! leave a debug build's evaluation at most half of a 2 MiB thread stack (a tokio worker's):
//! measured, brackets overflowed it at 48 levels and operator chains at 192.

/// Most levels of brackets (`(`, `[`, `{`) a condition may nest.
pub const MAX_NESTING: usize = 8;

/// Most operators a condition may hold (see the module docs).
pub const MAX_OPERATORS: usize = 64;

/// Most bytes of a condition's text.
pub const MAX_CONDITION_BYTES: usize = 8 * 1024;

/// Checks `text` (a `when` or `unless` condition) against the limits.
///
/// # Errors
/// A message saying which limit the condition passes and what to do instead.
pub fn check(text: &str) -> Result<(), String> {
    if text.len() > MAX_CONDITION_BYTES {
        return Err(format!(
            "the condition is {} bytes, more than {MAX_CONDITION_BYTES}: split it across rules",
            text.len()
        ));
    }
    let b = text.as_bytes();
    let (mut depth, mut deepest, mut operators) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            b'"' => {
                // a string literal, with `\` escapes; an unterminated one is Cedar's to report
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if next == Some(b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'&' | b'|' if next == Some(c) => {
                operators += 1;
                i += 1;
            }
            b'=' | b'!' | b'<' | b'>' if next == Some(b'=') => {
                operators += 1;
                i += 1;
            }
            b'<' | b'>' | b'+' | b'-' | b'*' | b'.' | b'!' => operators += 1,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if matches!(&b[start..i], b"if" | b"has" | b"like" | b"is" | b"in") {
                    operators += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if deepest > MAX_NESTING {
        return Err(format!(
            "the condition nests brackets {deepest} levels deep, more than {MAX_NESTING}: \
             write it flatter, or split it across rules"
        ));
    }
    if operators > MAX_OPERATORS {
        return Err(format!(
            "the condition has {operators} operators (`&&`, `||`, comparisons, `.`, `if`, \
             `has`, ...), more than {MAX_OPERATORS}: split it across rules, or test a set \
             with `containsAny`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_conditions_pass() {
        for ok in [
            "context.attributes has owner_verified && context.attributes.owner_verified",
            r#"context.role == "admin" || (context.paths.containsAny(["a", "b"]) && !context.attributes.locked)"#,
            r#"if context has role then context.role like "ops*" else false"#,
            // brackets and operators inside strings and comments do not count
            &format!(
                "context.tool == \"{}\" // {}\n&& true",
                "((((((((((".repeat(20),
                "&&".repeat(100)
            ),
            &format!("[{}]", vec!["\"x\""; 500].join(", ")),
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn deep_or_long_conditions_are_refused_before_cedar_sees_them() {
        for (bad, says) in [
            (
                format!("{}true{}", "(".repeat(600), ")".repeat(600)),
                "600 levels deep",
            ),
            (
                format!("{}1{}", "[".repeat(9), "]".repeat(9)),
                "9 levels deep",
            ),
            (
                vec!["true"; 10_000]
                    .join(" && ")
                    .chars()
                    .take(8000)
                    .collect(),
                "operators",
            ),
            (vec!["true"; 66].join(" || "), "65 operators"),
            ("if true then ".repeat(65) + "true", "65 operators"),
            (format!("context{} == 1", ".a".repeat(70)), "operators"),
            ("x".repeat(MAX_CONDITION_BYTES + 1), "bytes"),
        ] {
            let e = check(&bad).unwrap_err();
            assert!(e.contains(says), "{}: {e}", &bad[..bad.len().min(40)]);
        }
    }
}
