//! Opaque tokens: OAuth 2.0 Token Introspection (RFC 7662). The token is `POST`ed as
//! `token=…&token_type_hint=access_token` with toolgate's client credentials (HTTP Basic,
//! RFC 7662 §2.1); the answer must say `"active": true` (§2.2) and carry the same claims a JWT
//! would: `iss` the issuer, `aud` one of the audiences (required: a token without an audience
//! could be any resource's), `exp` not past and `nbf` not ahead (within the leeway), a `sub`.

use super::{fetch, Introspection, Refusal};
use serde_json::{Map, Value};
use tokio::sync::Semaphore;

/// The most introspection requests in flight at once, across the server's callers: a flood
/// of made-up opaque tokens (each one an introspection request under toolgate's client
/// credentials) cannot make toolgate flood the authorization server; a request waiting for
/// a turn longer than the authorization server's fetch timeout (5 s) is refused as
/// unavailable (`503`), as when the endpoint is slow.
pub const MAX_IN_FLIGHT: usize = 16;

/// The introspected claims of an active token that is this resource's, asked with at most
/// [`MAX_IN_FLIGHT`] requests of `turns` in flight.
///
/// # Errors
/// [`Refusal::Invalid`] for an inactive token or a claim that does not fit;
/// [`Refusal::Unavailable`] when the endpoint cannot be asked (fail closed), or no turn came
/// within [`fetch::TIMEOUT`].
pub(crate) async fn introspect(
    client: &reqwest::Client,
    endpoint: &Introspection,
    turns: &Semaphore,
    token: &str,
) -> Result<Map<String, Value>, Refusal> {
    let _turn = match tokio::time::timeout(fetch::TIMEOUT, turns.acquire()).await {
        Ok(Ok(turn)) => turn,
        _ => {
            tracing::warn!(endpoint = %endpoint.endpoint, in_flight = MAX_IN_FLIGHT, "token introspections are at their limit; the request is refused");
            return Err(Refusal::Unavailable(
                "too many token introspections in flight; try again shortly".into(),
            ));
        }
    };
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

    /// 40 made-up tokens at once against a slow introspection endpoint (a real one on
    /// 127.0.0.1 that counts the requests it holds): it never holds more than
    /// [`MAX_IN_FLIGHT`], and every token is answered (refused as inactive).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_flood_of_tokens_holds_at_most_max_in_flight_introspections() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (n, m) = (now.clone(), most.clone());
        let app = axum::Router::new().route(
            "/introspect",
            axum::routing::post(move || {
                let (n, m) = (n.clone(), m.clone());
                async move {
                    let held = n.fetch_add(1, Ordering::SeqCst) + 1;
                    m.fetch_max(held, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    n.fetch_sub(1, Ordering::SeqCst);
                    json!({"active": false}).to_string()
                }
            }),
        );
        let addr = fetch::test_server(app).await;
        let endpoint = Introspection {
            endpoint: format!("http://{addr}/introspect"),
            client_id: "toolgate".into(),
            client_secret: "s3cret".into(),
        };
        let (client, turns) = (fetch::client(), Semaphore::new(MAX_IN_FLIGHT));
        let calls = (0..40).map(|i| {
            let (client, endpoint, turns) = (&client, &endpoint, &turns);
            async move { introspect(client, endpoint, turns, &format!("made-up-{i}")).await }
        });
        let answers = futures::future::join_all(calls).await;
        assert!(
            answers
                .iter()
                .all(|a| matches!(a, Err(Refusal::Invalid(_)))),
            "{answers:?}"
        );
        let most = most.load(Ordering::SeqCst);
        assert!(most <= MAX_IN_FLIGHT && most > 1, "{most} held at once");
    }
}
