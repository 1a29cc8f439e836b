//! The address ranges a tool never connects to unless the operator opens them, and how an
//! address is classified: [`classify`].
//!
//! The ranges are those of the IANA special-purpose address registries (RFC 6890 and its
//! updates) that are not globally reachable, plus the cloud providers' instance metadata
//! addresses. An IPv6 address that carries an IPv4 address (IPv4-mapped, -compatible and
//! -translated, NAT64, 6to4, Teredo) is classified by the IPv4 address it carries, since a connection to it
//! may reach that IPv4 host.

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use serde::Serialize;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is blocked: the special-purpose range it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BlockedRange {
    /// `0.0.0.0/8` ("this network", RFC 791) and `::/128`: on most systems a connection to
    /// them reaches the local host.
    Unspecified,
    /// `127.0.0.0/8` and `::1/128` (RFC 1122, RFC 4291).
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` (RFC 1918).
    Private,
    /// `100.64.0.0/10`, shared address space of carrier-grade NAT (RFC 6598).
    SharedAddressSpace,
    /// `169.254.0.0/16` and `fe80::/10` (RFC 3927, RFC 4291), and the deprecated site-local
    /// `fec0::/10` (RFC 3879).
    LinkLocal,
    /// `fc00::/7`, unique local addresses (RFC 4193).
    UniqueLocal,
    /// `224.0.0.0/4` and `ff00::/8`.
    Multicast,
    /// `255.255.255.255/32` (RFC 919).
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24` (RFC 5737), `2001:db8::/32`
    /// (RFC 3849) and `3fff::/20` (RFC 9637).
    Documentation,
    /// `198.18.0.0/15` and `2001:2::/48` (RFC 2544, RFC 5180).
    Benchmarking,
    /// Reserved or special-purpose ranges that are not globally reachable: `192.0.0.0/24`
    /// (RFC 6890), `192.88.99.0/24` (deprecated 6to4 relays, RFC 7526), `240.0.0.0/4`
    /// (RFC 1112), `100::/64` (discard-only, RFC 6666), `64:ff9b:1::/48` (local-use NAT64,
    /// RFC 8215), ORCHID `2001:10::/28` and `2001:20::/28` (RFC 7343), `5f00::/16` (SRv6 SIDs,
    /// RFC 9602).
    Reserved,
    /// An instance metadata address of a cloud provider (`169.254.169.254`, `169.254.170.2`,
    /// `100.100.100.200`, `168.63.129.16`, `fd00:ec2::254`): opened only by an allow range
    /// that names the address alone (`/32`, `/128`), never by a wider one.
    CloudMetadata,
}

impl BlockedRange {
    /// The range's name in the wire form (`loopback`, `private`, `cloud_metadata`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            BlockedRange::Unspecified => "unspecified",
            BlockedRange::Loopback => "loopback",
            BlockedRange::Private => "private",
            BlockedRange::SharedAddressSpace => "shared_address_space",
            BlockedRange::LinkLocal => "link_local",
            BlockedRange::UniqueLocal => "unique_local",
            BlockedRange::Multicast => "multicast",
            BlockedRange::Broadcast => "broadcast",
            BlockedRange::Documentation => "documentation",
            BlockedRange::Benchmarking => "benchmarking",
            BlockedRange::Reserved => "reserved",
            BlockedRange::CloudMetadata => "cloud_metadata",
        }
    }

    /// The range in words, with its article, for messages: `a loopback address`.
    pub const fn describe(self) -> &'static str {
        match self {
            BlockedRange::Unspecified => "an unspecified address (it reaches the local host)",
            BlockedRange::Loopback => "a loopback address",
            BlockedRange::Private => "a private network address",
            BlockedRange::SharedAddressSpace => "a carrier-grade NAT address",
            BlockedRange::LinkLocal => "a link-local address",
            BlockedRange::UniqueLocal => "a unique local (private IPv6) address",
            BlockedRange::Multicast => "a multicast address",
            BlockedRange::Broadcast => "the broadcast address",
            BlockedRange::Documentation => "a documentation address",
            BlockedRange::Benchmarking => "a benchmarking address",
            BlockedRange::Reserved => "a reserved address",
            BlockedRange::CloudMetadata => "a cloud instance metadata address",
        }
    }
}

