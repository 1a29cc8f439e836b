//! `[server.auth]`, `[[limits.rate]]` and `[limits.quota]`: checked at load (every problem
//! located), then what the server and the pipeline are built from: the caller's session setup
//! from its token's claims ([`Config::session_for`]), the rate limits and the daily quota.

use crate::cedar::Condition;
use crate::compile::{Compiler, Config};
use crate::model::{AuthConfig, RateConfig, RateCountsConfig, RatePerConfig};
use crate::problem::Seg;
use crate::session::{SessionError, SessionSetup};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;
use std::time::Duration;
use toolgate_core::pattern::ToolPattern;
use toolgate_core::rate::{Quota, RateLimit, RateLimits, RatePer};
use toolgate_core::Principal;

/// The JWT signature algorithms `[server.auth] algorithms` may name: asymmetric ones only (a
/// resource server holds no shared secret, and `none` is no signature).
pub const ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

/// The algorithms accepted when `algorithms` is not set.
pub const DEFAULT_ALGORITHMS: [&str; 4] = ["RS256", "ES256", "PS256", "EdDSA"];

/// The most clock skew `leeway_secs` may allow, in seconds.
pub const MAX_LEEWAY_SECS: u64 = 300;

/// The session attribute holding the token's issuer.
pub const ISSUER_ATTRIBUTE: &str = "iss";

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// Checks `text` is an absolute `https` URL, or `http` on a loopback host (a local
/// authorization server, a test); the problem otherwise.
pub fn check_url(text: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "{text:?} must be an https URL (http only on a loopback host)"
            ))
        }
    }
    if u.fragment().is_some() {
        return Err(format!("{text:?} must not have a fragment (#...)"));
    }
    Ok(u)
}

impl Compiler<'_> {
    /// `[server.auth]`: URLs, algorithms, leeway and roles; returns the compiled roles.
    pub(crate) fn auth(&mut self) -> Vec<(String, Condition)> {
        let Some(a) = &self.raw.server.auth else {
            return Vec::new();
        };
        let at = |k: &str| [key("server"), key("auth"), key(k)];
        if a.issuer.trim().is_empty() {
            self.problem(
                &at("issuer"),
                "issuer is required: the authorization server's issuer URL",
            );
        } else if let Err(e) = check_url(&a.issuer) {
            self.problem(&at("issuer"), e);
        }
        if let Some(r) = &a.resource {
            if let Err(e) = check_url(r) {
                self.problem(&at("resource"), e);
            }
        }
        for (name, list) in [
            ("required_scopes", &a.required_scopes),
            ("scopes_supported", &a.scopes_supported),
        ] {
            for (i, scope) in list.iter().enumerate() {
                // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
                let ok = !scope.is_empty()
                    && scope.bytes().all(|b| {
                        b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)
                    });
                if !ok {
                    self.problem(
                        &[key("server"), key("auth"), key(name), Seg::Index(i)],
                        format!(
                            "{scope:?} is not a scope: printable ASCII without spaces, \" or \\"
                        ),
                    );
                }
            }
        }
        for (name, v) in [
            ("jwks_uri", &a.jwks_uri),
            ("introspection_endpoint", &a.introspection_endpoint),
        ] {
            if let Some(v) = v {
                if let Err(e) = check_url(v) {
                    self.problem(&at(name), e);
                }
            }
        }
        if a.introspection_endpoint.is_some()
            && (a.client_id_env.is_none() || a.client_secret_env.is_none())
        {
            self.problem(
                &at("introspection_endpoint"),
                "introspection needs toolgate's client credentials: set client_id_env and \
                 client_secret_env to the environment variables that hold them",
            );
        }
        for (i, alg) in a.algorithms.iter().enumerate() {
            if !ALGORITHMS.contains(&alg.as_str()) {
                self.problem(
                    &[key("server"), key("auth"), key("algorithms"), Seg::Index(i)],
                    format!(
                        "{alg:?} is not accepted: write one of {} (none and HMAC never are)",
                        ALGORITHMS.join(", ")
                    ),
                );
            }
        }
        if a.leeway_secs.is_some_and(|l| l > MAX_LEEWAY_SECS) {
            self.problem(
                &at("leeway_secs"),
                format!("write at most {MAX_LEEWAY_SECS} seconds of clock skew"),
            );
        }
        for (i, c) in a.claims.iter().enumerate() {
            if c.is_empty() || c == crate::ROLE_ATTRIBUTE || c == ISSUER_ATTRIBUTE {
                self.problem(
                    &[key("server"), key("auth"), key("claims"), Seg::Index(i)],
                    format!("{c:?} cannot be copied: `role` and `iss` are set by toolgate"),
                );
            }
        }
        let mut roles = Vec::new();
        for (role, when) in &a.roles {
            let path = [key("server"), key("auth"), key("roles"), key(role)];
            if !self.raw.roles.contains_key(role) {
                self.problem(
                    &path,
                    format!("no role is named {role:?}: define it under [roles.{role}]"),
                );
                continue;
            }
            match Condition::compile(Some(when), None) {
                Ok(c) => roles.push((role.clone(), c)),
                Err(e) => self.problem(&path, e.to_string()),
            }
        }
        roles
    }

    /// `[[limits.rate]]` and `[limits.quota]`.
    pub(crate) fn rates(&mut self) {
        for (i, r) in self.raw.limits.rate.iter().enumerate() {
            let at = |k: &str| [key("limits"), key("rate"), Seg::Index(i), key(k)];
            match (r.per_second, r.per_minute) {
                (Some(_), Some(_)) | (None, None) => self.problem(
                    &[key("limits"), key("rate"), Seg::Index(i)],
                    "write one of per_second and per_minute",
                ),
                (Some(0), _) => self.problem(&at("per_second"), "write at least 1 call"),
                (_, Some(0)) => self.problem(&at("per_minute"), "write at least 1 call"),
                _ => {}
            }
            if r.burst == Some(0) {
                self.problem(&at("burst"), "write at least 1 call");
            }
            if let Some(t) = &r.tool {
                if let Err(e) = ToolPattern::parse(t) {
                    self.problem(&at("tool"), e.to_string());
                }
            }
            if r.counts == RateCountsConfig::Requests {
                if r.per != RatePerConfig::Principal {
                    self.problem(
                        &at("per"),
                        "requests are counted per caller: write per = \"principal\" (or \
                         counts = \"calls\" to count tool calls per tool)",
                    );
                }
                if r.tool.is_some() {
                    self.problem(
                        &at("tool"),
                        "a limit on requests counts every request, whatever tool it calls: \
                         remove tool (or write counts = \"calls\")",
                    );
                }
            }
        }
        if self
            .raw
            .limits
            .quota
            .as_ref()
            .is_some_and(|q| q.calls_per_day == 0)
        {
            self.problem(
                &[key("limits"), key("quota"), key("calls_per_day")],
                "write at least 1 call",
            );
        }
    }
}

