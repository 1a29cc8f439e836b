//! [`check`]: one JSON-RPC 2.0 message read once, shallowly, before rmcp parses it, so that
//! every request rmcp could not read or would misread gets the right error instead of none.
//!
//! In this order (the first fault found is the answer):
//!
//! 1. JSON text: one value and nothing after it, else `-32700` parse error; a number no
//!    64-bit float holds (`1e309`: valid JSON text, past this reader's limit) is `-32602`,
//!    with the request's id when it can be found
//! 2. an object: a batch (an array, empty or not) or a scalar is `-32600`; MCP has no batches
//! 3. `id`, when present: a string of at most [`MAX_ID_BYTES`] bytes or an integer that fits
//!    64 bits, else `-32600` (MCP forbids `null` ids; fractions, exponents and other types
//!    are refused, not rounded)
//! 4. no member twice (`id`, `jsonrpc`, `method`, `params`, `result`, `error`), else `-32600`
//! 5. nesting at most [`MAX_DEPTH`] levels (the message itself is level 1), else `-32600`
//! 6. `"jsonrpc": "2.0"`, else `-32600`
//! 7. the kind: `method` (a string of at most [`MAX_METHOD_BYTES`] bytes) with an `id` is a
//!    request, without one a notification; no `method`, an `id` and exactly one of `result`
//!    and an `error` object is a response; anything else is `-32600`
//! 8. `params`, when present, an object (MCP uses no positional params), else `-32602`; for
//!    `tools/call`, `params.name` a string and `params.arguments` absent, `null` or an object,
//!    else `-32602`
//!
//! The refusal carries the request's id whenever step 3 could read it (for a request), so
//! the client can match the error to its request; otherwise `"id": null`.
//!
//! The reading is serde_json's, with its rules (a leading byte-order mark is not JSON), but
//! nothing below [`MAX_DEPTH`] is visited: deeper values are skipped by serde_json's iterative
//! skipper, so no input can exhaust the stack, and no value but the id and the method is
//! copied.

use super::refusal::Refusal;
use rmcp::model::{ErrorCode, RequestId};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The deepest nesting a message may have: the message object is level 1, `params` level 2,
/// `params.arguments` level 3, so a tool's arguments may nest 61 levels.
pub const MAX_DEPTH: usize = 64;
/// The longest string id, in bytes (UTF-8).
pub const MAX_ID_BYTES: usize = 256;
/// The longest method name, in bytes.
pub const MAX_METHOD_BYTES: usize = 256;

/// What a message that passed [`check`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A request: it must get one answer with this id.
    Request {
        /// The request id.
        id: RequestId,
        /// The method, as far as the transports care.
        method: Method,
    },
    /// A notification: never answered.
    Notification,
    /// A response to a request of the server (an elicitation answer, for example).
    Response,
}

/// The methods the transports treat specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `initialize`: over HTTP it opens a session.
    Initialize,
    /// `tools/call`.
    ToolsCall,
    /// Any other method.
    Other,
}

/// Checks one message (the bytes of one stdio line without its newline, or one HTTP body).
///
/// # Errors
/// The [`Refusal`] to send back, as the module documentation orders them.
pub fn check(bytes: &[u8]) -> Result<Frame, Refusal> {
    let mut facts = Facts::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = Top(&mut facts).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = read {
        if e.to_string().starts_with("number out of range") {
            // valid JSON text with a number no 64-bit float holds (`1e309`): a limit of this
            // reader (RFC 8259 lets implementations set one), not a parse error, so the
            // request keeps its id and the client is not left waiting for an answer
            let mut scan = super::id_scan::IdScan::new();
            scan.feed(bytes);
            return Err(Refusal::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "a number in the message is larger than a 64-bit float holds ({e}): send \
                     numbers within the limits the tool's inputSchema gives (for example \
                     run_shell's timeout_ms at most 600000)"
                ),
                scan.finish(),
            ));
        }
        return Err(Refusal::new(
            ErrorCode::PARSE_ERROR,
            format!("the message is not one JSON value ({e}): send one JSON-RPC 2.0 object"),
            None,
        ));
    }
    facts.judge()
}

/// The kind of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    #[default]
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

