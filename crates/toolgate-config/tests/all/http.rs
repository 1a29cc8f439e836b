//! `[http]`: every bad value is a located problem, good values reach the HTTP tools'
//! configuration, and a credential's unset variable is reported (not its value).

use super::support::load;
use pretty_assertions::assert_eq;
use std::net::SocketAddr;
use std::time::Duration;
use toolgate_test_support::TempWorkspace;
use toolgate_tools::http::HttpConfig;

/// The problems of `text` as `line:column: key: message` lines.
fn problems(text: &str) -> Vec<String> {
    let ws = TempWorkspace::new();
    let errs = load(&ws, text).expect_err("the configuration should be refused");
    errs.iter()
        .map(|p| {
            let prefix = format!("{}:", p.file.display());
            p.to_string().strip_prefix(&prefix).unwrap().to_string()
        })
        .collect()
}

#[test]
fn every_bad_value_is_located_and_says_what_to_write() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[http]\nallow_private = [\"127.0.0.2/33\"]\n",
            "2:18: http.allow_private[0]",
            "CIDR notation",
        ),
        (
            "[http]\nallow_private = [\"localhost\"]\n",
            "2:18: http.allow_private[0]",
            "not an address range",
        ),
        (
            "[http]\nmax_redirects = 21\n",
            "2:17: http.max_redirects",
            "at most 20",
        ),
        (
            "[http]\ntimeout_ms = 0\n",
            "2:14: http.timeout_ms",
            "above 0 ms",
        ),
        (
            "[http]\nconnect_timeout_ms = 600001\n",
            "2:22: http.connect_timeout_ms",
            "at most 600000 ms",
        ),
        (
            "[http]\nmax_bytes = 0\n",
            "2:13: http.max_bytes",
            "above 0 bytes",
        ),
        (
            "[http]\nmax_bytes = 67108865\n",
            "2:13: http.max_bytes",
            "at most 67108864 bytes",
        ),
        (
            "[http]\nnameservers = [\"dns.example\"]\n",
            "2:16: http.nameservers[0]",
            "IP:PORT",
        ),
        (
            "[http.hosts]\n\"api.internal\" = [\"10.1.2.300\"]\n",
            "2:19: http.hosts.api.internal[0]",
            "not an IP address",
        ),
        (
            "[http.hosts]\n\"api.internal\" = []\n",
            "2:18: http.hosts.api.internal",
            "at least one address",
        ),
        (
            "[http.hosts]\n\"10.0.0.1\" = [\"10.0.0.2\"]\n",
            "2:14: http.hosts.10.0.0.1",
            "static answers are for names",
        ),
        (
            "[http.credentials.\"api.example.com\"]\nheader = \"Host\"\nvalue_env = \"T\"\n",
            "2:10: http.credentials.api.example.com.header",
            "set by the HTTP client itself",
        ),
        (
            "[http.credentials.\"api.example.com\"]\nheader = \"Bad Header\"\nvalue_env = \"T\"\n",
            "2:10: http.credentials.api.example.com.header",
            "not a header name",
        ),
        (
            "[http.credentials.\"a b\"]\nheader = \"X-Api-Key\"\nvalue_env = \"T\"\n",
            "1:",
            "not a host",
        ),
        (
            "[http.credentials.\"api.example.com\"]\nheader = \"X-Api-Key\"\nvalue = \"abc\"\n",
            "3:1: http",
            "unknown field `value`",
        ),
        (
            "[http]\nallow_privat = []\n",
            "2:1: http",
            "unknown field `allow_privat`",
        ),
        (
            "[http]\nmax_redirects = -1\n",
            "2:17: http.max_redirects",
            "invalid value",
        ),
    ];
    for (text, at, contains) in cases {
        let p = problems(text);
        assert_eq!(p.len(), 1, "{text}: {p:#?}");
        assert!(p[0].starts_with(at), "{text}: expected at {at}: {}", p[0]);
        assert!(
            p[0].contains(contains),
            "{text}: expected {contains:?}: {}",
            p[0]
        );
    }
}

