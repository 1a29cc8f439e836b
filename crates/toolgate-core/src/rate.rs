//! Rate limits and daily quotas, checked by the budget stage after the call was authorized
//! (a denied call spends nothing) and before the session's budgets are charged.
//!
//! - [`RateLimits`]: GCRA limiters (the `governor` crate), one per rule, each keyed by what
//!   the rule counts per ([`RatePer`]): the principal ([`crate::Principal`]; sessions without
//!   one count as one local principal), the tool, or the two together. A call over a limit gets
//!   the recoverable `rate_limited` error with `retry_after_ms`, the wait until one more call
//!   would pass; the call can be sent again then.
//! - [`QuotaStore`] with [`Quota::calls_per_day`]: calls per principal per UTC day, counted
//!   where a restart does not reset them (`toolgate-store` keeps them in SQLite). A call over
//!   the quota gets `rate_limited` (reason `daily_quota`) with the wait until the next UTC day.

use crate::error::{ErrorKind, ToolError};
use crate::pattern::ToolPattern;
use crate::principal::Principal;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota as Gcra};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// What a rate limit counts calls per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RatePer {
    /// Each principal's calls (of the tools the rule matches) share one bucket.
    Principal,
    /// Each tool's calls, whoever makes them, share one bucket.
    Tool,
    /// Each principal's calls of each tool share one bucket.
    PrincipalTool,
}

/// One rate limit: `burst` calls at once, refilled at `per_period` calls per `period`.
#[derive(Debug, Clone)]
pub struct RateLimit {
    /// The name shown in the error and the audit reason (`limits.rate[N]` or the rule's own).
    pub name: Arc<str>,
    /// What the calls are counted per.
    pub per: RatePer,
    /// The tools it counts (`None`: every tool).
    pub tool: Option<ToolPattern>,
    /// Calls per `period`, at least 1.
    pub calls: NonZeroU32,
    /// The period: a second or a minute.
    pub period: Duration,
    /// Calls that may come at once (default `calls`).
    pub burst: NonZeroU32,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Principal(Option<Principal>),
    Tool(Arc<str>),
    Both(Option<Principal>, Arc<str>),
}

/// Keys a limiter keeps before forgetting the ones whose bucket is full again.
const RETAIN_AT: usize = 4096;

struct Limiter {
    rule: RateLimit,
    limiter: DefaultKeyedRateLimiter<Key>,
}

/// The configured rate limits; empty by default (no cost on the call path).
#[derive(Default)]
pub struct RateLimits {
    limiters: Vec<Limiter>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.limiters.iter().map(|l| &l.rule))
            .finish()
    }
}

impl RateLimits {
    /// Limiters for `rules`, all starting full.
    pub fn new(rules: impl IntoIterator<Item = RateLimit>) -> Self {
        let limiters = rules
            .into_iter()
            .map(|rule| {
                // `calls` per `period`: one call replenished every period / calls
                let every = rule.period / rule.calls.get();
                let quota = Gcra::with_period(every.max(Duration::from_nanos(1)))
                    .expect("a non-zero period")
                    .allow_burst(rule.burst);
                Limiter {
                    limiter: DefaultKeyedRateLimiter::hashmap(quota),
                    rule,
                }
            })
            .collect();
        RateLimits { limiters }
    }

    /// Whether there is no limit.
    pub fn is_empty(&self) -> bool {
        self.limiters.is_empty()
    }

    /// Takes one call of `tool` by `principal` from every limit that counts it. A tool that
    /// comes under another's rules (`rules_as`, [`crate::ToolSpec::rules_as`]) is counted by
    /// a limit naming that other tool too, in that tool's bucket where the limit counts per
    /// tool (so `resources/read` is no way around a limit on `read_file`).
    ///
    /// # Errors
    /// `rate_limited` (recoverable) naming the first limit with no call left, with
    /// `retry_after_ms` in its details. Limits checked before it keep the call taken (a
    /// refused call still counts against the limits it passed, as a client hammering one limit
    /// should not be free to spend the others).
    pub fn check(
        &self,
        principal: Option<&Principal>,
        tool: &Arc<str>,
        rules_as: Option<&Arc<str>>,
    ) -> Result<(), ToolError> {
        for l in &self.limiters {
            let tool = match &l.rule.tool {
                None => tool,
                Some(t) if t.matches(tool) => tool,
                Some(t) => match rules_as {
                    Some(of) if t.matches(of) => of,
                    _ => continue,
                },
            };
            let key = match l.rule.per {
                RatePer::Principal => Key::Principal(principal.cloned()),
                RatePer::Tool => Key::Tool(tool.clone()),
                RatePer::PrincipalTool => Key::Both(principal.cloned(), tool.clone()),
            };
            if let Err(wait) = l.take(&key) {
                return Err(limited(&l.rule, tool, wait));
            }
        }
        Ok(())
    }