impl fmt::Display for BlockedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an IPv6 address carries an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Embedding {
    /// `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2).
    Mapped,
    /// `::a.b.c.d`, deprecated (RFC 4291 §2.5.5.1).
    Compatible,
    /// `::ffff:0:a.b.c.d`, IPv4-translated (SIIT, RFC 2765 §2.1).
    Translated,
    /// `64:ff9b::a.b.c.d`, the well-known NAT64 prefix (RFC 6052).
    Nat64,
    /// `2002:aabb:ccdd::/48` (RFC 3056).
    SixToFour,
    /// `2001:0::/32`, the Teredo server and the client's obfuscated address (RFC 4380 §4).
    Teredo,
}

impl Embedding {
    /// The indefinite article of [`Embedding::describe`]: `an` IPv4-mapped, `a` NAT64.
    pub const fn article(self) -> &'static str {
        match self {
            Embedding::Mapped | Embedding::Compatible | Embedding::Translated => "an",
            Embedding::Nat64 | Embedding::SixToFour | Embedding::Teredo => "a",
        }
    }

    /// The embedding in words, for messages.
    pub const fn describe(self) -> &'static str {
        match self {
            Embedding::Mapped => "IPv4-mapped",
            Embedding::Compatible => "IPv4-compatible",
            Embedding::Translated => "IPv4-translated",
            Embedding::Nat64 => "NAT64",
            Embedding::SixToFour => "6to4",
            Embedding::Teredo => "Teredo",
        }
    }
}

/// Why an address is blocked: its range, and the IPv4 address that put it there when the
/// address is an IPv6 one carrying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Classification {
    /// The range.
    pub range: BlockedRange,
    /// The embedded IPv4 address the range is about, and how it is embedded.
    pub embedded: Option<(Embedding, Ipv4Addr)>,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    match Ipv4Net::new(Ipv4Addr::new(a, b, c, d), len) {
        Ok(n) => n,
        Err(_) => panic!("a valid IPv4 prefix length"),
    }
}

const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    let ip = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    match Ipv6Net::new(ip, len) {
        Ok(n) => n,
        Err(_) => panic!("a valid IPv6 prefix length"),
    }
}

/// The cloud metadata addresses (before the ranges that contain them).
const METADATA_V4: [Ipv4Addr; 8] = [
    Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack, ...
    Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata (container credentials)
    Ipv4Addr::new(169, 254, 170, 23),  // AWS EKS Pod Identity Agent (credentials)
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    Ipv4Addr::new(168, 63, 129, 16),   // Azure wire server (a public address)
    Ipv4Addr::new(169, 254, 42, 42),   // Scaleway instance metadata
    Ipv4Addr::new(169, 254, 0, 23),    // Tencent Cloud metadata
    Ipv4Addr::new(192, 0, 0, 192),     // Oracle Cloud Classic metadata
];
const METADATA_V6: [Ipv6Addr; 4] = [
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), // AWS IMDS over IPv6
    Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23),  // AWS EKS Pod Identity Agent
    Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254),  // GCP metadata over IPv6
    Ipv6Addr::new(0xfd00, 0x42, 0, 0, 0, 0, 0, 0x42),   // Scaleway metadata over IPv6
];

/// The IPv4 ranges, each with why it is blocked.
const V4: [(Ipv4Net, BlockedRange); 16] = [
    (v4(0, 0, 0, 0, 8), BlockedRange::Unspecified),
    (v4(10, 0, 0, 0, 8), BlockedRange::Private),
    (v4(100, 64, 0, 0, 10), BlockedRange::SharedAddressSpace),
    (v4(127, 0, 0, 0, 8), BlockedRange::Loopback),
    (v4(169, 254, 0, 0, 16), BlockedRange::LinkLocal),
    (v4(172, 16, 0, 0, 12), BlockedRange::Private),
    (v4(192, 0, 0, 0, 24), BlockedRange::Reserved),
    (v4(192, 0, 2, 0, 24), BlockedRange::Documentation),
    (v4(192, 88, 99, 0, 24), BlockedRange::Reserved),
    (v4(192, 168, 0, 0, 16), BlockedRange::Private),
    (v4(198, 18, 0, 0, 15), BlockedRange::Benchmarking),
    (v4(198, 51, 100, 0, 24), BlockedRange::Documentation),
    (v4(203, 0, 113, 0, 24), BlockedRange::Documentation),
    (v4(224, 0, 0, 0, 4), BlockedRange::Multicast),
    (v4(255, 255, 255, 255, 32), BlockedRange::Broadcast),
    // after the broadcast address, which it contains
    (v4(240, 0, 0, 0, 4), BlockedRange::Reserved),
];

