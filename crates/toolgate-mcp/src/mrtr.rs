//! Approval on protocol revision 2026-07-28, where a server sends no requests of its own: a
//! multi round-trip request (SEP-2322).
//!
//! 1. The first `tools/call` reaches the authorize stage; the policy asks. The approver
//!    rejects this round and leaves an input-required result behind: an `elicitation/create`
//!    confirmation form under the key [`INPUT_KEY`], and a `requestState` sealed with an
//!    HMAC key made at start-up ([`ApprovalStates`]). The state is bound to the tool, a SHA-256
//!    of the arguments and the caller (a hash of the `Authorization` header and the client's
//!    name), expires after [`STATE_TTL`], and carries a random nonce.
//! 2. The client asks the user and sends the same `tools/call` again with `inputResponses` and
//!    the `requestState`. The state is opened against the same binding; the nonce is spent (a
//!    second use is refused); the user's answer applies as for elicitation
//!    ([`crate::approval`]). A state that does not open, has expired, or was used is a
//!    rejection, never an approval. An answer the form does not allow (a scope not offered,
//!    an expiry out of range) is neither: the round leaves a new question behind saying what
//!    was wrong (its state counts the tries), up to [`MAX_ANSWER_TRIES`] answers.
//!
//! The first round is not an answer: the approver returns [`ApprovalAnswer::Pending`], the call
//! does not run, and its audit record says so (outcome `input_required`, approval `pending`, no
//! error kind), so it counts neither as a rejection nor as an error; the second round records
//! the user's answer.

use crate::approval::{
    ask_again, cannot_answer, confirmation_form, confirmation_message, no_valid_answer,
    read_elicit_result, CallClient, InvalidAnswer, ScopeOffer, MAX_ANSWER_TRIES,
};
use parking_lot::Mutex;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest, InputRequests,
    InputRequiredResult, ProtocolVersion, RequestStateCodec, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use toolgate_core::{ApprovalAnswer, ApprovalRequest};

/// The key of the approval question in `inputRequests` and of its answer in `inputResponses`.
pub const INPUT_KEY: &str = "toolgate_approval";
/// How long a sealed approval question stays valid.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The signing key and the spent nonces of one server.
pub struct ApprovalStates {
    codec: RequestStateCodec,
    spent: Mutex<HashMap<String, Instant>>,
}

impl Default for ApprovalStates {
    fn default() -> Self {
        Self::new()
    }
}

impl ApprovalStates {
    /// A fresh random key, no spent nonce.
    pub fn new() -> Self {
        let key: [u8; 32] = rand::random();
        ApprovalStates {
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"),
            spent: Mutex::new(HashMap::new()),
        }
    }

    /// Marks `nonce` spent; `false` when it already was.
    fn spend(&self, nonce: &str) -> bool {
        let now = Instant::now();
        let mut spent = self.spent.lock();
        if spent.len() > 1024 {
            spent.retain(|_, at| now.duration_since(*at) < STATE_TTL);
        }
        spent.insert(nonce.to_string(), now).is_none()
    }
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    /// Random nonce, spent on use.
    n: String,
    /// The tool.
    t: String,
    /// Answers given so far that the form did not allow.
    #[serde(default)]
    a: u8,
}

/// Whether the request uses the 2026-07-28 lifecycle, where the server sends no requests and
/// asks through input-required results instead.
pub(crate) fn is_round_trip(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The approver's answer for one 2026-07-28 round (see the module documentation).
pub(crate) fn answer(client: &CallClient, request: &ApprovalRequest<'_>) -> ApprovalAnswer {
    let states = &client.shared.approvals;
    let binding = binding(&caller_of(&client.ctx), request);
    let response = client
        .input_responses
        .as_ref()
        .and_then(|r| r.get(INPUT_KEY));
    // 2026-07-28 over HTTP is stateless: the calls run in the caller's session, shared by
    // every client with the same credential, which is more than "this session" says to the
    // person answering (crate::approval)
    let stateless = client
        .ctx
        .extensions
        .get::<http::request::Parts>()
        .is_some();
    let asked = toolgate_core::grant::Asked::of_request(request);
    let offer = client.offer(stateless, &asked);
    let question = Question {
        binding: &binding,
        offer: &offer,
        asked: &asked,
    };
    match (&client.request_state, response) {
        (Some(state), Some(response)) => match redeem(states, state, response, &question) {
            Redeemed::Answer(answer) => answer,
            Redeemed::Invalid { why, tries } if tries < MAX_ANSWER_TRIES => {
                ask(client, request, &question, Some(&why), tries)
            }
            Redeemed::Invalid { why, .. } => no_valid_answer(&why),
        },
        (Some(_), None) | (None, Some(_)) => ApprovalAnswer::Rejected {
            reason: format!(
                "the retry must carry both requestState and inputResponses[{INPUT_KEY:?}]"
            ),
        },
        (None, None) => {
            let can_elicit = client.ctx.client_capabilities().is_some_and(|c| {
                c.elicitation
                    .as_ref()
                    .is_some_and(|e| e.url.is_none() || e.form.is_some())
            });
            if !can_elicit {
                return cannot_answer(request);
            }
            ask(client, request, &question, None, 0)
        }
    }
}

/// What one call's question is bound to and offers.
struct Question<'a> {
    /// The binding of its sealed state.
    binding: &'a [u8],
    /// The scopes its form offers.
    offer: &'a ScopeOffer,
    /// What it shows and may grant.
    asked: &'a toolgate_core::grant::Asked,
}