    /// Takes one request of `principal` from every limit, each counting per principal (the
    /// limits of `[[limits.rate]]` with `counts = "requests"`: HTTP requests refused before
    /// dispatch, whatever they ask).
    ///
    /// # Errors
    /// [`RequestLimited`] naming the first limit with no request left and the wait until one
    /// more would pass (HTTP `429` with `Retry-After`).
    pub fn check_request(&self, principal: Option<&Principal>) -> Result<(), RequestLimited> {
        if self.limiters.is_empty() {
            return Ok(());
        }
        let key = Key::Principal(principal.cloned());
        for l in &self.limiters {
            if let Err(retry_after) = l.take(&key) {
                return Err(RequestLimited {
                    limit: l.rule.name.clone(),
                    calls: l.rule.calls,
                    per_minute: l.rule.period >= Duration::from_secs(60),
                    retry_after,
                });
            }
        }
        Ok(())
    }
}

impl Limiter {
    /// One from `key`'s bucket, or the wait until the bucket holds one.
    fn take(&self, key: &Key) -> Result<(), Duration> {
        let outcome = self.limiter.check_key(key);
        if self.limiter.len() > RETAIN_AT {
            self.limiter.retain_recent();
        }
        outcome.map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// A request over a request rate limit ([`RateLimits::check_request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLimited {
    /// The limit's name (`limits.rate[N]` or its own).
    pub limit: Arc<str>,
    /// Requests it allows per period.
    pub calls: NonZeroU32,
    /// Whether the period is a minute (else a second).
    pub per_minute: bool,
    /// The wait until one more request would pass.
    pub retry_after: Duration,
}

impl RequestLimited {
    /// The wait in whole seconds, rounded up, at least 1: the `Retry-After` value (RFC 9110
    /// §10.2.3).
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0)
    }
}

impl std::fmt::Display for RequestLimited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rate limit {}: at most {} requests a {} per caller and none is left; send the \
             request again in {} s",
            self.limit,
            self.calls,
            if self.per_minute { "minute" } else { "second" },
            self.retry_after_secs().max(1)
        )
    }
}

fn limited(rule: &RateLimit, tool: &str, wait: Duration) -> ToolError {
    let ms = wait.as_millis().max(1) as u64;
    let per = match rule.per {
        RatePer::Principal => "per caller",
        RatePer::Tool => "for this tool",
        RatePer::PrincipalTool => "per caller for this tool",
    };
    let period = if rule.period >= Duration::from_secs(60) {
        "minute"
    } else {
        "second"
    };
    ToolError::new(
        ErrorKind::RateLimited,
        format!(
            "rate limit {}: at most {} calls a {period} {per} (bursts of {}) and none is left \
             for {tool}; send the call again in {ms} ms",
            rule.name, rule.calls, rule.burst
        ),
    )
    .with_reason("rate_limit")
    .with_details(serde_json::json!({
        "limit": &*rule.name,
        "retry_after_ms": ms,
    }))
}

/// A daily quota of calls per principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Calls per principal per UTC day.
    pub calls_per_day: u64,
}

/// What went wrong with the quota store.
#[derive(Debug, thiserror::Error)]
#[error("quota store: {0}")]
pub struct QuotaError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where the calls of each principal on each day are counted, so that a restart does not reset
/// them.
pub trait QuotaStore: Send + Sync {
    /// Counts one call of `principal` (`None`: the local caller) on `day` (days since the Unix
    /// epoch, UTC) unless `max` are counted already; the count after, or `None` when the
    /// quota was used up (nothing counted).
    ///
    /// # Errors
    /// [`QuotaError`] when the store fails.
    fn take(
        &self,
        principal: Option<&Principal>,
        day: u64,
        max: u64,
    ) -> Result<Option<u64>, QuotaError>;
}