#[derive(Debug, Default)]
enum IdFact {
    #[default]
    Absent,
    Valid(RequestId),
    Invalid(&'static str),
}

#[derive(Debug, Default)]
enum MethodFact {
    #[default]
    Absent,
    Valid(Method),
    Invalid,
}

/// What one reading found.
#[derive(Debug, Default)]
struct Facts {
    top: Kind,
    id: IdFact,
    /// `Some(true)`: `"2.0"`.
    jsonrpc: Option<bool>,
    method: MethodFact,
    /// `params`, unless absent or `null`.
    params: Option<Kind>,
    params_seen: bool,
    /// `params.name` and `params.arguments`, when `params` is an object.
    name: Option<Kind>,
    arguments: Option<Kind>,
    result: Option<Kind>,
    error: Option<Kind>,
    duplicate: Option<&'static str>,
    too_deep: bool,
}

impl Facts {
    fn judge(self) -> Result<Frame, Refusal> {
        let invalid = |message: String, id: Option<RequestId>| {
            Err(Refusal::new(ErrorCode::INVALID_REQUEST, message, id))
        };
        match self.top {
            Kind::Object => {}
            Kind::Array => {
                return invalid(
                    "batch requests are not supported: send each JSON-RPC request as its own \
                     message"
                        .into(),
                    None,
                )
            }
            _ => {
                return invalid(
                    "a JSON-RPC message is a JSON object with \"jsonrpc\": \"2.0\"".into(),
                    None,
                )
            }
        }
        let id = match self.id {
            IdFact::Absent => None,
            IdFact::Valid(id) => Some(id),
            IdFact::Invalid(what) => {
                return invalid(
                    format!(
                        "the id is {what}: send a string of at most {MAX_ID_BYTES} bytes or an \
                         integer"
                    ),
                    None,
                )
            }
        };
        // A refused response is answered without the id: it was the server's.
        let reply_id = match self.method {
            MethodFact::Absent => None,
            _ => id.clone(),
        };
        if let Some(member) = self.duplicate {
            return invalid(
                format!("the member {member:?} appears more than once: send it once"),
                reply_id,
            );
        }
        if self.too_deep {
            return invalid(
                format!(
                    "the message nests deeper than {MAX_DEPTH} levels: send arguments that \
                     nest less deeply"
                ),
                reply_id,
            );
        }
        if self.jsonrpc != Some(true) {
            return invalid("the message needs \"jsonrpc\": \"2.0\"".into(), reply_id);
        }
        let method = match self.method {
            MethodFact::Invalid => {
                return invalid(
                    format!("the method must be a string of at most {MAX_METHOD_BYTES} bytes"),
                    reply_id,
                )
            }
            MethodFact::Absent => {
                let response = match (self.result, self.error) {
                    (Some(_), None) => true,
                    (None, Some(kind)) => kind == Kind::Object,
                    _ => false,
                };
                if response && id.is_some() {
                    return Ok(Frame::Response);
                }
                return invalid(
                    "the message has no method: a request needs \"method\" and \"id\", a \
                     notification \"method\", a response \"id\" and one of \"result\" and \
                     \"error\""
                        .into(),
                    None,
                );
            }
            MethodFact::Valid(m) => m,
        };
        if self.result.is_some() || self.error.is_some() {
            return invalid(
                "a request or notification carries no \"result\" or \"error\"".into(),
                reply_id,
            );
        }
        let params = |message: &str| {
            Err(Refusal::new(
                ErrorCode::INVALID_PARAMS,
                message.to_string(),
                reply_id.clone(),
            ))
        };
        if self.params.is_some_and(|k| k != Kind::Object) {
            return params("params must be an object (MCP has no positional params)");
        }
        let Some(id) = id else {
            return Ok(Frame::Notification);
        };
        if method == Method::ToolsCall {
            if self.params.is_none() {
                return params("tools/call needs params: {\"name\": TOOL, \"arguments\": {...}}");
            }
            if self.name != Some(Kind::String) {
                return params(
                    "tools/call params.name must be a string naming one of the listed tools",
                );
            }
            if !matches!(self.arguments, None | Some(Kind::Null | Kind::Object)) {
                return params(
                    "tools/call params.arguments must be an object of the tool's arguments",
                );
            }
        }
        Ok(Frame::Request { id, method })
    }