#[test]
fn good_values_reach_the_http_tools() {
    let ws = TempWorkspace::new();
    std::env::set_var("TOOLGATE_TEST_CFG_HTTP_TOKEN", "Bearer s3cret");
    let config = load(
        &ws,
        "[http]\nallow_private = [\"127.0.0.2/32\", \"10.1.0.0/16\", \"::1\"]\nmax_redirects = 0\n\
         connect_timeout_ms = 1500\ntimeout_ms = 4000\nmax_bytes = 65536\n\
         nameservers = [\"127.0.0.1:5353\", \"::1\"]\n\n\
         [http.hosts]\n\"API.Internal.\" = [\"10.1.2.3\", \"fd00::1\"]\n\n\
         [http.credentials.\"api.example.com\"]\nheader = \"Authorization\"\n\
         value_env = \"TOOLGATE_TEST_CFG_HTTP_TOKEN\"\n",
    )
    .unwrap_or_else(|p| panic!("{p:?}"));
    let http = config.http_config();
    let nets: Vec<String> = http.allow_private.iter().map(ToString::to_string).collect();
    assert_eq!(nets, ["127.0.0.2/32", "10.1.0.0/16", "::1/128"]);
    assert_eq!(http.max_redirects, 0);
    assert_eq!(http.connect_timeout, Duration::from_millis(1500));
    assert_eq!(http.timeout, Duration::from_millis(4000));
    assert_eq!(http.max_bytes, 65536);
    let ns: Vec<SocketAddr> = ["127.0.0.1:5353", "[::1]:53"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(http.nameservers, ns);
    // names are kept as the URL parser reads them: lower case, no trailing dot
    let answers: Vec<String> = http.hosts["api.internal"]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(answers, ["10.1.2.3", "fd00::1"]);
    let cred = &http.credentials["api.example.com"];
    assert_eq!(cred.header, "Authorization");
    assert_eq!(
        cred.value.as_ref().map(|s| s.0.as_str()),
        Some("Bearer s3cret")
    );
    assert!(
        !cred.plain_http,
        "https only unless the entry says plain_http"
    );
    // the value never shows in what is printed about the configuration
    assert!(!format!("{http:?}").contains("s3cret"));
    let tools = super::support::tools();
    let specs: Vec<_> = tools.iter().map(|t| t.spec()).collect();
    let summary = config.summary(&specs).join("\n");
    assert!(
        summary.contains("allow_private 127.0.0.2/32 10.1.0.0/16 ::1/128"),
        "{summary}"
    );
    assert!(
        summary.contains("credentials for api.example.com"),
        "{summary}"
    );
    assert!(!summary.contains("s3cret"), "{summary}");
    assert!(config.missing_credentials().is_empty());
}

#[test]
fn defaults_without_a_table() {
    let ws = TempWorkspace::new();
    let config = load(&ws, "").unwrap();
    assert_eq!(config.http_config(), HttpConfig::default());
}

#[test]
fn a_credential_whose_variable_is_unset_is_a_located_problem() {
    let ws = TempWorkspace::new();
    std::env::remove_var("TOOLGATE_TEST_CFG_HTTP_UNSET");
    let config = load(
        &ws,
        "[http.credentials.\"api.example.com\"]\nheader = \"X-Api-Key\"\n\
         value_env = \"TOOLGATE_TEST_CFG_HTTP_UNSET\"\n",
    )
    .unwrap_or_else(|p| panic!("{p:?}"));
    let missing = config.missing_credentials();
    assert_eq!(missing.len(), 1);
    let shown = missing[0].to_string();
    assert!(
        shown.contains("toolgate.toml:3:13: http.credentials.api.example.com.value_env"),
        "{shown}"
    );
    assert!(shown.contains("TOOLGATE_TEST_CFG_HTTP_UNSET"), "{shown}");
    assert!(shown.contains("credential_missing"), "{shown}");
    // the tools still load: calls to that host fail, others go on
    assert!(config.http_config().credentials["api.example.com"]
        .value
        .is_none());
}
