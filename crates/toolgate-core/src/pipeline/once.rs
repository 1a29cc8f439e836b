//! Stage 7 for a side-effecting call: the idempotency ledger around one run of the handler.
//!
//! In order (see [`crate::ledger`] for the rules every backend applies):
//! 1. the plan: a call of a tool that is neither `read_only` nor `idempotent` runs under its
//!    key: the caller's, or one derived from the session's caller, the tool and the canonical
//!    arguments, or the canonical effect when the tool states it ([`crate::Tool::effect`]:
//!    what a send sends, not the handles that name it) (unless the tool opts out, or the
//!    window is zero);
//! 2. claim the key, committed before anything runs: a replay, a conflict, `in_progress` or an
//!    unsettled entry end the call here (an unsettled one first asks the tool's reconcile
//!    hook, which may settle it either way);
//! 3. commit the call's audit intent (`record::intent`; a claim that held first, so
//!    a call the ledger answers writes none, and one whose intent cannot be committed releases
//!    its key unused), then run the handler once, under the tool's timeout and the call's
//!    cancellation;
//! 4. end the claim by what the handler's end says about the world: complete it with the
//!    output or the error, release it when nothing was done, leave it unsettled when nobody
//!    can know.
//!
//! A failure to end a claim is logged and leaves the entry in progress until its lease runs
//! out (then unsettled): the call's result still goes back, since its effect happened or may
//! have.

use super::execute::{attempt, cancelled, start_clock, timed_out, Attempt};
use super::{CallState, Inner};
use crate::context::ToolContext;
use crate::error::{ErrorKind, ToolError};
use crate::ledger::{
    arguments_hash, derive_key, ArgsHash, Claim, Claimed, Held, LedgerError, LedgerEvent,
    LedgerState, Reconciliation, Recorded, Settled, Settlement, ARGUMENTS_PREVIEW_BYTES,
};
use crate::registry::Entry;
use crate::result::ToolOutput;
use crate::session::Session;
use crate::spec::ToolSpec;
use crate::tool::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The key a side-effecting call runs under.
pub(crate) struct Plan {
    pub(crate) key: Arc<str>,
    pub(crate) derived: bool,
    pub(crate) hash: ArgsHash,
}

/// The ledger's plan for a call: `Some` for a tool that is neither read-only nor idempotent,
/// with the caller's key or (when the tool allows it and the window is not zero) a derived
/// one; `None` for every other call, which runs as before. The key is derived from, and
/// every key checked against, the hash of the call's canonical effect when the tool gives one
/// ([`crate::Tool::effect`]), else of its canonical arguments.
///
/// # Errors
/// The tool's effect hook's: the call cannot run (a handle unknown or stale).
pub(crate) fn plan(
    inner: &Inner,
    entry: &Entry,
    session: &Session,
    given: Option<&str>,
    arguments: &Value,
    args: &Args,
    ctx: &ToolContext,
) -> Result<Option<Plan>, ToolError> {
    let spec = entry.spec();
    if spec.effects.read_only || spec.effects.idempotent {
        return Ok(None);
    }
    let derive = spec.derive_idempotency_key && !inner.ledger_options.derived_key_window.is_zero();
    if given.is_none() && !derive {
        return Ok(None);
    }
    let hash = match entry.tool.effect(args, ctx)? {
        Some(effect) => arguments_hash(&effect),
        None => arguments_hash(arguments),
    };
    Ok(Some(match given {
        Some(key) => Plan {
            key: key.into(),
            derived: false,
            hash,
        },
        None => Plan {
            key: derive_key(session.caller(), &spec.name, &hash).into(),
            derived: true,
            hash,
        },
    }))
}

/// What the ledger already knows of the call's key, asked after decode and before the guard,
/// the policy and the budget: a key whose call ended is a replay (its recorded end, whatever
/// the world looks like now and without asking anyone again: nothing will act); a key in use,
/// a conflict or an unsettled key the tool's reconcile hook cannot settle end the call here.
/// `Ok(None)`: the call goes on (the key is free, or the hook found the earlier call not done).
///
/// # Errors
/// As [`execute`], but never the handler's: nothing runs here.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn lookup(
    inner: &Inner,
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
    session: &Session,
    plan: &Plan,
    st: &mut CallState,
) -> Result<Option<ToolOutput>, ToolError> {
    let spec = entry.spec();
    let call_id = ctx.call_id().clone();
    let mut claim = new_claim(spec, session, &call_id, plan, "");
    stamp(&mut claim, spec.timeout, &inner.ledger_options);
    let found = inner.ledger.lookup(&claim).map_err(unavailable)?;
    match found {
        None => Ok(None),
        Some(answer) => match settled(inner, entry, args, ctx, &claim, answer, st).await? {
            Next::Replay(output) => Ok(Some(output)),
            Next::Run => Ok(None),
        },
    }
}

