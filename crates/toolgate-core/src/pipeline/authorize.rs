//! Stage 5, authorize: the policy decides over the tool and its resolved resources. A call the
//! policy asks about is approved without asking when an active grant covers it; otherwise it
//! goes to the approver, whose scoped answer may leave a grant behind. A grant never overrides
//! a deny: grants are consulted only on `ask`. (The profile allowlist was applied by resolve: a
//! tool outside the profile is invisible.)

use super::{CallState, Inner};
use crate::approval::{ApprovalAnswer, ApprovalRequest};
use crate::audit::{now_us, Approval};
use crate::call::CallId;
use crate::context::ToolContext;
use crate::error::{ErrorKind, ToolError};
use crate::grant::{find_covering, GrantRequest, GrantScope, GrantStore};
use crate::policy::{Decision, PolicyInput};
use crate::registry::Entry;
use crate::session::Session;
use crate::tool::{Args, ResolvedResource};
use std::panic::AssertUnwindSafe;
use std::time::SystemTime;

/// Decides, consulting grants and then the approver when the verdict is `ask`. The verdict,
/// the answer, the grant and the scope are kept in `st` for the audit record.
///
/// Before the approver is asked, the tool looks at what the call would act on
/// ([`crate::Tool::preview`]): a call bound to fail ends here with the tool's error, and the
/// question carries the change it would make (a diff for the file tools).
///
/// # Errors
/// `permission_denied` (fatal) on deny; `approval_rejected` (fatal; reason `not_approved`, or
/// `nobody_to_ask` when nobody could answer) or `approval_corrected` (recoverable, with the
/// approver's feedback) when the approver does not approve; `input_required` when the
/// question went to the client and the answer comes with a retry. A rejection's message says
/// plainly that nothing was changed and what to do next; the rule that asked is in the
/// error's details (`rule`, `asked`, `reason`) and the audit record, not in the model's text.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn authorize(
    inner: &Inner,
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
    resources: &[ResolvedResource],
    session: &Session,
    id: &CallId,
    st: &mut CallState,
) -> Result<(), ToolError> {
    let spec = entry.spec();
    let verdict = inner.policy.decide(&PolicyInput {
        tool: spec,
        resources,
        arguments: &st.arguments,
        session,
    });
    let decision = verdict.decision;
    st.verdict = Some(verdict);
    let verdict = st.verdict.as_ref().expect("just set");
    match decision {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(denied(spec, verdict)),
        Decision::Ask => {
            if let Some(grants) = &inner.grants {
                let now = now_us(SystemTime::now());
                // what a verdict that cannot be granted is about cannot be named: only a grant
                // of the whole tool (no resource patterns) covers it, as it covers anything
                let covered = if verdict.grantable { resources } else { &[] };
                match find_covering(
                    &**grants,
                    &session.id,
                    session.principal(),
                    &spec.name,
                    covered,
                    now,
                ) {
                    Ok(Some(g)) => {
                        st.approval = Some(Approval::Granted);
                        st.grant = Some(g.id);
                        st.scope = Some(g.scope);
                        return Ok(());
                    }
                    Ok(None) => {}
                    // the approver is asked instead: a broken store never approves
                    Err(e) => tracing::error!(error = %e, "looking up approval grants"),
                }
            }
            // a call bound to fail is not put to a person
            let preview = preview(entry, args, ctx)?;
            let request = ApprovalRequest {
                tool: spec,
                call_id: id,
                session_id: &session.id,
                profile: &session.profile,
                arguments: &st.arguments,
                resources,
                rule: &verdict.rule,
                reason: &verdict.reason,
                preview: preview.as_deref(),
                grantable: verdict.grantable,
            };
            let answer = inner.approver.approve(&request).await;
            match answer {
                ApprovalAnswer::Approved => {
                    st.approval = Some(Approval::Approved);
                    st.scope = Some(GrantScope::Once);
                    Ok(())
                }
                ApprovalAnswer::ApprovedFor { .. } if !request.grantable => {
                    tracing::warn!(
                        rule = %verdict.rule,
                        "a scoped answer to a question that can only approve this call"
                    );
                    st.approval = Some(Approval::Approved);
                    st.scope = Some(GrantScope::Once);
                    Ok(())
                }
                ApprovalAnswer::ApprovedFor { grant } => {
                    st.approval = Some(Approval::Approved);
                    let by = inner.approver.name();
                    let grant = capped(grant, inner.grant_max_expiry);
                    let (id, scope) =
                        store_grant(inner.grants.as_deref(), &grant, spec, session, by);
                    st.grant = id;
                    st.scope = Some(scope);
                    Ok(())
                }
                ApprovalAnswer::Rejected { reason } => {
                    st.approval = Some(Approval::Rejected);
                    Err(ToolError::new(
                        ErrorKind::ApprovalRejected,
                        format!(
                            "the user did not approve this call to {}, so it did not run and \
                             nothing was changed. Stop here and ask the user how to go on; do \
                             not send the call again or try to get the same result another way",
                            spec.name
                        ),
                    )
                    .with_reason("not_approved")
                    .with_details(rejection_details(verdict, &reason)))
                }
                ApprovalAnswer::NobodyToAsk { reason } => {
                    st.approval = Some(Approval::Rejected);
                    Err(nobody_to_ask(&spec.name, &reason, verdict)
                        .with_details(rejection_details(verdict, &reason)))
                }
                ApprovalAnswer::Pending { reason } => {
                    st.approval = Some(Approval::Pending);
                    Err(ToolError::new(
                        ErrorKind::InputRequired,
                        format!(
                            "the call to {} waits for an answer to its approval question; \
                             send it again with the answer",
                            spec.name
                        ),
                    )
                    .with_reason(verdict.rule.to_string())
                    .with_details(serde_json::json!({ "reason": reason })))
                }
                ApprovalAnswer::Corrected { feedback } => {
                    st.approval = Some(Approval::Corrected);
                    Err(ToolError::new(
                        ErrorKind::ApprovalCorrected,
                        format!(
                            "the call to {} was not approved; the user says: {feedback}",
                            spec.name
                        ),
                    ))
                }
            }
        }
    }
}