/// The IPv6 ranges that carry no IPv4 address, each with why it is blocked.
const V6: [(Ipv6Net, BlockedRange); 14] = [
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), BlockedRange::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), BlockedRange::Loopback),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), BlockedRange::Reserved),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        BlockedRange::Reserved,
    ),
    (
        v6([0x2001, 0x2, 0, 0, 0, 0, 0, 0], 48),
        BlockedRange::Benchmarking,
    ),
    (
        v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28),
        BlockedRange::Reserved,
    ),
    (
        v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),
        BlockedRange::Reserved,
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        BlockedRange::Documentation,
    ),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        BlockedRange::Documentation,
    ),
    (
        v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),
        BlockedRange::Reserved,
    ),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        BlockedRange::UniqueLocal,
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        BlockedRange::LinkLocal,
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        BlockedRange::LinkLocal,
    ),
    (
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        BlockedRange::Multicast,
    ),
];

/// The range an IPv4 address is blocked for, or `None` for a globally reachable one.
pub fn classify_v4(ip: Ipv4Addr) -> Option<BlockedRange> {
    if METADATA_V4.contains(&ip) {
        return Some(BlockedRange::CloudMetadata);
    }
    V4.iter()
        .find(|(net, _)| net.contains(&ip))
        .map(|(_, r)| *r)
}

/// The IPv4 addresses an IPv6 address carries (the Teredo server and client, or the one of
/// another embedding), or none.
pub fn embedded_v4(ip: Ipv6Addr) -> ([Option<Ipv4Addr>; 2], Option<Embedding>) {
    let s = ip.segments();
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if s[..5] == [0, 0, 0, 0, 0] && s[5] == 0xffff {
        return ([Some(tail), None], Some(Embedding::Mapped));
    }
    if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        return ([Some(tail), None], Some(Embedding::Translated));
    }
    // `::/96` holds `::` and `::1`, which are their own ranges (checked first by the caller)
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        return ([Some(tail), None], Some(Embedding::Compatible));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return ([Some(tail), None], Some(Embedding::Nat64));
    }
    if s[0] == 0x2002 {
        let v = Ipv4Addr::new(o[2], o[3], o[4], o[5]);
        return ([Some(v), None], Some(Embedding::SixToFour));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        let server = Ipv4Addr::new(o[4], o[5], o[6], o[7]);
        let client = Ipv4Addr::new(!o[12], !o[13], !o[14], !o[15]);
        return ([Some(server), Some(client)], Some(Embedding::Teredo));
    }
    ([None, None], None)
}

/// Why `ip` is blocked, or `None` for a globally reachable address.
///
/// An IPv6 address that carries an IPv4 address is blocked when that IPv4 address is (for
/// Teredo, when the server's or the client's is), and classified by it.
pub fn classify(ip: IpAddr) -> Option<Classification> {
    classify_all(ip).into_iter().flatten().next()
}

/// Every reason `ip` is blocked: its own range, or for an IPv6 address carrying IPv4
/// addresses, the range of each carried address that is blocked (a Teredo address carries
/// two, and opening one leaves the other blocked). Empty for a globally reachable address.
pub fn classify_all(ip: IpAddr) -> [Option<Classification>; 2] {
    let own = |range| Classification {
        range,
        embedded: None,
    };
    match ip {
        IpAddr::V4(v4) => [classify_v4(v4).map(own), None],
        IpAddr::V6(v6) => {
            if METADATA_V6.contains(&v6) {
                return [Some(own(BlockedRange::CloudMetadata)), None];
            }
            if let Some((_, range)) = V6.iter().find(|(net, _)| net.contains(&v6)) {
                return [Some(own(*range)), None];
            }
            let (addrs, how) = embedded_v4(v6);
            let Some(how) = how else {
                return [None, None];
            };
            addrs.map(|a| {
                a.and_then(|a| {
                    classify_v4(a).map(|range| Classification {
                        range,
                        embedded: Some((how, a)),
                    })
                })
            })
        }
    }
}

/// Whether the operator's allow ranges open `ip`, blocked as `why`: some range contains the
/// address (or the IPv4 address it carries); a cloud metadata address only by a range of that
/// one address.
pub fn opened_by(allow: &[IpNet], ip: IpAddr, why: &Classification) -> bool {
    let target = match why.embedded {
        Some((_, v4)) => IpAddr::V4(v4),
        None => ip,
    };
    allow.iter().any(|net| {
        if why.range == BlockedRange::CloudMetadata {
            net.prefix_len() == net.max_prefix_len() && net.addr() == target
        } else {
            net.contains(&target) || net.contains(&ip)
        }
    })
}