/// Runs a side-effecting call once under its key (see the module docs).
///
/// # Errors
/// `internal` (`ledger_unavailable`) when the claim cannot be made (the call did not run);
/// `invalid_input` (`idempotency_conflict`); `in_progress`; `outcome_unknown` (`unsettled`)
/// for a key whose earlier call nobody has settled; a replayed error; and what the handler's
/// run ends in, as [`super::execute::execute`] reports it.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn execute(
    inner: &Inner,
    entry: &Entry,
    args: Args,
    ctx: ToolContext,
    session: &Session,
    plan: &Plan,
    st: &mut CallState,
    started: Instant,
) -> Result<ToolOutput, ToolError> {
    let spec = entry.spec();
    let options = &inner.ledger_options;
    let mut ctx = start_clock(entry, ctx);
    let preview = preview(&st.arguments);
    let call_id = ctx.call_id().clone();
    let mut claim = new_claim(spec, session, &call_id, plan, &preview);
    // a claim can find the key changed since the lookup (another call took it, ended it or
    // left it unsettled): a few rounds settle it
    for _ in 0..3 {
        stamp(&mut claim, spec.timeout, options);
        let answer = inner.ledger.claim(&claim).map_err(unavailable)?;
        if answer == Claimed::Held {
            return run(inner, entry, args, ctx, session, plan, &claim, st, started).await;
        }
        match settled(inner, entry, &args, &ctx, &claim, answer, st).await? {
            Next::Replay(output) => return Ok(output),
            Next::Run => {
                stamp(&mut claim, spec.timeout, options);
                if inner.ledger.take_over(&claim).map_err(unavailable)? {
                    ctx = start_clock(entry, ctx);
                    return run(inner, entry, args, ctx, session, plan, &claim, st, started).await;
                }
            }
        }
    }
    Err(ToolError::new(
        ErrorKind::InProgress,
        format!(
            "the key {:?} changed hands while this call tried to claim it; send the call \
             again with the same key",
            &*plan.key
        ),
    ))
}

/// A claim of `plan`'s key by this call, its times not yet stamped.
fn new_claim<'a>(
    spec: &'a ToolSpec,
    session: &'a Session,
    call_id: &'a crate::CallId,
    plan: &'a Plan,
    preview: &'a str,
) -> Claim<'a> {
    Claim {
        principal: session.principal_key(),
        key: &plan.key,
        derived: plan.derived,
        tool: &spec.name,
        args_hash: &plan.hash,
        session: session.id(),
        call_id: call_id.as_str(),
        arguments: preview,
        holder: rand::random(),
        now_us: 0,
        lease_until_us: 0,
        expire_before_us: 0,
        reuse_before_us: None,
    }
}

/// What a call does after the ledger's answer about its key.
enum Next {
    /// It ends with this recorded (or reconciled) output, a replay.
    Replay(ToolOutput),
    /// It runs: the key's earlier call was found not done.
    Run,
}

/// The call's way on from an answer other than [`Claimed::Held`]: a replay, a refusal (the
/// error), or, for an unsettled key, what the tool's reconcile hook finds (asked once per
/// call; a second unsettled answer after it found the call not done is taken over).
async fn settled(
    inner: &Inner,
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
    claim: &Claim<'_>,
    answer: Claimed,
    st: &mut CallState,
) -> Result<Next, ToolError> {
    let key = claim.key;
    let (since_us, holder_session, holder_call) = match answer {
        Claimed::Held => return Ok(Next::Run),
        Claimed::Done { result, .. } => {
            st.replayed = true;
            st.ledger = Some(LedgerEvent::Replayed);
            return replay(result, key).map(Next::Replay);
        }
        Claimed::Conflict { tool } => return Err(conflict(key, &tool, claim.tool)),
        Claimed::InProgress {
            until_us, call_id, ..
        } => return Err(in_progress(key, &call_id, until_us, claim.now_us)),
        Claimed::Unsettled {
            since_us,
            session,
            call_id,
        } => (since_us, session, call_id),
    };
    if st.ledger == Some(LedgerEvent::ReconciledNotDone) {
        // the hook already found it not done, at the lookup
        return Ok(Next::Run);
    }
    let give_up = || {
        unsettled(
            key,
            &holder_session,
            &holder_call,
            claim.now_us.saturating_sub(since_us),
        )
    };
    match reconcile(entry, key, args, ctx).await {
        Reconciliation::Done(output) => {
            let result = Recorded::output_json(&output);
            let settlement = Settlement::Done {
                result: &result,
                by: "reconcile",
            };
            match inner
                .ledger
                .settle(claim.principal, key, settlement, now())
                .map_err(unavailable)?
            {
                Settled::Settled(_) => {
                    st.replayed = true;
                    st.ledger = Some(LedgerEvent::ReconciledDone);
                    Ok(Next::Replay(output))
                }
                // settled or taken over by another call meanwhile
                _ => Err(give_up()),
            }
        }
        Reconciliation::NotDone => {
            st.ledger = Some(LedgerEvent::ReconciledNotDone);
            Ok(Next::Run)
        }
        Reconciliation::Unknown => Err(give_up()),
    }
}

