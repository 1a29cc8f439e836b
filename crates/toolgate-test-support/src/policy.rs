//! Policies for tests.

use toolgate_core::{DefaultPolicy, Policy, PolicyInput, Verdict};

/// The default policy, except that every call of the tool named `tool` is denied by the rule
/// `rule`, with `reason`.
#[derive(Debug, Clone, Copy)]
pub struct DenyTool {
    /// The tool whose calls are denied.
    pub tool: &'static str,
    /// The deny verdict's rule.
    pub rule: &'static str,
    /// The deny verdict's reason.
    pub reason: &'static str,
}

impl DenyTool {
    /// Denies the tool `forbidden` (see [`crate::tools::forbidden`]) by the rule
    /// `test.forbidden`.
    pub const FORBIDDEN: DenyTool = DenyTool {
        tool: "forbidden",
        rule: "test.forbidden",
        reason: "the test forbids it",
    };
}

impl Policy for DenyTool {
    fn decide(&self, input: &PolicyInput<'_>) -> Verdict {
        if &*input.tool.name == self.tool {
            Verdict::deny(self.rule, self.reason)
        } else {
            DefaultPolicy.decide(input)
        }
    }
}