    fn seen(&mut self, member: &'static str, was: bool) {
        if was && self.duplicate.is_none() {
            self.duplicate = Some(member);
        }
    }
}

/// The whole message.
struct Top<'f>(&'f mut Facts);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let facts = self.0;
        facts.top = Kind::Object;
        while let Some(key) = map.next_key::<TopKey>()? {
            match key {
                TopKey::Id => {
                    facts.seen("id", !matches!(facts.id, IdFact::Absent));
                    let id = map.next_value_seed(IdSeed {
                        too_deep: &mut facts.too_deep,
                    })?;
                    if matches!(facts.id, IdFact::Absent) {
                        facts.id = id;
                    }
                }
                TopKey::Jsonrpc => {
                    facts.seen("jsonrpc", facts.jsonrpc.is_some());
                    let (kind, two) = map.next_value_seed(StrSeed {
                        depth: 2,
                        too_deep: &mut facts.too_deep,
                        want: Want::Version,
                    })?;
                    let ok = kind == Kind::String && two == Some(Method::Other);
                    facts.jsonrpc.get_or_insert(ok);
                }
                TopKey::Method => {
                    facts.seen("method", !matches!(facts.method, MethodFact::Absent));
                    let (kind, method) = map.next_value_seed(StrSeed {
                        depth: 2,
                        too_deep: &mut facts.too_deep,
                        want: Want::Method,
                    })?;
                    if matches!(facts.method, MethodFact::Absent) {
                        facts.method = match (kind, method) {
                            (Kind::String, Some(m)) => MethodFact::Valid(m),
                            _ => MethodFact::Invalid,
                        };
                    }
                }
                TopKey::Params => {
                    facts.seen("params", facts.params_seen);
                    let shape = map.next_value_seed(ParamsSeed {
                        too_deep: &mut facts.too_deep,
                    })?;
                    // `"params": null` is read as no params, as rmcp does
                    if !std::mem::replace(&mut facts.params_seen, true) && shape.kind != Kind::Null
                    {
                        facts.params = Some(shape.kind);
                        facts.name = shape.name;
                        facts.arguments = shape.arguments;
                    }
                }
                TopKey::Result | TopKey::Error => {
                    let is_result = matches!(key, TopKey::Result);
                    let slot = if is_result {
                        facts.seen("result", facts.result.is_some());
                        &mut facts.result
                    } else {
                        facts.seen("error", facts.error.is_some());
                        &mut facts.error
                    };
                    let kind = map.next_value_seed(Walk {
                        depth: 2,
                        too_deep: &mut facts.too_deep,
                    })?;
                    slot.get_or_insert(kind);
                }
                TopKey::Other => {
                    map.next_value_seed(Walk {
                        depth: 2,
                        too_deep: &mut facts.too_deep,
                    })?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.top = Kind::Array;
        // read to the end (so broken JSON is still a parse error), iteratively
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.0.top = Kind::Bool;
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.0.top = Kind::Number;
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.0.top = Kind::Number;
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.0.top = Kind::Number;
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.0.top = Kind::String;
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.top = Kind::Null;
        Ok(())
    }
}

/// A member name of the message.
enum TopKey {
    Id,
    Jsonrpc,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> de::Deserialize<'de> for TopKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TopKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, s: &str) -> Result<TopKey, E> {
                Ok(match s {
                    "id" => TopKey::Id,
                    "jsonrpc" => TopKey::Jsonrpc,
                    "method" => TopKey::Method,
                    "params" => TopKey::Params,
                    "result" => TopKey::Result,
                    "error" => TopKey::Error,
                    _ => TopKey::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// Any value at `depth` (a container there is level `depth`): its kind, every container
/// below it visited to [`MAX_DEPTH`] and skipped, iteratively, beyond.
struct Walk<'f> {
    depth: usize,
    too_deep: &'f mut bool,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Kind;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Kind, A::Error> {
        walk_map(map, self.depth, self.too_deep)?;
        Ok(Kind::Object)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Kind, A::Error> {
        walk_seq(seq, self.depth, self.too_deep)?;
        Ok(Kind::Array)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Bool)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::String)
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
}

/// The members of an object at `depth`.
fn walk_map<'de, A: MapAccess<'de>>(
    mut map: A,
    depth: usize,
    too_deep: &mut bool,
) -> Result<(), A::Error> {
    if depth > MAX_DEPTH {
        *too_deep = true;
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        return Ok(());
    }
    while map.next_key::<IgnoredAny>()?.is_some() {
        map.next_value_seed(Walk {
            depth: depth + 1,
            too_deep,
        })?;
    }
    Ok(())
}

/// The elements of an array at `depth`.
fn walk_seq<'de, A: SeqAccess<'de>>(
    mut seq: A,
    depth: usize,
    too_deep: &mut bool,
) -> Result<(), A::Error> {
    if depth > MAX_DEPTH {
        *too_deep = true;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        return Ok(());
    }
    while seq
        .next_element_seed(Walk {
            depth: depth + 1,
            too_deep,
        })?
        .is_some()
    {}
    Ok(())
}

/// The `id` member.
struct IdSeed<'f> {
    too_deep: &'f mut bool,
}

impl<'de> DeserializeSeed<'de> for IdSeed<'_> {
    type Value = IdFact;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<IdFact, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed<'_> {
    type Value = IdFact;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request id")
    }

    fn visit_str<E>(self, s: &str) -> Result<IdFact, E> {
        Ok(if s.len() > MAX_ID_BYTES {
            IdFact::Invalid("a string longer than the limit")
        } else {
            IdFact::Valid(RequestId::String(s.into()))
        })
    }
    fn visit_i64<E>(self, n: i64) -> Result<IdFact, E> {
        Ok(IdFact::Valid(RequestId::Number(n)))
    }
    fn visit_u64<E>(self, n: u64) -> Result<IdFact, E> {
        Ok(match i64::try_from(n) {
            Ok(n) => IdFact::Valid(RequestId::Number(n)),
            Err(_) => IdFact::Invalid("an integer beyond 64 bits"),
        })
    }
    fn visit_f64<E>(self, _: f64) -> Result<IdFact, E> {
        Ok(IdFact::Invalid(
            "a number that is not written as an integer",
        ))
    }
    fn visit_bool<E>(self, _: bool) -> Result<IdFact, E> {
        Ok(IdFact::Invalid("a boolean"))
    }
    fn visit_unit<E>(self) -> Result<IdFact, E> {
        Ok(IdFact::Invalid(
            "null (MCP requests need an id that is not null)",
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<IdFact, A::Error> {
        walk_map(map, 2, self.too_deep)?;
        Ok(IdFact::Invalid("an object"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<IdFact, A::Error> {
        walk_seq(seq, 2, self.too_deep)?;
        Ok(IdFact::Invalid("an array"))
    }
}

/// What a string member is read for.
#[derive(Clone, Copy)]
enum Want {
    /// `jsonrpc`: `Some(Method::Other)` stands for "2.0".
    Version,
    Method,
}

/// `jsonrpc` or `method`: the kind, and for a string what it names.
struct StrSeed<'f> {
    depth: usize,
    too_deep: &'f mut bool,
    want: Want,
}

impl<'de> DeserializeSeed<'de> for StrSeed<'_> {
    type Value = (Kind, Option<Method>);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrSeed<'_> {
    type Value = (Kind, Option<Method>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        let named = match self.want {
            Want::Version => (s == "2.0").then_some(Method::Other),
            Want::Method if s.len() > MAX_METHOD_BYTES => None,
            Want::Method => Some(match s {
                "initialize" => Method::Initialize,
                "tools/call" => Method::ToolsCall,
                _ => Method::Other,
            }),
        };
        Ok((Kind::String, named))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok((Kind::Bool, None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok((Kind::Number, None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok((Kind::Number, None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok((Kind::Number, None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Kind::Null, None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        walk_map(map, self.depth, self.too_deep)?;
        Ok((Kind::Object, None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        walk_seq(seq, self.depth, self.too_deep)?;
        Ok((Kind::Array, None))
    }
}

/// The shape of `params`: its kind, and for an object the kinds of `name` and `arguments`.
#[derive(Default)]
struct ParamsShape {
    kind: Kind,
    name: Option<Kind>,
    arguments: Option<Kind>,
}

struct ParamsSeed<'f> {
    too_deep: &'f mut bool,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_> {
    type Value = ParamsShape;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ParamsShape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'_> {
    type Value = ParamsShape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("params")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamsShape, A::Error> {
        let mut shape = ParamsShape {
            kind: Kind::Object,
            ..ParamsShape::default()
        };
        // params is level 2; its members' containers are level 3
        while let Some(key) = map.next_key::<ParamKey>()? {
            let kind = map.next_value_seed(Walk {
                depth: 3,
                too_deep: self.too_deep,
            })?;
            match key {
                ParamKey::Name => {
                    shape.name.get_or_insert(kind);
                }
                ParamKey::Arguments => {
                    shape.arguments.get_or_insert(kind);
                }
                ParamKey::Other => {}
            }
        }
        Ok(shape)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ParamsShape, A::Error> {
        walk_seq(seq, 2, self.too_deep)?;
        Ok(ParamsShape {
            kind: Kind::Array,
            ..ParamsShape::default()
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::Bool))
    }
    fn visit_i64<E>(self, _: i64) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::Number))
    }
    fn visit_u64<E>(self, _: u64) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::Number))
    }
    fn visit_f64<E>(self, _: f64) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::Number))
    }
    fn visit_str<E>(self, _: &str) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::String))
    }
    fn visit_unit<E>(self) -> Result<ParamsShape, E> {
        Ok(scalar(Kind::Null))
    }
}

/// A member name of `params`.
enum ParamKey {
    Name,
    Arguments,
    Other,
}

impl<'de> de::Deserialize<'de> for ParamKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ParamKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, s: &str) -> Result<ParamKey, E> {
                Ok(match s {
                    "name" => ParamKey::Name,
                    "arguments" => ParamKey::Arguments,
                    _ => ParamKey::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

fn scalar(kind: Kind) -> ParamsShape {
    ParamsShape {
        kind,
        ..ParamsShape::default()
    }
}