impl Config {
    /// `[server.auth]`, when the HTTP server is an OAuth resource server.
    pub fn auth(&self) -> Option<&AuthConfig> {
        self.raw.server.auth.as_ref()
    }

    /// The setup of the session of a caller verified as `principal` whose token carried
    /// `claims` (only those `[server.auth] claims` names are kept): the claims and `iss` as
    /// attributes, and the first role (by name) of `[server.auth.roles]` whose condition
    /// holds, with its first profile and its attributes (which win over a claim of the same
    /// name); without one, `fallback_profile`.
    ///
    /// # Errors
    /// [`SessionError`] as [`Config::session`] (a role's profile the registry lacks).
    pub fn session_for(
        &self,
        principal: &Principal,
        claims: &serde_json::Map<String, Value>,
        fallback_profile: &str,
    ) -> Result<SessionSetup, SessionError> {
        let mut attributes: HashMap<String, Value> = HashMap::new();
        if let Some(a) = self.auth() {
            for c in &a.claims {
                if let Some(v) = claims.get(c) {
                    attributes.insert(c.clone(), v.clone());
                }
            }
        }
        attributes.insert(
            ISSUER_ATTRIBUTE.to_string(),
            Value::String(principal.issuer.to_string()),
        );
        let role = self
            .auth_roles
            .iter()
            .find(|(_, c)| c.holds_for(Some(principal), &attributes))
            .map(|(r, _)| r.as_str());
        match role {
            None => Ok(SessionSetup {
                profile: fallback_profile.to_string(),
                attributes: attributes.into_iter().collect::<BTreeMap<_, _>>(),
            }),
            Some(role) => {
                let mut setup = self.session(Some(role), None, Vec::new())?;
                for (k, v) in attributes {
                    setup.attributes.entry(k).or_insert(v);
                }
                Ok(setup)
            }
        }
    }

    /// The rate limits of `[[limits.rate]]` on tool calls (`counts = "calls"`; checked at
    /// load), for the pipeline's budget stage.
    pub fn rate_limits(&self) -> RateLimits {
        self.rate_limits_counting(RateCountsConfig::Calls)
    }

    /// The rate limits of `[[limits.rate]]` on HTTP requests (`counts = "requests"`, each
    /// per principal), for `toolgate serve --http` before dispatch.
    pub fn request_rate_limits(&self) -> RateLimits {
        self.rate_limits_counting(RateCountsConfig::Requests)
    }

    fn rate_limits_counting(&self, counts: RateCountsConfig) -> RateLimits {
        let rules = self
            .raw
            .limits
            .rate
            .iter()
            .enumerate()
            .filter(|(_, r): &(usize, &RateConfig)| r.counts == counts)
            .filter_map(|(i, r)| {
                let (calls, period) = match (r.per_second, r.per_minute) {
                    (Some(n), None) => (n, Duration::from_secs(1)),
                    (None, Some(n)) => (n, Duration::from_secs(60)),
                    _ => return None,
                };
                let calls = NonZeroU32::new(calls)?;
                Some(RateLimit {
                    name: r
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("limits.rate[{i}]"))
                        .into(),
                    per: match r.per {
                        RatePerConfig::Principal => RatePer::Principal,
                        RatePerConfig::Tool => RatePer::Tool,
                        RatePerConfig::PrincipalTool => RatePer::PrincipalTool,
                    },
                    tool: r.tool.as_deref().and_then(|t| ToolPattern::parse(t).ok()),
                    calls,
                    period,
                    burst: r.burst.and_then(NonZeroU32::new).unwrap_or(calls),
                })
            });
        RateLimits::new(rules.collect::<Vec<_>>())
    }

    /// The daily quota of `[limits.quota]`.
    pub fn quota(&self) -> Option<Quota> {
        self.raw.limits.quota.as_ref().map(|q| Quota {
            calls_per_day: q.calls_per_day,
        })
    }
}
