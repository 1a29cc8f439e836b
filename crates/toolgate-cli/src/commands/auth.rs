//! `[server.auth]` for `toolgate serve`: the resource server's configuration (client
//! credentials read from the environment variables the file names) and the shaping of a
//! verified caller's sessions by the configuration's role mapping.

use anyhow::{bail, Context};
use std::sync::Arc;
use toolgate_config::model::AuthConfig as FileAuth;
use toolgate_config::Config;
use toolgate_mcp::http::auth::{AuthConfig, Introspection, DEFAULT_LEEWAY_SECS};

/// The resource server's configuration from the file's `[server.auth]`.
///
/// # Errors
/// An unset client id or secret variable for introspection.
pub fn auth_config(a: &FileAuth) -> anyhow::Result<AuthConfig> {
    let mut c = AuthConfig::new(a.issuer.clone());
    c.resource = a.resource.clone();
    c.audiences = a.audiences.clone();
    c.jwks_uri = a.jwks_uri.clone();
    c.scopes_supported = a.scopes_supported.clone();
    c.required_scopes = a.required_scopes.clone();
    c.claims = a.claims.clone();
    c.leeway = a.leeway_secs.unwrap_or(DEFAULT_LEEWAY_SECS);
    if !a.algorithms.is_empty() {
        c.algorithms = a
            .algorithms
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()
            .context("[server.auth] algorithms")?;
    }
    if let Some(endpoint) = &a.introspection_endpoint {
        let var = |name: &Option<String>, what: &str| -> anyhow::Result<String> {
            let Some(name) = name else {
                bail!("[server.auth] introspection needs {what}");
            };
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .with_context(|| format!("the environment variable {name} ({what}) is not set"))
        };
        c.introspection = Some(Introspection::new(
            endpoint.clone(),
            var(&a.client_id_env, "client_id_env")?,
            var(&a.client_secret_env, "client_secret_env")?,
        ));
    }
    Ok(c)
}

/// Shapes a verified caller's sessions: [`Config::session_for`] (its role by its claims),
/// `fallback` (the server's profile) without a role.
pub fn shaper(config: Arc<Config>, fallback: String) -> toolgate_mcp::cli::Shaper {
    toolgate_mcp::cli::Shaper(Arc::new(move |identity| {
        let setup = config
            .session_for(&identity.principal, &identity.claims, &fallback)
            .map_err(|e| e.to_string())?;
        Ok(toolgate_mcp::SessionShape {
            profile: setup.profile,
            attributes: setup.attributes.into_iter().collect(),
        })
    }))
}
