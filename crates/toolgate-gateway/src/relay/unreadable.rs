//! An upstream's request that rmcp could not read as any request the gateway serves: rmcp
//! hands it to the handler as a custom request (its method and raw `params`), whose default
//! answer is `-32601` with only the method as the message, which tells the upstream nothing.
//!
//! - `sampling/createMessage` or `elicitation/create` whose params do not fit the
//!   specification's shape (a number sent as a string, an unknown content type, an elicitation
//!   schema beyond the flat one of 2025-11-25 "Elicitation": `$ref`, `oneOf` nesting, nested
//!   objects...): metered like every request ([`Relay::admit`]), then `-32602` saying what
//!   did not fit, audited as refused like the relay's other refusals
//! - any other method: `-32601` naming it and what the gateway serves
//!
//! - a request rmcp could not read for its JSON syntax, renamed `toolgate/unreadable` on its
//!   way from the upstream (`stdout_lines`): `-32600` saying why, metered and audited for
//!   sampling and elicitation
//!
//! The reader's message (serde's) may quote the upstream's own text: it goes back to the
//! upstream only, and to the audit record and the log cut to [`MAX_WHY`] characters.

use super::{what, Failure, Relay};
use crate::stdout_lines::UNREADABLE;
use rmcp::model::{
    CreateMessageRequestParams, CustomRequest, ElicitRequestParams, ErrorCode, ErrorData,
};
use std::time::Instant;
use toolgate_config::upstreams::RelayKind;

/// The most characters of the reader's message kept in an answer or a record.
const MAX_WHY: usize = 400;

impl Relay {
    /// The answer to `request`, a request of the upstream rmcp could not read as one the
    /// gateway serves; see the module documentation.
    pub(crate) fn unreadable(&self, request: CustomRequest) -> ErrorData {
        if request.method == UNREADABLE {
            return self.unparsable(request.params);
        }
        let kind = match request.method.as_str() {
            "sampling/createMessage" => RelayKind::Sampling,
            "elicitation/create" => RelayKind::Elicitation,
            _ => {
                return ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "toolgate's gateway serves no method {:?} to upstream servers (it \
                         answers ping and roots/list, and relays sampling/createMessage and \
                         elicitation/create where the operator opted in)",
                        cut(&request.method)
                    ),
                    None,
                );
            }
        };
        if let Err(over) = self.admit(kind) {
            return over;
        }
        let started = Instant::now();
        let params = request.params.unwrap_or(serde_json::Value::Null);
        let fault = match kind {
            RelayKind::Sampling => serde_json::from_value::<CreateMessageRequestParams>(params)
                .err()
                .map(|e| e.to_string()),
            RelayKind::Elicitation => serde_json::from_value::<ElicitRequestParams>(params)
                .err()
                .map(|e| e.to_string()),
        };
        let why = format!(
            "its params are not those of {} as MCP 2025-11-25 defines them ({}): send them \
             in that shape",
            what(kind),
            cut(fault
                .as_deref()
                .unwrap_or("they could not be read as its params"))
        );
        self.record(kind, None, started, Some(Failure::Refused(&why)));
        ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "toolgate's gateway did not relay this {} request of the upstream server {}: \
                 {why}",
                kind.as_str(),
                self.upstream
            ),
            None,
        )
    }
}

impl Relay {
    /// The answer to a request of the upstream that rmcp could not read for its syntax,
    /// renamed `toolgate/unreadable` on its way (`stdout_lines`, with its `method` and
    /// serde_json's `why` as params): `-32600` saying why; a sampling or elicitation request
    /// is metered and audited as refused.
    fn unparsable(&self, params: Option<serde_json::Value>) -> ErrorData {
        let params = params.unwrap_or_default();
        let text = |key: &str| params.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let (method, fault) = (text("method"), text("why"));
        let kind = match method {
            "sampling/createMessage" => Some(RelayKind::Sampling),
            "elicitation/create" => Some(RelayKind::Elicitation),
            _ => None,
        };
        if let Some(kind) = kind {
            if let Err(over) = self.admit(kind) {
                return over;
            }
        }
        let why = format!(
            "its JSON could not be read ({}): a string with a lone UTF-16 surrogate escape, or \
             nesting past 128 levels; send it without",
            cut(fault)
        );
        if let Some(kind) = kind {
            self.record(kind, None, Instant::now(), Some(Failure::Refused(&why)));
        }
        ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "toolgate's gateway did not read this {:?} request of the upstream server {}: \
                 {why}",
                cut(method),
                self.upstream
            ),
            None,
        )
    }
}

/// `text` cut to [`MAX_WHY`] characters, marked when cut.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_WHY) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}