/// Leaves the approval question behind as this round's input-required result (after `tries`
/// answers the form did not allow, the last one `why`, which the question names first).
fn ask(
    client: &CallClient,
    request: &ApprovalRequest<'_>,
    q: &Question<'_>,
    why: Option<&InvalidAnswer>,
    tries: u8,
) -> ApprovalAnswer {
    let payload = Sealed {
        n: format!("{:032x}", rand::random::<u128>()),
        t: request.tool.name.to_string(),
        a: tries,
    };
    let options = SealOptions::new().associated_data(q.binding).ttl(STATE_TTL);
    let Ok(sealed) = client
        .shared
        .approvals
        .codec
        .seal_json_with(&payload, &options)
    else {
        return ApprovalAnswer::Rejected {
            reason: "the approval question could not be sealed".into(),
        };
    };
    let question = confirmation_message(request, q.asked);
    let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: match why {
            Some(why) => ask_again(why, &question),
            None => question,
        },
        requested_schema: confirmation_form(q.offer, q.asked),
    });
    let mut requests = InputRequests::new();
    requests.insert(INPUT_KEY.to_string(), InputRequest::Elicitation(ask));
    *client.question.lock() = Some(InputRequiredResult::new(Some(requests), Some(sealed)));
    ApprovalAnswer::Pending {
        reason: "approval asked of the client (input required)".into(),
    }
}

/// What the retry's answer is.
enum Redeemed {
    /// An answer (a rejection when the state or the response is not acceptable).
    Answer(ApprovalAnswer),
    /// One the form did not allow: the `tries`-th such.
    Invalid { why: InvalidAnswer, tries: u8 },
}

fn redeem(
    states: &ApprovalStates,
    state: &str,
    response: &serde_json::Value,
    q: &Question<'_>,
) -> Redeemed {
    let invalid = || {
        Redeemed::Answer(ApprovalAnswer::Rejected {
            reason: "the approval state is invalid, expired, already used, or for another call"
                .into(),
        })
    };
    let Ok(sealed) = states.codec.open_json_with::<Sealed>(state, q.binding) else {
        return invalid();
    };
    if !states.spend(&sealed.n) {
        return invalid();
    }
    match serde_json::from_value::<ElicitResult>(response.clone()) {
        Ok(result) => match read_elicit_result(&result, q.offer, q.asked) {
            Ok(answer) => Redeemed::Answer(answer),
            Err(why) => Redeemed::Invalid {
                why,
                tries: sealed.a.saturating_add(1),
            },
        },
        Err(_) => Redeemed::Answer(ApprovalAnswer::Rejected {
            reason: "the approval answer is not an elicitation result".into(),
        }),
    }
}

/// The caller a state is bound to: a hash of the credential the HTTP request carried (if
/// any) and the client's name.
fn caller_of(ctx: &RequestContext<RoleServer>) -> Vec<u8> {
    let authorization = ctx
        .extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
        .map(|v| v.as_bytes().to_vec())
        .unwrap_or_default();
    let name = ctx.client_info().map(|i| i.name).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(&authorization);
    h.update([0]);
    h.update(name.as_bytes());
    h.finalize().to_vec()
}

/// What a sealed state is bound to: caller, tool and a hash of the arguments.
fn binding(caller: &[u8], request: &ApprovalRequest<'_>) -> Vec<u8> {
    let args = serde_json::to_vec(request.arguments).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(caller);
    h.update([0]);
    h.update(request.tool.name.as_bytes());
    h.update([0]);
    h.update(Sha256::digest(&args));
    h.finalize().to_vec()
}
