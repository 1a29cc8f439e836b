//! `search_contacts`: the contacts book searched by name, part of a name, alias or address.

use crate::MailState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use toolgate_core::{Effects, Risk, ToolContext, ToolError, ToolSpec, ToolSpecBuilder, TypedTool};

/// Arguments of `search_contacts`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchContactsArgs {
    /// A name, part of a name, an alias or title (`张总`, `Mr. Zhang`), or an address;
    /// matched ignoring case and accents.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// At most this many contacts, best first (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

/// One contact found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContactInfo {
    /// The contact's id (`contact_...`): `to` and `cc` of the other tools take it as well as
    /// an address.
    pub id: String,
    /// The display name.
    pub name: String,
    /// The email address.
    pub email: String,
    /// The organization, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
}

/// The result of `search_contacts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchContactsOutput {
    /// The contacts found, best first (empty when none match).
    pub contacts: Vec<ContactInfo>,
}

/// The `search_contacts` tool.
#[derive(Debug)]
pub struct SearchContacts(Arc<MailState>);

impl SearchContacts {
    pub(crate) fn new(state: Arc<MailState>) -> Self {
        SearchContacts(state)
    }
}

const DESCRIPTION: &str = "Find people in the operator's contacts book by name, part of a \
name, alias or title (\"张总\", \"Mr. Zhang\", \"alvarez\"), or address. Matching ignores case \
and accents; the best matches come first. Use it before drafting or sending to get a \
recipient's exact address; never guess addresses. Returns {contacts: [{id, name, email, \
organization}]}, empty when nobody matches (try a shorter part of the name). The ids can be \
sent as `to`/`cc` of generate_email_draft and send_email; ids not returned here are refused.";

impl TypedTool for SearchContacts {
    type Args = SearchContactsArgs;
    type Output = SearchContactsOutput;

    fn spec(&self) -> ToolSpecBuilder {
        ToolSpec::builder("search_contacts")
            .title("Search contacts")
            .description(DESCRIPTION)
            .effects(Effects::read_only())
            .risk(Risk::Read)
            .tag("mail")
            .example(
                "Find Mr. Zhang",
                serde_json::json!({"query": "张总", "limit": 5}),
            )
    }

    async fn call(
        &self,
        args: SearchContactsArgs,
        _ctx: ToolContext,
    ) -> Result<SearchContactsOutput, ToolError> {
        let limit = args.limit.unwrap_or(10).clamp(1, 100) as usize;
        let contacts = self
            .0
            .contacts
            .search(&args.query, limit)
            .into_iter()
            .map(|c| ContactInfo {
                id: c.id.clone(),
                name: c.name.clone(),
                email: c.email.clone(),
                organization: c.organization.clone(),
            })
            .collect();
        Ok(SearchContactsOutput { contacts })
    }
}

/// The address of each of `recipients` (an address, or a contact id from search_contacts),
/// checked.
///
/// # Errors
/// `invalid_input` with reason `unknown_contact` for an id no contact has, or
/// `invalid_address` (saying what is wrong and what to send) for a bad address; each names
/// the field (`to[1]`).
pub(crate) fn recipients(
    state: &MailState,
    field: &str,
    recipients: &[String],
) -> Result<Vec<lettre::Address>, ToolError> {
    let mut out = Vec::with_capacity(recipients.len());
    for (i, r) in recipients.iter().enumerate() {
        let text = if r.starts_with("contact_") {
            match state.contacts.get(r.trim()) {
                Some(c) => c.email.as_str(),
                None => {
                    return Err(ToolError::invalid_input(format!(
                        "{field}[{i}]: no contact has id {r:?}; send an id search_contacts \
                         returned, or the address itself"
                    ))
                    .with_reason("unknown_contact"))
                }
            }
        } else {
            r.as_str()
        };
        let address = crate::address::parse(text).map_err(|p| {
            ToolError::invalid_input(format!("{field}[{i}] {text:?}: {}; {}", p.what, p.instead))
                .with_reason("invalid_address")
        })?;
        // `Ann@` and `ann@` are one mailbox to every mail server in use: one copy
        let key = crate::address::mailbox_key(&address);
        if !out.iter().any(|a| crate::address::mailbox_key(a) == key) {
            out.push(address);
        }
    }
    Ok(out)
}
