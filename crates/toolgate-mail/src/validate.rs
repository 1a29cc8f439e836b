//! `validate_email_address`: whether an address is well-formed and what the policy says about
//! sending to it.

use crate::MailState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use toolgate_core::{
    Decision, Effects, RegistrationError, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder,
    TypedTool,
};

/// Arguments of `validate_email_address`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// The address to check, bare (`ann@example.com`).
    #[schemars(length(max = 320))]
    pub address: String,
}

/// What the policy says about sending to an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecipientPolicy {
    /// No rule denies or asks about it (a send may still ask, as sending does by default).
    Allowed,
    /// A rule asks about it: a send to it is put to the approver.
    Ask,
    /// A rule denies it: a send to it is refused.
    Denied,
}

/// The result of `validate_email_address`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ValidateOutput {
    /// Whether the address is well-formed.
    pub valid: bool,
    /// The address as it will be sent (trimmed), when valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized: Option<String>,
    /// The domain in ASCII (IDNA), when valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// What is wrong, when invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What to send instead, when invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// What the policy says about sending to it, when valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<RecipientPolicy>,
}

/// The `validate_email_address` tool.
#[derive(Debug)]
pub struct ValidateEmailAddress {
    /// `send_email`'s contract: the policy is asked about a send to the address.
    sender: ToolSpec,
}

impl ValidateEmailAddress {
    pub(crate) fn new(state: Arc<MailState>) -> Result<Self, RegistrationError> {
        Ok(ValidateEmailAddress {
            sender: crate::send::SendEmail::new(state).spec().build()?,
        })
    }
}

const DESCRIPTION: &str = "Check one email address before sending: its syntax (RFC 5321/5322, \
internationalized addresses per RFC 6531 such as 张伟@例子.中国) and what the operator's policy \
says about sending to it. Returns {valid, normalized, domain, policy} for a good address \
(policy, for a send_email to it alone: allowed (sent without asking), ask (a send will be put \
to a person) or denied (a send will be refused: do not try)), or {valid: false, problem, \
suggestion} saying what is wrong and what to send instead. It does not contact any server: a valid address may still not exist.";

impl TypedTool for ValidateEmailAddress {
    type Args = ValidateArgs;
    type Output = ValidateOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("validate_email_address")
            .title("Validate email address")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("mail")
            .example(
                "Check an address",
                serde_json::json!({"address": "zhang.wei@example.cn"}),
            )
    }

    async fn call(
        &self,
        args: ValidateArgs,
        ctx: ToolContext,
    ) -> Result<ValidateOutput, ToolError> {
        Ok(match crate::address::parse(&args.address) {
            Ok(address) => {
                let normalized = address.to_string();
                let ascii = toolgate_core::pattern::normalize_address(&normalized);
                let decided = ascii
                    .as_deref()
                    .map(|a| ctx.recipient_decision(&self.sender, a));
                let policy = match decided {
                    Some(Decision::Deny) => RecipientPolicy::Denied,
                    Some(Decision::Ask) => RecipientPolicy::Ask,
                    _ => RecipientPolicy::Allowed,
                };
                ValidateOutput {
                    valid: true,
                    domain: ascii
                        .as_deref()
                        .and_then(|a| a.rsplit_once('@'))
                        .map(|(_, d)| d.to_string()),
                    normalized: Some(normalized),
                    problem: None,
                    suggestion: None,
                    policy: Some(policy),
                }
            }
            Err(p) => ValidateOutput {
                valid: false,
                normalized: None,
                domain: None,
                problem: Some(p.what),
                suggestion: Some(p.instead),
                policy: None,
            },
        })
    }
}