/// Runs the handler once under a held claim and ends the claim by how it ended.
#[allow(clippy::too_many_arguments)]
async fn run(
    inner: &Inner,
    entry: &Entry,
    args: Args,
    ctx: ToolContext,
    session: &Session,
    plan: &Plan,
    claim: &Claim<'_>,
    st: &mut CallState,
    started: Instant,
) -> Result<ToolOutput, ToolError> {
    let spec = entry.spec();
    let held = Held {
        principal: claim.principal,
        key: claim.key,
        holder: claim.holder,
    };
    let ledger = &*inner.ledger;
    // the audit intent, now that this call holds the key: both are committed before the
    // handler runs; without the intent nothing runs and the key is free again
    if let Err(e) = super::record::intent(inner, session, ctx.call_id(), st, started).await {
        ended(&plan.key, "release", ledger.release(&held));
        return Err(e);
    }
    st.ledger.get_or_insert(LedgerEvent::Executed);
    match attempt(entry, args, ctx, &mut st.attempts).await {
        Attempt::Output(output) => {
            let result = Recorded::output_json(&output);
            ended(
                &plan.key,
                "complete",
                ledger.complete(&held, LedgerState::Succeeded, &result, now()),
            );
            Ok(output)
        }
        Attempt::Failed(e) if e.no_effect => {
            ended(&plan.key, "release", ledger.release(&held));
            Err(e)
        }
        Attempt::Failed(e)
            if matches!(
                e.kind,
                ErrorKind::OutcomeUnknown | ErrorKind::Cancelled | ErrorKind::Timeout
            ) =>
        {
            ended(&plan.key, "abandon", ledger.abandon(&held, now()));
            Err(e)
        }
        Attempt::Failed(e) => {
            let result = Recorded::error_json(&e);
            ended(
                &plan.key,
                "complete",
                ledger.complete(&held, LedgerState::Failed, &result, now()),
            );
            Err(e)
        }
        Attempt::Panicked(e) => {
            ended(&plan.key, "abandon", ledger.abandon(&held, now()));
            Err(e)
        }
        Attempt::TimedOut => {
            ended(&plan.key, "abandon", ledger.abandon(&held, now()));
            let mut e = timed_out(spec.timeout, false);
            let _ = write!(
                e.message,
                " (idempotency key {:?}: sent again with it, the call gets outcome_unknown \
                 until that is settled)",
                &*plan.key
            );
            Err(e)
        }
        Attempt::CancelledBefore => {
            ended(&plan.key, "release", ledger.release(&held));
            Err(cancelled(true))
        }
        Attempt::CancelledDuring => {
            ended(&plan.key, "abandon", ledger.abandon(&held, now()));
            Err(cancelled(false))
        }
    }
}

/// Sets the claim's times from now: its lease runs to the call's deadline plus the grace.
fn stamp(claim: &mut Claim<'_>, timeout: Duration, options: &crate::ledger::LedgerOptions) {
    let now = now();
    claim.now_us = now;
    claim.lease_until_us = now.saturating_add(micros(timeout.saturating_add(options.lease_grace)));
    claim.expire_before_us = now.saturating_sub(micros(options.retention));
    claim.reuse_before_us = claim
        .derived
        .then(|| now.saturating_sub(micros(options.derived_key_window)));
}

