//! Stage 5, authorize: the policy decides over the tool and its resolved resources; a call the
//! policy asks about goes to the approver. (The profile allowlist was applied by resolve: a tool
//! outside the profile is invisible.)

use super::{CallState, Inner};
use crate::approval::{ApprovalAnswer, ApprovalRequest};
use crate::audit::Approval;
use crate::call::CallId;
use crate::error::{ErrorKind, ToolError};
use crate::policy::{Decision, PolicyInput};
use crate::registry::Entry;
use crate::session::Session;
use crate::tool::ResolvedResource;

/// Decides, asking the approver when the verdict is `ask`. The verdict and the answer are
/// kept in `st` for the audit record.
///
/// # Errors
/// `permission_denied` (fatal) on deny; `approval_rejected` (fatal) or `approval_corrected`
/// (recoverable, with the approver's feedback) when the approver does not approve.
pub(crate) async fn authorize(
    inner: &Inner,
    entry: &Entry,
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
        Decision::Deny => Err(ToolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "calling {} is not permitted here: {}",
                spec.name, verdict.reason
            ),
        )
        .with_reason(verdict.rule.to_string())),
        Decision::Ask => {
            let request = ApprovalRequest {
                tool: spec,
                call_id: id,
                session_id: &session.id,
                profile: &session.profile,
                arguments: &st.arguments,
                rule: &verdict.rule,
                reason: &verdict.reason,
            };
            let answer = inner.approver.approve(&request).await;
            match answer {
                ApprovalAnswer::Approved => {
                    st.approval = Some(Approval::Approved);
                    Ok(())
                }
                ApprovalAnswer::Rejected { reason } => {
                    st.approval = Some(Approval::Rejected);
                    Err(ToolError::new(
                        ErrorKind::ApprovalRejected,
                        format!(
                            "the call to {} needed approval and was not approved",
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
