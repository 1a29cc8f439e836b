//! Opaque tokens: OAuth 2.0 Token Introspection (RFC 7662). The token is `POST`ed as
//! `token=…&token_type_hint=access_token` with toolgate's client credentials (HTTP Basic,
//! RFC 7662 §2.1); the answer must say `"active": true` (§2.2) and carry the same claims a JWT
//! would: `iss` the issuer, `aud` one of the audiences (required: a token without an audience
//! could be any resource's), `exp` not past and `nbf` not ahead (within the leeway), a `sub`.

use super::{fetch, Introspection, Refusal};
use serde_json::{Map, Value};

/// The introspected claims of an active token that is this resource's.
///
/// # Errors
/// [`Refusal::Invalid`] for an inactive token or a claim that does not fit;
/// [`Refusal::Unavailable`] when the endpoint cannot be asked (fail closed).
pub(crate) async fn introspect(
    client: &reqwest::Client,
    endpoint: &Introspection,
    token: &str,
) -> Result<Map<String, Value>, Refusal> {
    let request = client
        .post(endpoint.endpoint.as_str())
        .basic_auth(&endpoint.client_id, Some(&endpoint.client_secret))
        .form(&[("token", token), ("token_type_hint", "access_token")]);
    let answer = fetch::json(request).await.map_err(|e| {
        tracing::error!(endpoint = %endpoint.endpoint, error = %e, "token introspection failed; the request is refused");
        Refusal::Unavailable(format!("token introspection failed: {e}"))
    })?;
    let Value::Object(claims) = answer else {
        return Err(Refusal::Unavailable(
            "introspection answered no object".into(),
        ));
    };
    if claims.get("active") != Some(&Value::Bool(true)) {
        return Err(Refusal::Invalid("the token is not active".into()));
    }
    Ok(claims)
}

/// Checks introspected `claims` the way a JWT's are checked: `iss`, `aud`, `exp`, `nbf`.
///
/// # Errors
/// [`Refusal::Invalid`] naming the claim.
pub(crate) fn validate(
    claims: &Map<String, Value>,
    issuer: &str,
    audiences: &[String],
    leeway: u64,
    now: u64,
) -> Result<(), Refusal> {
    let bad = |m: &str| Err(Refusal::Invalid(m.to_string()));
    if claims.get("iss").and_then(Value::as_str) != Some(issuer) {
        return bad("the token's issuer is not this server's authorization server");
    }
    let aud_ok = match claims.get("aud") {
        Some(Value::String(a)) => audiences.iter().any(|x| x == a),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .any(|a| audiences.iter().any(|x| x == a)),
        _ => false,
    };
    if !aud_ok {
        return bad("the token was not issued for this resource (aud)");
    }
    match claims.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp.saturating_add(leeway) > now => {}
        Some(_) => return bad("the token has expired"),
        None => return bad("the token has no expiry (exp)"),
    }
    if let Some(nbf) = claims.get("nbf").and_then(Value::as_u64) {
        if nbf > now.saturating_add(leeway) {
            return bad("the token is not valid yet (nbf)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn introspected_claims_are_checked_like_a_jwts() {
        let aud = ["https://mcp/mcp".to_string()];
        let check = |v: Value| validate(v.as_object().unwrap(), "https://as", &aud, 30, 1000);
        assert_eq!(
            check(json!({"iss": "https://as", "aud": "https://mcp/mcp", "exp": 1001})),
            Ok(())
        );
        assert_eq!(
            check(json!({"iss": "https://as", "aud": ["x", "https://mcp/mcp"], "exp": 980})),
            Ok(()),
            "within the leeway"
        );
        for bad in [
            json!({"iss": "https://other", "aud": "https://mcp/mcp", "exp": 2000}),
            json!({"iss": "https://as", "aud": "https://other/mcp", "exp": 2000}),
            json!({"iss": "https://as", "exp": 2000}),
            json!({"iss": "https://as", "aud": "https://mcp/mcp", "exp": 960}),
            json!({"iss": "https://as", "aud": "https://mcp/mcp"}),
            json!({"iss": "https://as", "aud": "https://mcp/mcp", "exp": 2000, "nbf": 1040}),
        ] {
            assert!(check(bad.clone()).is_err(), "{bad}");
        }
    }
}