/// The tool's answer about an unsettled call, within the tool's timeout and the call's
/// cancellation; a tool without a hook, a failing or late hook is [`Reconciliation::Unknown`].
async fn reconcile(entry: &Entry, key: &str, args: &Args, ctx: &ToolContext) -> Reconciliation {
    let Some(asking) = entry.tool.reconcile(key, args, ctx.clone()) else {
        return Reconciliation::Unknown;
    };
    let deadline = tokio::time::Instant::from_std(ctx.deadline);
    let answer = tokio::select! {
        biased;
        r = tokio::time::timeout_at(deadline, asking) => r,
        _ = ctx.cancel.cancelled() => return Reconciliation::Unknown,
    };
    match answer {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            tracing::warn!(key, error = %e, "the reconcile hook failed; the entry stays unsettled");
            Reconciliation::Unknown
        }
        Err(_) => {
            tracing::warn!(
                key,
                "the reconcile hook ran past the timeout; the entry stays unsettled"
            );
            Reconciliation::Unknown
        }
    }
}

/// The recorded end of an earlier call with the key.
fn replay(result: Recorded, key: &str) -> Result<ToolOutput, ToolError> {
    match result {
        Recorded::Output(output) => Ok(output),
        Recorded::Error(e) => Err(e),
        Recorded::Settled { by, at_us } => Err(ToolError::failed(format!(
            "this call already ran: its effect happened (settled as done by the {by} {} ago, \
             idempotency key {key:?}), but its result was not recorded. Do not send it again; \
             if you need its result, read the state it changed",
            ago(now().saturating_sub(at_us))
        ))
        .with_reason("done_without_result")),
    }
}

fn conflict(key: &str, first_tool: &str, tool: &str) -> ToolError {
    let other = if first_tool == tool {
        "with other arguments".to_string()
    } else {
        format!("of the tool {first_tool}")
    };
    ToolError::invalid_input(format!(
        "idempotency key {key:?} was already used for another call ({other}); a key names one \
         call: send a new key for a new call, or this key with the first call's exact \
         arguments to get its result"
    ))
    .with_reason("idempotency_conflict")
}

fn in_progress(key: &str, call_id: &str, until_us: u64, now_us: u64) -> ToolError {
    ToolError::new(
        ErrorKind::InProgress,
        format!(
            "the call {call_id:?} holds idempotency key {key:?}: it is still running, or its \
             process stopped before it recorded an end and the key stays held until its lease \
             runs out ({} from now; then the call reads as unsettled); wait for it to end, \
             then send this call again with the same key to get its result. Do not send it \
             with a new key: that would act a second time",
            within(until_us.saturating_sub(now_us))
        ),
    )
}

fn unsettled(key: &str, session: &str, call_id: &str, age_us: u64) -> ToolError {
    ToolError::new(
        ErrorKind::OutcomeUnknown,
        format!(
            "an earlier call with idempotency key {key:?} (call {call_id:?} of session \
             {session:?}, {} ago) ended without recording whether it acted (it timed out, \
             failed mid-way, or its process stopped), so its effect may or may not have \
             happened, and this call did not run. Do not send it again with a new key: check \
             whether the effect happened, or have the operator settle it with `toolgate ledger \
             resolve {key} --done` or `--not-done`",
            ago(age_us)
        ),
    )
    .with_reason("unsettled")
}

fn unavailable(e: LedgerError) -> ToolError {
    tracing::error!(error = %e, "the idempotency ledger failed; the call did not run");
    ToolError::internal(
        "the idempotency ledger could not record this call, so it did not run; this is a fault \
         of the host, not of the arguments",
    )
    .with_reason("ledger_unavailable")
}

/// Logs an end of a claim that did not reach the ledger.
fn ended(key: &str, what: &str, r: Result<bool, LedgerError>) {
    match r {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            key,
            what,
            "the claim was settled by someone else while its call ran; its end is not recorded"
        ),
        Err(e) => tracing::error!(
            key,
            what,
            error = %e,
            "the idempotency ledger failed to record the call's end; the entry reads as \
             unsettled once its lease runs out"
        ),
    }
}

/// Bytes past the preview's cut that are still searched for secrets, so a secret cut in
/// half is redacted (a key, a token, a JWT: all shorter).
const REDACTION_MARGIN_BYTES: usize = 4096;

/// The arguments for the operator: secrets redacted as the audit redacts them (keys naming a
/// secret, strings that are one, secrets inside a string), in their order, cut to
/// [`ARGUMENTS_PREVIEW_BYTES`] with `…`.
pub(crate) fn preview(arguments: &Value) -> String {
    let secrets = crate::redact::secrets_file_arguments(arguments);
    let mut out = String::new();
    write_preview(&mut out, secrets.as_ref().unwrap_or(arguments));
    if out.len() > ARGUMENTS_PREVIEW_BYTES {
        let end = crate::results::floor_char_boundary(&out, ARGUMENTS_PREVIEW_BYTES);
        out.truncate(end);
        out.push('…');
    }
    out
}

