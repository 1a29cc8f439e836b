//! Tool names under a provider's rule, mangled reversibly where the rule is stricter than
//! MCP's (1 to 128 of `A-Za-z0-9_.-`).
//!
//! | provider | rule |
//! |---|---|
//! | MCP | `^[A-Za-z0-9_.-]{1,128}$`: every registered name as it is |
//! | OpenAI (Chat Completions, Responses) | `^[a-zA-Z0-9_-]{1,64}$` |
//! | Anthropic | `^[a-zA-Z0-9_-]{1,64}$` |
//! | Gemini | `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$` |
//!
//! A name that already follows the rule is kept. Every other name, in name order, has each
//! character the rule refuses replaced by `_` (and `_` put in front of a first character the
//! rule refuses); when that is longer than the rule allows, or is another tool's name, it is
//! cut and given `_` and 8 hex digits of a hash of the registry name (FNV-1a), so the
//! mapping depends only on the set of names: the same registry and profile always give the
//! same names, and a name given out earlier maps back later. [`NameMap::registry_name`] maps
//! a provider's name back; a name the map does not know comes back as it is (the resolve
//! stage then answers `unknown_tool`).

use super::Provider;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A provider's rule for tool names.
#[derive(Debug, Clone, Copy)]
struct Rule {
    max_len: usize,
    dots_and_colons: bool,
    letter_first: bool,
}

impl Rule {
    const fn of(provider: Provider) -> Option<Rule> {
        match provider {
            Provider::Mcp => None,
            Provider::OpenAiChat | Provider::OpenAiResponses | Provider::Anthropic => Some(Rule {
                max_len: 64,
                dots_and_colons: false,
                letter_first: false,
            }),
            Provider::Gemini => Some(Rule {
                max_len: 64,
                dots_and_colons: true,
                letter_first: true,
            }),
        }
    }

    fn allows_byte(&self, b: u8) -> bool {
        b.is_ascii_alphanumeric()
            || b == b'_'
            || b == b'-'
            || (self.dots_and_colons && (b == b'.' || b == b':'))
    }

    fn allows_first(&self, b: u8) -> bool {
        !self.letter_first || b.is_ascii_alphabetic() || b == b'_'
    }

    fn allows(&self, name: &str) -> bool {
        let bytes = name.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= self.max_len
            && self.allows_first(bytes[0])
            && bytes.iter().all(|b| self.allows_byte(*b))
    }

    /// `name` with every refused character replaced by `_`.
    fn sanitize(&self, name: &str) -> String {
        let mut out = String::with_capacity(name.len() + 1);
        if name.bytes().next().is_none_or(|b| !self.allows_first(b)) {
            out.push('_');
        }
        out.extend(
            name.bytes()
                .map(|b| if self.allows_byte(b) { b as char } else { '_' }),
        );
        out
    }
}

/// The names of a set of tools under one provider's rule, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    to_provider: HashMap<Arc<str>, String>,
    to_registry: HashMap<String, Arc<str>>,
}

impl NameMap {
    /// The names of `names` (registry names, any order, each once) for `provider`.
    pub fn new<I, S>(provider: Provider, names: I) -> NameMap
    where
        I: IntoIterator<Item = S>,
        S: Into<Arc<str>>,
    {
        let mut names: Vec<Arc<str>> = names.into_iter().map(Into::into).collect();
        names.sort();
        names.dedup();
        let Some(rule) = Rule::of(provider) else {
            return NameMap::identity(names);
        };
        let mut taken: HashSet<String> = names
            .iter()
            .filter(|n| rule.allows(n))
            .map(|n| n.to_string())
            .collect();
        let mut map = NameMap::default();
        for name in names {
            let given = if rule.allows(&name) {
                name.to_string()
            } else {
                let clean = rule.sanitize(&name);
                let given = if clean.len() <= rule.max_len && !taken.contains(&clean) {
                    clean
                } else {
                    hashed(&clean, &name, rule.max_len, &taken)
                };
                taken.insert(given.clone());
                given
            };
            map.to_registry.insert(given.clone(), name.clone());
            map.to_provider.insert(name, given);
        }
        map
    }

