//! Reading `toolgate.toml` into [`ConfigFile`] with every problem found in one pass.
//!
//! A whole-document deserialization stops at its first error, so a file with three mistakes
//! would take three runs of `toolgate check` to fix. Instead, after the document parses as
//! TOML (a syntax error is the one problem that stops everything: nothing after it can be
//! read), each top-level table, each profile and role, and each rule is deserialized on its
//! own from its spanned value, so every piece reports its own error at its own place. The
//! pieces that fail are replaced by defaults in the [`ConfigFile`] this returns (a rule by a
//! neutral one, so the later rules keep their indices), and their key paths are returned
//! ([`Parsed::failed`]), so the compiler's checks of what did parse can run too without
//! reporting those pieces again.

use crate::model::{ConfigFile, DecisionConfig, RuleConfig};
use crate::problem::{key_path, Locator, Problem, Seg};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

/// What reading the document gave.
pub(crate) struct Parsed {
    /// The configuration, with the pieces that failed left out.
    pub(crate) file: ConfigFile,
    /// Key paths (`rules[2]`, `budgets`) whose value failed to deserialize: the compiler's
    /// problems at or under them are about defaults put in their place.
    pub(crate) failed: Vec<String>,
}

/// The top-level tables, for a message about an unknown one.
const TABLES: [&str; 16] = [
    "profiles",
    "roles",
    "rules",
    "risk",
    "budgets",
    "limits",
    "store",
    "shell",
    "files",
    "server",
    "approvals",
    "ledger",
    "mail",
    "http",
    "gateway",
    "upstreams",
];

/// Deserializes `root` (the parsed document) piece by piece; problems go to `out`, except at
/// the keys in `skip` (already reported, such as a secret's key).
pub(crate) fn config_file(
    loc: &Locator<'_>,
    root: &DeTable<'_>,
    skip: &[String],
    out: &mut Vec<Problem>,
) -> Parsed {
    let mut p = Pieces {
        loc,
        skip,
        out,
        failed: Vec::new(),
    };
    let mut file = ConfigFile::default();
    for (key, value) in root.iter() {
        let name = key.get_ref().as_ref();
        let path = [Seg::Key(name.to_string())];
        match name {
            "profiles" => file.profiles = p.map(&path, value),
            "roles" => file.roles = p.map(&path, value),
            "rules" => file.rules = p.rules(value),
            "risk" => file.risk = p.one(&path, value).unwrap_or_default(),
            "budgets" => file.budgets = p.one(&path, value).unwrap_or_default(),
            "limits" => file.limits = p.one(&path, value).unwrap_or_default(),
            "store" => file.store = p.one(&path, value).unwrap_or_default(),
            "shell" => file.shell = p.one(&path, value).unwrap_or_default(),
            "files" => file.files = p.one(&path, value).unwrap_or_default(),
            "server" => file.server = p.one(&path, value).unwrap_or_default(),
            "approvals" => file.approvals = p.one(&path, value).unwrap_or_default(),
            "ledger" => file.ledger = p.one(&path, value).unwrap_or_default(),
            "mail" => file.mail = p.one(&path, value),
            "http" => file.http = p.one(&path, value).unwrap_or_default(),
            "gateway" => file.gateway = p.one(&path, value).unwrap_or_default(),
            "upstreams" => file.upstreams = p.upstreams(value),
            other => p.problem(
                &path,
                key.span(),
                format!(
                    "unknown field `{other}`, expected one of {}",
                    TABLES.map(|t| format!("`{t}`")).join(", ")
                ),
            ),
        }
    }
    Parsed {
        file,
        failed: p.failed,
    }
}

struct Pieces<'a, 'l> {
    loc: &'a Locator<'l>,
    skip: &'a [String],
    out: &'a mut Vec<Problem>,
    failed: Vec<String>,
}

impl Pieces<'_, '_> {
    /// Reports `message` at `path` (unless already reported) and marks the piece at `path`
    /// as failed.
    fn problem(&mut self, path: &[Seg], span: std::ops::Range<usize>, message: String) {
        self.failed.push(key_path(path));
        self.report(path, span, message);
    }

