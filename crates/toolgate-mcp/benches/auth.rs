//! The added cost of an OAuth access token per request: the resource server verifying an
//! RS256 JWT (its key fetched once from a JWKS endpoint on 127.0.0.1 and kept) against the
//! guard comparing the static bearer token, in the same run. Everything else a tools/call
//! costs is the same for both.
//!
//! `jwt_rs256_same_token` is a caller's steady state: the same token on every request, known
//! after its first verification (its SHA-256 and `exp` checked). `jwt_rs256_first_use` is the
//! full verification a token gets the first time it is seen (and after a JWKS refresh or a
//! minute): each of a pool of distinct tokens, minted beforehand, verified once per pass by a
//! fresh resource server, so no iteration finds its token already verified.
//!
//! `cargo bench -p toolgate-mcp --bench auth`

use criterion::{criterion_group, criterion_main, Criterion};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use std::hint::black_box;
use toolgate_mcp::http::auth::{AuthConfig, ResourceServer};
use toolgate_mcp::http::guard::Guard;

/// A 2048-bit RSA key made for this benchmark only (it signs nothing else).
const KEY: &str = "-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAkzy7R3L2WcrofEhToM36Mx9S51lZhu+RBsPmkPbMrFgfpNBH
HXO+jQkACMQ14Im9dSuE449oKU79ZkL/72CW3oV+ka8VtlXJjNNgjqjprNBGk36R
0jTG3cerczXecEw7tzY4RYtZ+WqJW2WA2CkilnFejzWXjAgTIUduJw8zDLMSTTgL
KTlywx+r6RqL2NJXRl1ABwgmGXcIaF35AoVbEPJPyLNNS0KE55zoUFv2g70BI00k
GFxD8YBQk6a9wbmk3jylCXpWxMAjwTzEbqcJe5YBTBfMAuCKRRiEH+86nxU3x0qi
o7egVV35DtAmaw49VCHH7hZQ05DvCXwBAjwgkQIDAQABAoIBACdnnAmRs2uxmcnV
Q4hoR9tRuUrQR10NFYe1eyn12y4OwZ1G3pl7xhYRwBAYjwDCbFGE7aJHWY2gpcGu
Ebf7ZjU0jfyoWou7Zt8JHTDg9PT6osDLoXQcCtMFIpYJZzgvttWgLawzEMfnIs6y
mip/y9FukuuJ4L6p1JDWAJ10fGmbxUotnMhxzSCAfrp+pVtJOFygeQTO0gPVhNPi
wa3tyYNa/vqkiX0yVU0ZLm2fJAcHc8viJMW9RKhsEWcEw3A1GJwoNtq+5v49L8Ti
uTegSHVsMo0v0gIrOrI7vMXPfj7l33KoE76AAps4v8e/MJ//lIX7XV+KppO0M5KA
tUBGBrcCgYEAxrGUNy+nc6KgOLSFLXAWIJO20WHpU6pgO21I6QUkm12aep+TEGza
XJQwC3wUwLWiMnZ8WlkpdhvuszOCJK6AKdnskHo7H00Kq6FZNHt6eqMwUd4eKYVp
JSNdQ1X+BoHHcWUx18xa60pA8egECEuSz8Y4dbivPsSS97RXxR7WwisCgYEAvbPm
OV6wBMzbF7SgHQOwRbRS4J4/imq3mS6rVoyzPoFaWlJjNTeeMMj4rHoN5fUNrlzc
kl9tvEIilMFtfThCq9BKDVmTN+OJ6m+8AbP/M2pQkNa+kheSIt4/4ioo9UKOstMa
ZjmlN3ssZaiGEV0YNr8x9zaqL9I4FtWSWNErVjMCgYA51MfiBCHF+2iM+KXmosAd
/UBx0wC5lFZsFZPqFtAf1G+5Dycb2cL4vTz6qsPTj0pFS81H8rmpodmpGO3hRVUS
WVaMercoliDr8YtoRiRQ+5x9x5uZ1DXVVGS5y5ajSDTHoX+PYvB3mWYrwq8hxvVV
OkmGohmHuGlaZYhCXIZ/fwKBgQC1FSgb9W3ydxZgz5PTfnTiZNqD/atL1sjBWZJG
gPKNJO75rxFyeE/x47W09qGTtFNF8PDAbIWUolDeTLHWSUEjPyWhDrOAMxywg84k
lgxyqPaU+9hYHlXqINs8aeBFFi6fNvJJSJeUmWhs9excYNA/Wk043Z6hHXtbGK2l
SK2kjwKBgQCS2lnluXNwp8B3CqTQ8fJOKh/1jCB7eWmZOtODb62Wjkln11vp1KYQ
KkU9mdKfqbI9CIk1TLisxZ5nyJOZOVD8C9E0RhUyAqga/e+wz22SVnKTQXggU53D
cKpcZLA7oJi6BjO9bqMHAHPWjRAGf6kWsmQSvDW6MzNoqB98UhUpjg==
-----END RSA PRIVATE KEY-----";
/// Its modulus, base64url.
const N: &str = "kzy7R3L2WcrofEhToM36Mx9S51lZhu-RBsPmkPbMrFgfpNBHHXO-jQkACMQ14Im9dSuE449oKU79ZkL_72CW3oV-ka8VtlXJjNNgjqjprNBGk36R0jTG3cerczXecEw7tzY4RYtZ-WqJW2WA2CkilnFejzWXjAgTIUduJw8zDLMSTTgLKTlywx-r6RqL2NJXRl1ABwgmGXcIaF35AoVbEPJPyLNNS0KE55zoUFv2g70BI00kGFxD8YBQk6a9wbmk3jylCXpWxMAjwTzEbqcJe5YBTBfMAuCKRRiEH-86nxU3x0qio7egVV35DtAmaw49VCHH7hZQ05DvCXwBAjwgkQ";

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let jwks = serde_json::json!({"keys": [{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256", "n": N, "e": "AQAB"}]}).to_string();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move { jwks }
        }),
    );
    rt.spawn(async move { axum::serve(listener, app).await });
    let issuer = format!("http://{addr}/");
    let resource = "http://127.0.0.1:8765/mcp".to_string();
    let rs = fresh_server(&issuer, &addr, &resource);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("k1".into());
    let token = jsonwebtoken::encode(
        &header,
        &serde_json::json!({"iss": issuer, "sub": "alice", "aud": resource, "exp": now + 3600, "scope": "mcp:tools", "groups": ["a"]}),
        &EncodingKey::from_rsa_pem(KEY.as_bytes()).unwrap(),
    )
    .unwrap();
    // the key is fetched once, here
    rt.block_on(rs.verify(&token)).expect("the token verifies");
    let mut g = c.benchmark_group("auth");
    g.bench_function("jwt_rs256_same_token", |b| {
        b.iter(|| rt.block_on(rs.verify(black_box(&token))).unwrap())
    });
    // distinct tokens (another `jti` each), each verified once by a resource server that has
    // its keys but has seen none of them
    let pool: Vec<String> = (0..POOL)
        .map(|i| {
            jsonwebtoken::encode(
                &header,
                &serde_json::json!({"iss": issuer, "sub": "alice", "aud": resource, "exp": now + 3600, "scope": "mcp:tools", "groups": ["a"], "jti": i.to_string()}),
                &EncodingKey::from_rsa_pem(KEY.as_bytes()).unwrap(),
            )
            .unwrap()
        })
        .collect();
    g.bench_function("jwt_rs256_first_use", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let fresh = fresh_server(&issuer, &addr, &resource);
                rt.block_on(fresh.verify(&token))
                    .expect("the keys are fetched");
                let n = left.min(POOL as u64) as usize;
                let start = std::time::Instant::now();
                for t in &pool[..n] {
                    rt.block_on(fresh.verify(black_box(t))).unwrap();
                }
                total += start.elapsed();
                left -= n as u64;
            }
            total
        })
    });
    let guard = Guard::new(
        "127.0.0.1:8765".parse().unwrap(),
        Some("s3cret-static-token-of-64-hex-characters-0123456789abcdef01234567".into()),
        &[],
        &[],
    );
    let mut headers = http::HeaderMap::new();
    headers.insert("host", "127.0.0.1:8765".parse().unwrap());
    headers.insert(
        "authorization",
        "Bearer s3cret-static-token-of-64-hex-characters-0123456789abcdef01234567"
            .parse()
            .unwrap(),
    );
    g.bench_function("static_token", |b| {
        b.iter(|| guard.check(black_box(&headers), None).unwrap())
    });
    g.finish();
}

/// Distinct tokens verified per pass of `jwt_rs256_first_use`.
const POOL: usize = 256;

/// A resource server for `issuer` taking its keys from the bench's JWKS endpoint at `addr`.
fn fresh_server(issuer: &str, addr: &std::net::SocketAddr, resource: &str) -> ResourceServer {
    let mut config = AuthConfig::new(issuer.to_string());
    config.jwks_uri = Some(format!("http://{addr}/jwks"));
    ResourceServer::new(config, resource.to_string()).unwrap()
}

criterion_group!(benches, bench);
criterion_main!(benches);
