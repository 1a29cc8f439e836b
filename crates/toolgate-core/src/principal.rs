//! [`Principal`]: who a session acts for, when a front end has verified it.
//!
//! Over HTTP with an OAuth authorization server (`[server.auth]`), every request carries an
//! access token whose issuer and subject (`iss`, `sub`) the server verified; the session the
//! request's calls run in is that principal's. The policy's conditions read it as Cedar's
//! `principal`, grants an approval leaves behind are bound to it, rate limits and quotas count
//! by it, and the audit record names it. A session without one (the CLI, stdio, the static
//! token) acts for whoever runs toolgate.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A verified caller: the subject of an access token and the authorization server that
/// issued it. Two principals are the same when both are equal (a subject is only unique
/// within its issuer).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Principal {
    /// The issuer (`iss`, an `https` URL), as the token names it.
    pub issuer: Arc<str>,
    /// The subject (`sub`), unique within the issuer.
    pub subject: Arc<str>,
}

impl Principal {
    /// The principal `subject` of `issuer`.
    pub fn new(issuer: impl Into<Arc<str>>, subject: impl Into<Arc<str>>) -> Self {
        Principal {
            issuer: issuer.into(),
            subject: subject.into(),
        }
    }

    /// Whether `other` (a stored binding, `None` for none) lets this principal, or a session
    /// without one (`me` = `None`), use what it binds: an unbound thing is everyone's, a
    /// bound one only its principal's.
    pub fn may_use(me: Option<&Principal>, bound: Option<&Principal>) -> bool {
        match bound {
            None => true,
            Some(b) => me == Some(b),
        }
    }
}

impl fmt::Display for Principal {
    /// `subject` then the issuer in parentheses: `alice (https://as.example.com)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.subject, self.issuer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_thing_is_its_principals_alone() {
        let alice = Principal::new("https://as", "alice");
        let bob = Principal::new("https://as", "bob");
        let other_alice = Principal::new("https://other", "alice");
        assert!(Principal::may_use(Some(&alice), None));
        assert!(Principal::may_use(None, None));
        assert!(Principal::may_use(Some(&alice), Some(&alice)));
        assert!(!Principal::may_use(Some(&bob), Some(&alice)));
        assert!(!Principal::may_use(Some(&other_alice), Some(&alice)));
        assert!(!Principal::may_use(None, Some(&alice)));
        assert_eq!(alice.to_string(), "alice (https://as)");
    }
}