fn write_preview(out: &mut String, v: &Value) {
    use crate::redact::{is_secret_field, redact_str, REDACTED};
    let string = |out: &mut String, s: &str| {
        let room = (ARGUMENTS_PREVIEW_BYTES + 1).saturating_sub(out.len());
        let end = crate::results::floor_char_boundary(s, room);
        if let Ok(quoted) = serde_json::to_string(&s[..end]) {
            out.push_str(&quoted);
        }
    };
    // A string value is redacted as the audit redacts it, the secrets inside it too
    // (`password=...`, a `ghp_` key in a body): only the part the preview can show, and a
    // margin past it so a secret that straddles the cut is found whole.
    let redacted = |out: &mut String, s: &str| {
        let room = (ARGUMENTS_PREVIEW_BYTES + 1).saturating_sub(out.len());
        let window = &s[..crate::results::floor_char_boundary(s, room + REDACTION_MARGIN_BYTES)];
        match redact_str(window) {
            Some(r) => string(out, &r),
            None => string(out, window),
        }
    };
    if out.len() > ARGUMENTS_PREVIEW_BYTES {
        return;
    }
    match v {
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if out.len() > ARGUMENTS_PREVIEW_BYTES {
                    break;
                }
                if i > 0 {
                    out.push(',');
                }
                string(out, k);
                out.push(':');
                if !v.is_null() && is_secret_field(k, v) {
                    string(out, REDACTED);
                } else {
                    write_preview(out, v);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if out.len() > ARGUMENTS_PREVIEW_BYTES {
                    break;
                }
                if i > 0 {
                    out.push(',');
                }
                write_preview(out, item);
            }
            out.push(']');
        }
        Value::String(s) => redacted(out, s),
        other => out.push_str(&other.to_string()),
    }
}

/// Now, µs since the Unix epoch.
fn now() -> u64 {
    crate::audit::now_us(SystemTime::now())
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A span still to come, in µs, for a model, rounded up so a wait that is nearly over never
/// reads as none: `at most 1 s`, `at most 42 s`, `at most 3 min`.
fn within(us: u64) -> String {
    let s = us.div_ceil(1_000_000).max(1);
    if s < 120 {
        format!("at most {s} s")
    } else if s < 7200 {
        format!("at most {} min", s.div_ceil(60))
    } else {
        format!("at most {} h", s.div_ceil(3600))
    }
}

/// A span in µs for a model: `42 s`, `3 min`, `2 h`.
fn ago(us: u64) -> String {
    let s = us / 1_000_000;
    if s < 120 {
        format!("{s} s")
    } else if s < 7200 {
        format!("{} min", s / 60)
    } else {
        format!("{} h", s / 3600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_nearly_over_never_reads_as_none() {
        assert_eq!(within(0), "at most 1 s");
        assert_eq!(within(300_000), "at most 1 s");
        assert_eq!(within(1_000_001), "at most 2 s");
        assert_eq!(within(150_000_000), "at most 3 min");
        let e = in_progress("K", "c1", 9_400_000, 9_000_000);
        assert!(e.message.contains("at most 1 s from now"), "{}", e.message);
        assert!(e.message.contains("its process stopped"), "{}", e.message);
    }

    #[test]
    fn the_preview_redacts_what_the_audit_redacts_inside_strings_too() {
        let key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
        let args = serde_json::json!({
            "body": format!("Login: password=hunter2xyz, token {key}, OPENAI_API_KEY=sk-zzzzzzzzzzzzzzzzzzzzzzzz"),
            "api_key": "plain",
            "to": ["ann@company.com"],
            "auth": "Bearer abcdef0123456789",
        });
        let p = preview(&args);
        for secret in ["hunter2xyz", "ghp_", "sk-zzz", "plain", "abcdef0123"] {
            assert!(!p.contains(secret), "{secret} in {p}");
        }
        assert!(
            p.contains("ann@company.com") && p.contains("Login: password="),
            "{p}"
        );
        // a key that straddles the cut is redacted whole: none of it shows
        let long = format!("{} {key}", "x".repeat(ARGUMENTS_PREVIEW_BYTES - 20));
        let p = preview(&serde_json::json!({ "body": long }));
        assert!(p.ends_with('…') && !p.contains("ghp_"), "{p}");
        assert!(
            p.len() <= ARGUMENTS_PREVIEW_BYTES + '…'.len_utf8(),
            "{}",
            p.len()
        );
    }
}