    fn report(&mut self, path: &[Seg], span: std::ops::Range<usize>, message: String) {
        let key = key_path(path);
        // a key already reported (a secret) is not reported again as unknown
        if self
            .skip
            .iter()
            .any(|s| s == &key || s.starts_with(&format!("{key}.")))
        {
            return;
        }
        self.out.push(self.loc.at_span(span, key, message));
    }

    /// `value` as a `T`, or `None` after reporting why not, at the deepest key holding the
    /// error (`budgets.max_calls` for a bad value of `max_calls`).
    fn one<T: DeserializeOwned>(
        &mut self,
        path: &[Seg],
        value: &Spanned<DeValue<'_>>,
    ) -> Option<T> {
        self.one_said(path, value, str::to_string)
    }

    /// [`Self::one`], with the error's message said by `said`.
    fn one_said<T: DeserializeOwned>(
        &mut self,
        path: &[Seg],
        value: &Spanned<DeValue<'_>>,
        said: fn(&str) -> String,
    ) -> Option<T> {
        match T::deserialize(ValueDeserializer::from(value.clone())) {
            Ok(t) => Some(t),
            Err(e) => {
                let span = e.span().unwrap_or_else(|| value.span());
                self.failed.push(key_path(path));
                let at = self.loc.deepest(path, span.start);
                self.report(&at, span, said(e.message().trim()));
                None
            }
        }
    }

    /// A table of named pieces (`profiles`, `roles`), each on its own; one that fails is
    /// kept as its default, so what names it does not report it missing too.
    fn map<T: DeserializeOwned + Default>(
        &mut self,
        path: &[Seg],
        value: &Spanned<DeValue<'_>>,
    ) -> BTreeMap<String, T> {
        let DeValue::Table(t) = value.get_ref() else {
            self.problem(
                path,
                value.span(),
                format!("{} must be a table of named entries", key_path(path)),
            );
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (k, v) in t.iter() {
            let mut at = path.to_vec();
            at.push(Seg::Key(k.get_ref().to_string()));
            let x = self.one(&at, v).unwrap_or_default();
            out.insert(k.get_ref().to_string(), x);
        }
        out
    }

    /// The upstreams, each on its own. The load fails when one does; the entries after a
    /// failed one are left out too, so the compiler's problems keep the file's indices.
    fn upstreams(&mut self, value: &Spanned<DeValue<'_>>) -> Vec<crate::upstreams::UpstreamConfig> {
        let path = [Seg::Key("upstreams".into())];
        let DeValue::Array(items) = value.get_ref() else {
            self.problem(
                &path,
                value.span(),
                "upstreams must be an array of tables: write each as [[upstreams]]".into(),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut failed = false;
        for (i, item) in items.iter().enumerate() {
            let at = [Seg::Key("upstreams".into()), Seg::Index(i)];
            // types in words: `must be a whole number (0 or more), not the text "slow"`
            match self.one_said(&at, item, crate::words::in_words) {
                Some(u) if !failed => out.push(u),
                Some(_) => {}
                None => failed = true,
            }
        }
        out
    }

    /// The rules, each on its own; one that fails is replaced by a rule that can never
    /// match, so the later ones keep their indices.
    fn rules(&mut self, value: &Spanned<DeValue<'_>>) -> Vec<RuleConfig> {
        let path = [Seg::Key("rules".into())];
        let DeValue::Array(items) = value.get_ref() else {
            self.problem(
                &path,
                value.span(),
                "rules must be an array of tables: write each as [[rules]]".into(),
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = [Seg::Key("rules".into()), Seg::Index(i)];
                self.one(&at, item).unwrap_or_else(|| RuleConfig {
                    name: None,
                    decision: DecisionConfig::Allow,
                    tool: None,
                    resource: None,
                    access: None,
                    roles: Vec::new(),
                    when: None,
                    unless: None,
                    reason: None,
                })
            })
            .collect()
    }
}