    fn identity(names: Vec<Arc<str>>) -> NameMap {
        let mut map = NameMap::default();
        for name in names {
            map.to_registry.insert(name.to_string(), name.clone());
            map.to_provider.insert(name.clone(), name.to_string());
        }
        map
    }

    /// The provider's name for the registry name `name` (`name` itself when unknown).
    pub fn provider_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.to_provider.get(name).map_or(name, String::as_str)
    }

    /// The registry name for the provider's name `name` (`name` itself when unknown).
    pub fn registry_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.to_registry.get(name).map_or(name, |n| &**n)
    }

    /// Every registry name whose provider name differs, with that name, sorted.
    pub fn renamed(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .to_provider
            .iter()
            .filter(|(from, to)| ***from != ***to)
            .map(|(from, to)| (&**from, to.as_str()))
            .collect();
        out.sort();
        out
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.to_provider.len()
    }

    /// Whether the map has no names.
    pub fn is_empty(&self) -> bool {
        self.to_provider.is_empty()
    }
}

/// `clean` cut to leave room for `_` and 8 hex digits of the hash of `name`, not in `taken`.
fn hashed(clean: &str, name: &str, max_len: usize, taken: &HashSet<String>) -> String {
    let mut hash = fnv1a(name.as_bytes());
    loop {
        let suffix = format!("_{:08x}", hash as u32);
        let mut cut = max_len.saturating_sub(suffix.len()).min(clean.len());
        // `clean` is ASCII: any cut is a character boundary
        while cut > 0 && clean.as_bytes()[cut - 1] == b'_' {
            cut -= 1;
        }
        let candidate = format!("{}{suffix}", &clean[..cut]);
        if !taken.contains(&candidate) {
            return candidate;
        }
        hash = fnv1a(&hash.to_le_bytes());
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms (the names must not change between
/// an export and the calls that answer it).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept_and_dots_replaced() {
        let map = NameMap::new(Provider::OpenAiChat, ["read_file", "weather.get"]);
        assert_eq!(map.provider_name("read_file"), "read_file");
        assert_eq!(map.provider_name("weather.get"), "weather_get");
        assert_eq!(map.registry_name("weather_get"), "weather.get");
        assert_eq!(map.registry_name("unknown"), "unknown");
        assert_eq!(map.renamed(), vec![("weather.get", "weather_get")]);
    }

    #[test]
    fn collisions_keep_the_valid_name_and_hash_the_other() {
        let map = NameMap::new(Provider::Anthropic, ["flight.book", "flight_book"]);
        assert_eq!(map.provider_name("flight_book"), "flight_book");
        let other = map.provider_name("flight.book");
        assert!(
            other.starts_with("flight_book_") && other.len() == 20,
            "{other}"
        );
        assert_eq!(map.registry_name(other), "flight.book");
        // the same set always gives the same names
        let again = NameMap::new(Provider::Anthropic, ["flight_book", "flight.book"]);
        assert_eq!(again, map);
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_distinct() {
        let a = format!("{}.a", "x".repeat(100));
        let b = format!("{}.b", "x".repeat(100));
        let map = NameMap::new(Provider::OpenAiResponses, [a.as_str(), b.as_str()]);
        let (pa, pb) = (map.provider_name(&a), map.provider_name(&b));
        assert_ne!(pa, pb);
        for p in [pa, pb] {
            assert!(p.len() <= 64 && Rule::of(Provider::OpenAiChat).unwrap().allows(p));
        }
        assert_eq!(map.registry_name(pa), a);
        assert_eq!(map.registry_name(pb), b);
    }

    #[test]
    fn gemini_keeps_dots_and_needs_a_letter_first() {
        let map = NameMap::new(
            Provider::Gemini,
            ["weather.get", "3d-render", &"a".repeat(65)],
        );
        assert_eq!(map.provider_name("weather.get"), "weather.get");
        assert_eq!(map.provider_name("3d-render"), "_3d-render");
        assert_eq!(map.registry_name("_3d-render"), "3d-render");
        let long = map.provider_name(&"a".repeat(65)).to_string();
        assert!(long.len() <= 64);
    }

    #[test]
    fn mcp_is_the_identity() {
        let map = NameMap::new(Provider::Mcp, ["weather.get"]);
        assert_eq!(map.provider_name("weather.get"), "weather.get");
        assert!(map.renamed().is_empty());
    }
}
