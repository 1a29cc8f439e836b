//! `file:///` URIs of workspace files: the workspace root is the URI's root, so
//! `file:///src/main.rs` is the workspace's `src/main.rs` and no host path reaches the client.
//!
//! A URI is read with the `url` crate (WHATWG): `..` and `%2e%2e` segments are folded by the
//! parser, every other `%XX` is decoded afterwards, and the path that results is confined by
//! the pipeline's guard stage like any path argument (`%2F..%2F` decodes to `/../`, which the
//! guard refuses with `path_outside_workspace`). Each segment is percent-encoded when a URI is
//! made, so `a b/c#d` is `file:///a%20b/c%23d` and reads back as the same path.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};
use toolgate_core::{ArgumentFault, ToolError};

/// The scheme of workspace resources.
pub const SCHEME: &str = "file";
/// The resource template of workspace files (RFC 6570 level 1).
pub const TEMPLATE: &str = "file:///{path}";

/// What is percent-encoded in a path segment: controls, space and the characters that would
/// end or split it (`#`, `?`, `/`, `%`) or that clients parse specially.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b'[')
    .add(b']');

/// The URI of the workspace path `rel` (relative to the root, `/` separators).
pub fn to_uri(rel: &str) -> String {
    let mut uri = String::with_capacity(8 + rel.len());
    uri.push_str("file://");
    for segment in rel.split('/') {
        uri.push('/');
        uri.extend(utf8_percent_encode(segment, SEGMENT));
    }
    uri
}

/// Whether `uri` is one of this scheme's (its scheme compared without regard to case).
pub fn is_file_uri(uri: &str) -> bool {
    uri.get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
}

/// The workspace path (relative to the root) that `uri` names.
///
/// # Errors
/// `invalid_arguments` (reason `invalid_uri`, the fault at `/uri`) for a URI that does not
/// parse, is not `file:`, names a host other than `localhost`, carries a query or fragment,
/// names the root itself, or decodes to text that is not UTF-8 or holds a NUL.
pub fn to_path(uri: &str) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::invalid_arguments(
            format!(
                "{uri:?} is not a workspace resource URI: {why}; send file:/// and the path \
                 relative to the workspace root, for example file:///src/main.rs"
            ),
            vec![ArgumentFault {
                pointer: "/uri".into(),
                message: why.to_string(),
            }],
        )
        .with_reason("invalid_uri")
    };
    let url = url::Url::parse(uri).map_err(|e| bad(&e.to_string()))?;
    if url.scheme() != SCHEME {
        return Err(bad("its scheme is not file"));
    }
    if url
        .host_str()
        .is_some_and(|h| !h.eq_ignore_ascii_case("localhost"))
    {
        return Err(bad("it names a host; workspace URIs have none"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("it has a query or a fragment"));
    }
    let path = percent_decode_str(url.path().trim_start_matches('/'))
        .decode_utf8()
        .map_err(|_| bad("its percent-encoded bytes are not UTF-8"))?;
    if path.is_empty() {
        return Err(bad("it names the workspace root, a directory"));
    }
    if path.contains('\0') {
        return Err(bad("it holds a NUL byte"));
    }
    Ok(path.into_owned())
}

/// The MIME type of a file named `rel`, from its extension (`text/plain` for a text file
/// without a known one, `application/octet-stream` for a binary one).
pub fn mime_type(rel: &str, text: bool) -> String {
    match mime_guess::from_path(rel).first_raw() {
        Some(m) => m.to_string(),
        None if text => "text/plain".to_string(),
        None => "application/octet-stream".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        for rel in ["src/main.rs", "a b/c#d?e%f", "ünï/ç", "x/[y]{z}"] {
            let uri = to_uri(rel);
            assert!(url::Url::parse(&uri).is_ok(), "{uri}");
            assert_eq!(to_path(&uri).unwrap(), rel, "{uri}");
        }
        assert_eq!(to_uri("src/main.rs"), "file:///src/main.rs");
    }

    #[test]
    fn bad_uris_are_refused_with_the_reason() {
        for (uri, why) in [
            ("file:///", "root"),
            ("http://x/y", "scheme"),
            ("file://evil.example/etc/passwd", "host"),
            ("file:///a?b", "query"),
            ("file:///a#b", "fragment"),
            ("file:///%00", "NUL"),
            ("file:///%ff", "UTF-8"),
            ("not a uri", "relative URL"),
        ] {
            let e = to_path(uri).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("invalid_uri"), "{uri}");
            assert!(e.message.contains(why), "{uri}: {}", e.message);
        }
    }

    #[test]
    fn dot_segments_stay_inside_or_reach_the_guard() {
        // folded by the parser: stays inside the workspace
        assert_eq!(to_path("file:///../etc/passwd").unwrap(), "etc/passwd");
        assert_eq!(to_path("file:///%2e%2e/etc/passwd").unwrap(), "etc/passwd");
        // an encoded separator is decoded after parsing: the guard stage refuses it
        assert_eq!(to_path("file:///x%2F..%2F..%2Fetc").unwrap(), "x/../../etc");
        assert_eq!(to_path("file://localhost/a").unwrap(), "a");
    }
}
