//! Words of tool definitions and requests: identifiers split, lower-cased, stop words
//! dropped, stemmed.
//!
//! 1. the text is cut into runs of letters and digits (any script); everything else
//!    separates (`weather.get`, `get_weather`, `get-weather` are two words each);
//! 2. each run is split where an identifier changes case or kind: `getWeather` and
//!    `GetWeather` into `get` `weather`, `HTTPServer` into `http` `server`, `utf8` into
//!    `utf` `8`;
//! 3. words are lower-cased, English stop words (`the`, `of`, `with`, ...) dropped, and the
//!    rest stemmed with Snowball's English stemmer (Porter 2, the `rust-stemmers` crate):
//!    `calculates`, `calculating` and `calculated` all become `calcul`.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

/// English stop words: function words that say nothing about what a tool does.
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at",
    "be", "before", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does",
    "don", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "he",
    "her", "here", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "may", "me",
    "might", "more", "most", "must", "my", "no", "nor", "not", "of", "off", "on", "once", "only",
    "or", "other", "our", "out", "over", "own", "s", "same", "shall", "she", "should", "so",
    "some", "such", "t", "than", "that", "the", "their", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would",
    "you", "your", "yours", "am", "been", "being", "having", "itself", "let", "ours", "please",
    "him", "them",
];

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Calls `each` with every term of `text`, in order.
pub fn terms(text: &str, mut each: impl FnMut(String)) {
    let stemmer = stemmer();
    words(text, |word| {
        let lower = word.to_lowercase();
        if !is_stop_word(&lower) {
            each(stemmer.stem(&lower).into_owned());
        }
    });
}

/// The terms of `text`, in order.
pub fn term_list(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    terms(text, |t| out.push(t));
    out
}

/// Calls `each` with every word of `text`: runs of letters and digits, split at identifier
/// boundaries.
fn words<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if !run.is_empty() {
            split_identifier(run, &mut each);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Upper,
    Lower,
    Digit,
}

fn kind(c: char) -> Kind {
    if c.is_numeric() {
        Kind::Digit
    } else if c.is_uppercase() {
        Kind::Upper
    } else {
        Kind::Lower
    }
}

/// Splits one run of letters and digits at case and kind changes.
fn split_identifier<'t>(run: &'t str, each: &mut impl FnMut(&'t str)) {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (prev, cur) = (kind(chars[i - 1].1), kind(chars[i].1));
        let next = chars.get(i + 1).map(|(_, c)| kind(*c));
        let boundary = match (prev, cur) {
            (Kind::Lower, Kind::Upper) => true,
            (Kind::Digit, k) | (k, Kind::Digit) if k != Kind::Digit => true,
            // `HTTPServer`: the last capital starts the next word
            (Kind::Upper, Kind::Upper) => next == Some(Kind::Lower),
            _ => false,
        };
        if boundary {
            each(&run[chars[start].0..chars[i].0]);
            start = i;
        }
    }
    each(&run[chars[start].0..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        words(text, |w| out.push(w));
        out
    }

    #[test]
    fn identifiers_split_every_way() {
        for text in [
            "get_weather",
            "getWeather",
            "GetWeather",
            "weather.get",
            "get-weather",
        ] {
            let mut w = split(text);
            w.sort();
            assert_eq!(w.len(), 2, "{text}");
        }
        assert_eq!(split("HTTPServer utf8"), ["HTTP", "Server", "utf", "8"]);
        assert_eq!(
            split("parseJSONResponse2x"),
            ["parse", "JSON", "Response", "2", "x"]
        );
        assert_eq!(split("ÉtéCafé"), ["Été", "Café"]);
        assert!(split(" ... ").is_empty());
    }

    #[test]
    fn terms_are_lower_case_stems_without_stop_words() {
        assert_eq!(
            term_list("Calculates the area of a Triangle"),
            ["calcul", "area", "triangl"]
        );
        assert_eq!(term_list("calculating calculated"), ["calcul", "calcul"]);
        assert_eq!(
            term_list("getWeatherForecast"),
            ["get", "weather", "forecast"]
        );
    }
}
