use super::ranges::{classify, BlockedRange, Embedding};
use super::*;
use pretty_assertions::assert_eq;

/// The reason `url` is refused by `policy`, or `"ok"`.
fn verdict(policy: &EgressPolicy, url: &str) -> &'static str {
    match policy.check_url(url) {
        Ok(_) => "ok",
        Err(b) => b.reason(),
    }
}

/// Every spelling of a blocked address the URL standard accepts is the address it names.
#[test]
fn blocked_hosts_in_every_spelling() {
    let policy = EgressPolicy::new();
    let cases: &[(&str, &str)] = &[
        // loopback, as the security case and its relatives write it
        ("http://127.0.0.1:9/admin", "127.0.0.1"),
        ("http://0177.0.0.1:9/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0X7F.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
        ("http:\\\\127.0.0.1\\x", "127.0.0.1"),
        ("http://127.0.0.1\\@example.com/", "127.0.0.1"),
        ("HTTP://127.0.0.1/", "127.0.0.1"),
        ("  http://127.0.0.1/  ", "127.0.0.1"),
        ("http://127.255.255.254/", "127.255.255.254"),
        // ssrf_ip_encoding: digits and dots of other scripts that the URL standard's IDNA
        // mapping turns into ASCII, and zero-padded parts
        (
            "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
            "127.0.0.1",
        ),
        ("http://127\u{3002}0\u{3002}0\u{3002}1/", "127.0.0.1"),
        ("http://127\u{ff0e}0\u{ff0e}0\u{ff0e}1/", "127.0.0.1"),
        (
            "http://\u{2460}\u{2461}\u{2466}.\u{24ea}.\u{24ea}.\u{2460}/",
            "127.0.0.1",
        ),
        ("http://127.000.000.001/", "127.0.0.1"),
        ("http://0x7f.0x0.0x0.0x1/", "127.0.0.1"),
        ("http://0251.0376.0251.0376/", "169.254.169.254"),
        ("http://[::ffff:a9fe:a9fe]/", "::ffff:169.254.169.254"),
        ("http://[::1]/", "::1"),
        ("http://[0:0:0:0:0:0:0:1]/", "::1"),
        ("http://[::]/", "::"),
        ("http://0.0.0.0/", "0.0.0.0"),
        ("http://0/", "0.0.0.0"),
        // IPv4 carried in IPv6
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
        ("http://[0:0:0:0:0:ffff:10.0.0.1]/", "::ffff:10.0.0.1"),
        ("http://[::127.0.0.1]/", "::7f00:1"),
        ("http://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1"),
        ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"),
        ("http://[64:ff9b:1::8.8.8.8]/", "64:ff9b:1::808:808"),
        ("http://[2002:7f00:1::1]/", "2002:7f00:1::1"),
        ("http://[2002:c0a8:101::]/", "2002:c0a8:101::"),
        (
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
        ),
        // private, link-local, shared, metadata, and the rest
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://172.16.0.1/", "172.16.0.1"),
        ("http://172.31.255.255/", "172.31.255.255"),
        ("http://192.168.0.1/", "192.168.0.1"),
        ("http://100.64.0.1/", "100.64.0.1"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://169.254.170.2/v2/credentials", "169.254.170.2"),
        ("http://100.100.100.200/", "100.100.100.200"),
        ("http://168.63.129.16/", "168.63.129.16"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
        ("http://[fd00::1]/", "fd00::1"),
        ("http://[fe80::1]/", "fe80::1"),
        ("http://[fec0::1]/", "fec0::1"),
        ("http://224.0.0.1/", "224.0.0.1"),
        ("http://[ff02::1]/", "ff02::1"),
        ("http://255.255.255.255/", "255.255.255.255"),
        ("http://240.0.0.1/", "240.0.0.1"),
        ("http://192.0.2.1/", "192.0.2.1"),
        ("http://198.51.100.7/", "198.51.100.7"),
        ("http://203.0.113.9/", "203.0.113.9"),
        ("http://[2001:db8::1]/", "2001:db8::1"),
        ("http://[3fff::1]/", "3fff::1"),
        ("http://198.18.0.1/", "198.18.0.1"),
        ("http://192.0.0.192/", "192.0.0.192"),
        ("http://[100::1]/", "100::1"),
    ];
    for (url, addr) in cases {
        match policy.check_url(url) {
            Err(Blocked::PrivateAddress {
                addr: got,
                resolved: false,
                ..
            }) => assert_eq!(got.to_string(), *addr, "{url}"),
            other => panic!("{url}: {other:?}"),
        }
    }
}

/// `localhost` and the names below it are loopback without asking a resolver (RFC 6761),
/// whatever their spelling.
#[test]
fn localhost_names_are_loopback() {
    let policy = EgressPolicy::new();
    for url in [
        "http://localhost/",
        "http://LOCALHOST./",
        "http://api.localhost:8080/",
        "http://\u{24db}ocalhost/",
        "http://loc%61lhost/",
        "http://localhost%2e/",
        "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}/",
        "http://x.y.LocalHost./",
    ] {
        assert_eq!(verdict(&policy, url), "private_address", "{url}");
    }
    assert_eq!(verdict(&policy, "http://localhost.example.com/"), "ok");
    assert_eq!(verdict(&policy, "http://notlocalhost/"), "ok");
}

#[test]
fn schemes_other_than_http_and_https_are_refused() {
    let policy = EgressPolicy::new();
    for url in [
        "file:///etc/hostname",
        "FiLe:///etc/hostname",
        "file://localhost/etc/passwd",
        "gopher://127.0.0.1:70/_GET",
        "ftp://example.com/x",
        "data:text/plain,hello",
        "DATA:text/html;base64,PGI+",
        "javascript:alert(1)",
        "ws://example.com/",
        "jar:http://example.com/x.jar!/",
        "dict://127.0.0.1:11211/",
    ] {
        assert_eq!(verdict(&policy, url), "scheme_not_allowed", "{url}");
    }
}

#[test]
fn what_is_not_an_absolute_url_is_invalid() {
    let policy = EgressPolicy::new();
    for url in [
        "",
        "example.com",
        "//example.com/",
        "/etc/passwd",
        "http://",
        "http://[fe80::1%25eth0]/",
        "http://[::1%eth0]/",
        "http://exa mple.com/",
        "http://256.256.256.256/",
        "http://[::ffff:127.0.0.1/",
        "http://example.com:99999/",
    ] {
        assert_eq!(verdict(&policy, url), "invalid_url", "{url:?}");
    }
    // a long text is quoted cut
    let long = format!("x{}", "a".repeat(10_000));
    let msg = policy.check_url(&long).unwrap_err().to_string();
    assert!(msg.len() < 600, "{msg}");
}

#[test]
fn credentials_in_the_url_are_refused() {
    let policy = EgressPolicy::new();
    for url in [
        "http://user:pass@example.com/",
        "http://user@example.com/",
        "http://:pass@example.com/",
        "http://example.com@127.0.0.1/",
    ] {
        assert_eq!(verdict(&policy, url), "credentials_in_url", "{url}");
    }
}

#[test]
fn public_addresses_and_names_pass() {
    let policy = EgressPolicy::new();
    for url in [
        "https://example.com/",
        "http://example.com:8080/a?b=c#d",
        "https://xn--bcher-kva.example/",
        "https://b\u{fc}cher.example/",
        "http://93.184.216.34/",
        "http://8.8.8.8/",
        "http://[2606:4700:4700::1111]/",
        "http://[::ffff:8.8.8.8]/",
        "http://[64:ff9b::8.8.8.8]/",
        "http://[2002:808:808::1]/",
        "http://172.32.0.1/",
        "http://100.128.0.1/",
        "http://11.0.0.1/",
    ] {
        assert_eq!(verdict(&policy, url), "ok", "{url}");
    }
}

#[test]
fn classification_names_the_range_and_the_embedded_address() {
    let c = |s: &str| classify(s.parse().unwrap());
    assert_eq!(c("127.0.0.1").unwrap().range, BlockedRange::Loopback);
    assert_eq!(
        c("169.254.169.254").unwrap().range,
        BlockedRange::CloudMetadata
    );
    assert_eq!(c("169.254.1.1").unwrap().range, BlockedRange::LinkLocal);
    assert_eq!(
        c("100.64.0.1").unwrap().range,
        BlockedRange::SharedAddressSpace
    );
    assert_eq!(c("fd00::1").unwrap().range, BlockedRange::UniqueLocal);
    assert_eq!(c("255.255.255.255").unwrap().range, BlockedRange::Broadcast);
    let mapped = c("::ffff:10.1.2.3").unwrap();
    assert_eq!(mapped.range, BlockedRange::Private);
    assert_eq!(
        mapped.embedded,
        Some((Embedding::Mapped, "10.1.2.3".parse().unwrap()))
    );
    // Teredo: the client's address is stored inverted
    let teredo = c("2001:0:4136:e378:8000:63bf:80ff:fffe").unwrap();
    assert_eq!(
        teredo.embedded,
        Some((Embedding::Teredo, "127.0.0.1".parse().unwrap()))
    );
    // a Teredo address whose server is private is blocked too
    assert!(c("2001:0:a00:1::").is_some());
    assert_eq!(c("2001:4860::1"), None);
    assert_eq!(c("1.1.1.1"), None);
}

/// The operator's ranges open exactly what they contain, through IPv6 embeddings too; a
/// metadata address only by its own `/32`.
#[test]
fn allowed_ranges_open_what_they_name() {
    let policy = EgressPolicy::new().allow_private([
        "127.0.0.2/32".parse().unwrap(),
        "10.1.0.0/16".parse().unwrap(),
        "169.254.0.0/16".parse().unwrap(),
    ]);
    assert_eq!(verdict(&policy, "http://127.0.0.2:8080/"), "ok");
    assert_eq!(verdict(&policy, "http://[::ffff:127.0.0.2]/"), "ok");
    assert_eq!(verdict(&policy, "http://127.0.0.1/"), "private_address");
    assert_eq!(verdict(&policy, "http://10.1.200.3/"), "ok");
    assert_eq!(verdict(&policy, "http://10.2.0.1/"), "private_address");
    assert_eq!(verdict(&policy, "http://169.254.1.1/"), "ok");
    assert_eq!(
        verdict(&policy, "http://169.254.169.254/"),
        "private_address"
    );
    let metadata = EgressPolicy::new().allow_private(["169.254.169.254/32".parse().unwrap()]);
    assert_eq!(verdict(&metadata, "http://169.254.169.254/"), "ok");
    // every provider's metadata address stays shut under ranges that cover everything,
    // in its embeddings too
    let open =
        EgressPolicy::new().allow_private(["0.0.0.0/0".parse().unwrap(), "::/0".parse().unwrap()]);
    for url in [
        "http://169.254.169.254/",
        "http://169.254.170.2/",
        "http://169.254.170.23/",
        "http://100.100.100.200/",
        "http://168.63.129.16/",
        "http://169.254.42.42/",
        "http://169.254.0.23/",
        "http://192.0.0.192/",
        "http://[::ffff:169.254.42.42]/",
        "http://[fd00:ec2::254]/",
        "http://[fd00:ec2::23]/",
        "http://[fd20:ce::254]/",
        "http://[fd00:42::42]/",
    ] {
        assert_ne!(verdict(&open, url), "ok", "{url}");
    }
    assert_eq!(verdict(&open, "http://169.254.42.43/"), "ok");
    // localhost needs both loopback answers opened
    assert_eq!(verdict(&policy, "http://localhost/"), "private_address");
    let loopback = EgressPolicy::new()
        .allow_private(["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()]);
    assert_eq!(verdict(&loopback, "http://localhost/"), "ok");
    // a Teredo address carries two IPv4 addresses: opening one (the server, 127.0.0.2)
    // leaves the other (the client, 10.0.0.1, stored inverted) blocked
    assert_eq!(
        verdict(&policy, "http://[2001:0:7f00:2::f5ff:fffe]/"),
        "private_address"
    );
    let both = EgressPolicy::new().allow_private([
        "127.0.0.2/32".parse().unwrap(),
        "10.0.0.1/32".parse().unwrap(),
    ]);
    assert_eq!(verdict(&both, "http://[2001:0:7f00:2::f5ff:fffe]/"), "ok");
}

/// The IPv4-translated form of SIIT (`::ffff:0:a.b.c.d`, RFC 2765 §2.1), beside the mapped
/// and compatible ones, is the IPv4 address it carries.
#[test]
fn translated_addresses_are_the_address_they_carry() {
    let policy = EgressPolicy::new();
    for url in [
        "http://[::ffff:0:7f00:1]/",
        "http://[::ffff:0:127.0.0.1]/",
        "http://[0:0:0:0:ffff:0:a9fe:a9fe]/",
    ] {
        assert_eq!(verdict(&policy, url), "private_address", "{url}");
    }
    let c = classify("::ffff:0:a00:1".parse().unwrap()).unwrap();
    assert_eq!(
        (c.range, c.embedded),
        (
            BlockedRange::Private,
            Some((Embedding::Translated, "10.0.0.1".parse().unwrap()))
        )
    );
    let opened = EgressPolicy::new().allow_private(["127.0.0.2/32".parse().unwrap()]);
    assert_eq!(verdict(&opened, "http://[::ffff:0:7f00:2]/"), "ok");
    // a public IPv4 address so carried is public
    assert_eq!(verdict(&policy, "http://[::ffff:0:808:808]/"), "ok");
}

/// One blocked answer blocks the name; no answer at all is refused too.
#[test]
fn every_answer_is_checked() {
    let policy = EgressPolicy::new().allow_private(["127.0.0.2/32".parse().unwrap()]);
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    assert!(policy
        .check_answers("a.test", &[ip("8.8.8.8"), ip("127.0.0.2")])
        .is_ok());
    let err = policy
        .check_answers("a.test", &[ip("8.8.8.8"), ip("127.0.0.1"), ip("1.1.1.1")])
        .unwrap_err();
    assert_eq!(
        err,
        Blocked::PrivateAddress {
            host: "a.test".into(),
            addr: ip("127.0.0.1"),
            resolved: true,
            why: classify(ip("127.0.0.1")).unwrap(),
        }
    );
    assert_eq!(
        policy.check_answers("a.test", &[]).unwrap_err().reason(),
        "no_address"
    );
}

/// The model's error: `unsafe_input` / `url_blocked`, the sub-reason first in the message,
/// which says what to send instead; the operator's details name the address and range.
#[test]
fn errors_tell_the_model_what_to_send_instead() {
    let policy = EgressPolicy::new();
    let e = policy
        .check_url("http://[::ffff:169.254.169.254]/")
        .unwrap_err()
        .to_tool_error();
    assert_eq!(e.kind, crate::ErrorKind::UnsafeInput);
    assert_eq!(e.reason.as_deref(), Some("url_blocked"));
    assert!(e.message.starts_with("private_address: "), "{}", e.message);
    assert!(
        e.message
            .contains("IPv4-mapped IPv6 address of 169.254.169.254")
            && e.message.contains("cloud instance metadata")
            && e.message.contains("send the URL of a public site instead"),
        "{}",
        e.message
    );
    assert_eq!(
        *e.details.unwrap(),
        serde_json::json!({
            "url_blocked": "private_address",
            "host": "::ffff:169.254.169.254",
            "address": "::ffff:169.254.169.254",
            "range": "cloud_metadata",
            "embedded": "169.254.169.254",
        })
    );
    let e = policy.check_url("gopher://x/").unwrap_err().to_tool_error();
    assert!(
        e.message.starts_with("scheme_not_allowed: gopher: ")
            && e.message.contains("send an http or https URL"),
        "{}",
        e.message
    );
}
