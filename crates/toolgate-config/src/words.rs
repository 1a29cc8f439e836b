//! serde's type errors (`invalid type: string "slow", expected u64`) said in the words of
//! the TOML file (`must be a whole number (0 or more), not the text "slow"`), for a person
//! editing `toolgate.toml`, who knows text, numbers, lists and tables, not Rust's types.

/// `message` in words when it is one of serde's `invalid type` or `invalid value` errors;
/// any other message as it is.
pub(crate) fn in_words(message: &str) -> String {
    let Some((got, expected)) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.rsplit_once(", expected "))
    else {
        return message.to_string();
    };
    match (unexpected(got), expected_words(expected)) {
        (Some(got), Some(want)) => format!("must be {want}, not {got}"),
        _ => message.to_string(),
    }
}

/// What was written, from serde's `Unexpected` (`string "x"`, ``integer `3` ``, `sequence`).
fn unexpected(got: &str) -> Option<String> {
    let quoted = |s: &str| s.trim_matches('`').to_string();
    Some(if let Some(s) = got.strip_prefix("string ") {
        format!("the text {s}")
    } else if let Some(n) = got
        .strip_prefix("integer ")
        .or_else(|| got.strip_prefix("floating point "))
    {
        format!("the number {}", quoted(n))
    } else if let Some(b) = got.strip_prefix("boolean ") {
        quoted(b)
    } else {
        match got {
            "sequence" => "a list".into(),
            "map" => "a table".into(),
            "unit value" | "option" => "nothing".into(),
            _ if got.starts_with("offset datetime")
                || got.starts_with("local date")
                || got.starts_with("local time") =>
            {
                "a date or time".into()
            }
            _ => return None,
        }
    })
}

/// What serde expected, in words.
fn expected_words(expected: &str) -> Option<&'static str> {
    Some(match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "string" | "a character" => "text in quotes",
        "a boolean" => "true or false",
        "a sequence" => "a list ([...])",
        _ if expected.starts_with("struct ") || expected == "a map" => "a table",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::in_words;
    use pretty_assertions::assert_eq;

    #[test]
    fn type_errors_are_said_in_the_files_words() {
        for (serde, words) in [
            (
                r#"invalid type: string "slow", expected u64"#,
                r#"must be a whole number (0 or more), not the text "slow""#,
            ),
            (
                "invalid type: sequence, expected a string",
                "must be text in quotes, not a list",
            ),
            (
                "invalid type: integer `3600`, expected a string",
                "must be text in quotes, not the number 3600",
            ),
            (
                r#"invalid type: string "yes", expected a boolean"#,
                r#"must be true or false, not the text "yes""#,
            ),
            (
                r#"invalid type: string "sampling", expected a sequence"#,
                r#"must be a list ([...]), not the text "sampling""#,
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "must be a whole number (0 or more), not the number -1",
            ),
            (
                "invalid type: boolean `true`, expected struct NotificationRate",
                "must be a table, not true",
            ),
            (
                "invalid type: floating point `1.5`, expected u64",
                "must be a whole number (0 or more), not the number 1.5",
            ),
        ] {
            assert_eq!(in_words(serde), words);
        }
        // anything else as it is
        for other in [
            "missing field `name`",
            "unknown variant `x`, expected `sampling` or `elicitation`",
            "invalid type: newtype struct, expected u64",
        ] {
            assert_eq!(in_words(other), other);
        }
    }
}