/// The tool's look before the question ([`crate::Tool::preview`]): why the call would fail,
/// or the change to show the approver.
///
/// # Errors
/// The tool's; `internal` when it panics.
/// The error of a call the policy denies (`permission_denied`, fatal, the rule as reason).
fn denied(spec: &crate::ToolSpec, verdict: &crate::policy::Verdict) -> ToolError {
    ToolError::new(
        ErrorKind::PermissionDenied,
        format!(
            "calling {} is not permitted here: {}",
            spec.name, verdict.reason
        ),
    )
    .with_reason(verdict.rule.to_string())
}

/// Whether the policy denies, for this session, a call the ledger would answer with an
/// earlier result (a replay): a deny holds for it as for a call that runs, since the earlier
/// call may have been made under another role of the same principal, or before the policy
/// changed. An `ask` is not put again (the earlier call was allowed or approved, and nothing
/// will act). The resources are those the guard finds now, or none when it cannot (the world
/// may have changed since): rules on the tool still hold.
///
/// # Errors
/// `permission_denied` as [`authorize`]'s.
pub(crate) fn replay_allowed(
    inner: &Inner,
    entry: &Entry,
    args: &Args,
    ctx: &ToolContext,
    session: &Session,
    st: &mut CallState,
) -> Result<(), ToolError> {
    let resources = super::guard::guard(entry, args, ctx).unwrap_or_default();
    let verdict = inner.policy.decide(&PolicyInput {
        tool: entry.spec(),
        resources: &resources,
        arguments: &st.arguments,
        session,
    });
    if verdict.decision == Decision::Deny {
        let e = denied(entry.spec(), &verdict);
        st.verdict = Some(verdict);
        return Err(e);
    }
    Ok(())
}

fn preview(entry: &Entry, args: &Args, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| entry.tool.preview(args, ctx)))
        .map_err(|_| ToolError::internal("the tool's preview panicked").with_reason("panic"))?
}

/// The details of a rejected call, for the operator and the audit: the policy rule that
/// asked, what it asked about (the verdict's reason, e.g. the commands of a shell line) and
/// the approver's own reason.
fn rejection_details(verdict: &crate::policy::Verdict, reason: &str) -> serde_json::Value {
    serde_json::json!({ "rule": &*verdict.rule, "asked": &*verdict.reason, "reason": reason })
}

/// The rejection when nobody could answer the approval question: what happened, that nothing
/// changed, what the policy asked about (the verdict's reason: a rule the operator already
/// wrote for the tool may not have covered the command, path or host the call names), and
/// how the operator lets such calls run. The rule's name stays in the details, for the
/// operator.
fn nobody_to_ask(tool: &str, why: &str, verdict: &crate::policy::Verdict) -> ToolError {
    let instead = if verdict.grantable {
        ""
    } else {
        " A line the policy can read with certainty (see what it asked about) may run without \
         asking under the operator's rules: send that instead if it does the same."
    };
    ToolError::new(
        ErrorKind::ApprovalRejected,
        format!(
            "{tool} needs the user's approval here ({}), but nobody could be asked ({why}), \
             so the call did not run and nothing was changed.{instead} Otherwise stop and tell the user. The operator can let such calls run without \
             asking with an allow rule in toolgate.toml that covers what was asked about (for \
             example [[rules]] decision = \"allow\", tool = \"{tool}\", with resource = \
             \"command:NAME\", \"path:PATTERN\" or \"host:NAME\" for the commands, files \
             or hosts it names) or an approval grant (toolgate approvals grant --tool {tool})",
            verdict.reason
        ),
    )
    .with_reason("nobody_to_ask")
}

/// `grant` with its expiry cut to `max` (a grant without one gets `max`); `once` is left as it
/// is, since it stores nothing.
fn capped(mut grant: GrantRequest, max: Option<std::time::Duration>) -> GrantRequest {
    if let Some(max) = max {
        if grant.scope != GrantScope::Once {
            let max = max.as_secs().max(1);
            grant.expires_in_secs = Some(grant.expires_in_secs.map_or(max, |e| e.min(max)));
        }
    }
    grant
}

/// Stores the grant a scoped answer asks for; the grant's id (when stored) and the scope that
/// applies. The person approved this call either way: a grant that cannot be stored (no store,
/// a bad pattern, a store error) leaves an approval of this one call.
fn store_grant(
    grants: Option<&dyn GrantStore>,
    request: &GrantRequest,
    spec: &crate::ToolSpec,
    session: &Session,
    granted_by: &str,
) -> (Option<i64>, GrantScope) {
    if request.scope == GrantScope::Once {
        return (None, GrantScope::Once);
    }
    let Some(store) = grants else {
        tracing::warn!(
            scope = %request.scope,
            "a scoped approval with no grant store approves this call only"
        );
        return (None, GrantScope::Once);
    };
    let now = now_us(SystemTime::now());
    let stored = request
        .to_new_grant(
            &spec.name,
            &session.id,
            session.principal(),
            now,
            Some(granted_by),
        )
        .and_then(|g| store.insert(&g));
    match stored {
        Ok(g) => {
            if g.scope != GrantScope::Always {
                // so the grant ends with the session
                session
                    .has_grants
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            (Some(g.id), g.scope)
        }
        Err(e) => {
            tracing::error!(error = %e, "storing an approval grant; it approves this call only");
            (None, GrantScope::Once)
        }
    }
}