/// Takes one call from `principal`'s quota for today.
///
/// # Errors
/// `rate_limited` (reason `daily_quota`) when today's calls are used up, with
/// `retry_after_ms` until the next UTC day; `internal` when the store fails (the call does not
/// run uncounted).
pub fn take_quota(
    store: &dyn QuotaStore,
    quota: Quota,
    principal: Option<&Principal>,
    now: std::time::SystemTime,
) -> Result<(), ToolError> {
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let day = secs / 86_400;
    match store.take(principal, day, quota.calls_per_day) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => {
            let ms = ((day + 1) * 86_400 - secs) * 1000;
            Err(ToolError::new(
                ErrorKind::RateLimited,
                format!(
                    "the daily quota of {} calls is used up for today (UTC); send the call \
                     again in {ms} ms, after midnight UTC",
                    quota.calls_per_day
                ),
            )
            .with_reason("daily_quota")
            .with_details(serde_json::json!({
                "limit": "limits.quota",
                "retry_after_ms": ms,
            })))
        }
        Err(e) => {
            tracing::error!(error = %e, "counting a call against the daily quota");
            Err(ToolError::internal(
                "the daily quota could not be counted; the call did not run",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(per: RatePer, calls: u32, burst: u32) -> RateLimit {
        RateLimit {
            name: "limits.rate[0]".into(),
            per,
            tool: None,
            calls: NonZeroU32::new(calls).unwrap(),
            period: Duration::from_secs(60),
            burst: NonZeroU32::new(burst).unwrap(),
        }
    }

    #[test]
    fn a_burst_over_the_limit_is_refused_with_a_wait_and_principals_do_not_share() {
        let limits = RateLimits::new([rule(RatePer::Principal, 60, 2)]);
        let alice = Principal::new("https://as", "alice");
        let bob = Principal::new("https://as", "bob");
        let tool: Arc<str> = "read_file".into();
        assert!(limits.check(Some(&alice), &tool, None).is_ok());
        assert!(limits.check(Some(&alice), &tool, None).is_ok());
        let e = limits.check(Some(&alice), &tool, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::RateLimited);
        assert!(e.kind.is_recoverable());
        let wait = e.details.as_ref().unwrap()["retry_after_ms"]
            .as_u64()
            .unwrap();
        assert!(wait > 0 && wait <= 1000, "{wait}");
        assert!(
            e.message.contains("send the call again in"),
            "{}",
            e.message
        );
        // bob's bucket is his own, and the local caller's too
        assert!(limits.check(Some(&bob), &tool, None).is_ok());
        assert!(limits.check(None, &tool, None).is_ok());
    }

    #[test]
    fn per_tool_limits_count_only_their_tools() {
        let mut r = rule(RatePer::Tool, 1, 1);
        r.tool = Some(ToolPattern::parse("write_*").unwrap());
        let limits = RateLimits::new([r]);
        let w: Arc<str> = "write_file".into();
        let read: Arc<str> = "read_file".into();
        assert!(limits.check(None, &w, None).is_ok());
        let alice = Principal::new("https://as", "alice");
        // per tool: anyone's call of the tool shares the bucket
        assert!(limits.check(Some(&alice), &w, None).is_err());
        for _ in 0..5 {
            assert!(limits.check(None, &read, None).is_ok());
        }
    }

    /// A tool under another's rules is counted by a limit naming that tool, in its bucket.
    #[test]
    fn a_tool_under_another_tools_rules_shares_its_limits() {
        let mut r = rule(RatePer::Tool, 2, 2);
        r.tool = Some(ToolPattern::parse("read_file").unwrap());
        let limits = RateLimits::new([r]);
        let (file, resource): (Arc<str>, Arc<str>) = ("read_file".into(), "read_resource".into());
        assert!(limits.check(None, &file, None).is_ok());
        assert!(limits.check(None, &resource, Some(&file)).is_ok());
        let e = limits.check(None, &resource, Some(&file)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::RateLimited);
        assert!(limits.check(None, &file, None).is_err());
        // without the link it is another tool
        assert!(limits.check(None, &resource, None).is_ok());
    }

    #[test]
    fn requests_are_counted_per_principal_with_a_retry_after_in_whole_seconds() {
        let limits = RateLimits::new([rule(RatePer::Principal, 2, 2)]);
        let alice = Principal::new("https://as", "alice");
        assert!(limits.check_request(Some(&alice)).is_ok());
        assert!(limits.check_request(Some(&alice)).is_ok());
        let e = limits.check_request(Some(&alice)).unwrap_err();
        assert_eq!(&*e.limit, "limits.rate[0]");
        // 2 a minute: the next in up to 30 s
        assert!((1..=30).contains(&e.retry_after_secs()), "{e:?}");
        assert!(e.to_string().contains("send the request again in"), "{e}");
        assert!(limits.check_request(None).is_ok());
        assert!(limits
            .check_request(Some(&Principal::new("https://as", "bob")))
            .is_ok());
        assert!(RateLimits::default().check_request(Some(&alice)).is_ok());
    }

    #[test]
    fn per_principal_and_tool() {
        let limits = RateLimits::new([rule(RatePer::PrincipalTool, 1, 1)]);
        let alice = Principal::new("https://as", "alice");
        let a: Arc<str> = "a".into();
        let b: Arc<str> = "b".into();
        assert!(limits.check(Some(&alice), &a, None).is_ok());
        assert!(limits.check(Some(&alice), &b, None).is_ok());
        assert!(limits.check(None, &a, None).is_ok());
        assert!(limits.check(Some(&alice), &a, None).is_err());
    }
}
