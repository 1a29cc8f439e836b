//! Reading a response's body within a byte cap, decompressing it while it streams.
//!
//! The cap holds for the bytes read from the connection and for the bytes they decode to
//! alike, and neither is ever buffered beyond it:
//!
//! - a `Content-Length` above the cap is refused before a byte of the body is read
//!   (`limit_exceeded`);
//! - chunks are read one at a time: past the cap, reading stops (the rest is never read; the
//!   connection is dropped) and the body is marked truncated;
//! - `gzip` (and `x-gzip`), `deflate` (zlib, or raw deflate as some servers send it) and `br`
//!   are decoded chunk by chunk into a buffer that refuses to grow past the cap, so a
//!   compression bomb stops at the cap (marked truncated) whatever it would expand to.

use flate2::write::{DeflateDecoder, GzDecoder, ZlibDecoder};
use std::io::{self, Write};
use toolgate_core::ToolError;

/// A body read within its cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The decoded bytes: at most the cap.
    pub bytes: Vec<u8>,
    /// Bytes read from the connection: at most the cap.
    pub wire_bytes: u64,
    /// Whether the body went on past the cap (on the wire or decoded) and was cut there.
    pub truncated: bool,
}

/// The body of `response`, within `max` bytes; see the module docs.
///
/// # Errors
/// `unsafe_input` / `limit_exceeded` for a `Content-Length` above `max`; `tool_failed` with
/// `unsupported_encoding` for a `Content-Encoding` other than gzip, deflate, br and identity,
/// `bad_encoding` for content that does not decode, `body_failed` when the connection fails
/// while the body streams.
pub async fn read(mut response: reqwest::Response, max: u64) -> Result<Body, ToolError> {
    let encoding = encoding(response.headers())?;
    if let Some(length) = content_length(response.headers()) {
        if length > max {
            return Err(too_long(length, max));
        }
    }
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    let mut decoder = Decoder::new(encoding, cap);
    let mut wire_bytes = 0u64;
    let mut truncated = false;
    let announced = content_length(response.headers());
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        let got = match announced {
            Some(length) => format!("after {wire_bytes} of the {length} bytes it announced"),
            None => format!("after {wire_bytes} bytes"),
        };
        ToolError::failed(format!(
            "body_failed: the connection failed while the body was read, {got} ({}); the \
             server may have failed mid-answer: try again, and nothing of this body is shown",
            super::client::root_cause(&e)
        ))
        .with_reason("body_failed")
        .transient()
    })? {
        let room = max - wire_bytes;
        let take = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        wire_bytes += take as u64;
        match decoder.write(&chunk[..take]) {
            Ok(()) => {}
            Err(_) if decoder.full() => {
                truncated = true;
                break;
            }
            Err(e) => return Err(bad_encoding(encoding, &e)),
        }
        if take < chunk.len() {
            truncated = true;
            break;
        }
    }
    let (bytes, full) = decoder
        .finish(truncated)
        .map_err(|e| bad_encoding(encoding, &e))?;
    Ok(Body {
        bytes,
        wire_bytes,
        truncated: truncated || full,
    })
}

/// The `Content-Length`, when the response has one that parses.
pub fn content_length(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    headers
        .get(reqwest::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn too_long(length: u64, max: u64) -> ToolError {
    ToolError::unsafe_input(
        "limit_exceeded",
        format!(
            "the response body is {length} bytes (Content-Length), over the limit of {max} \
             bytes, so it was not read; ask for part of it (a Range header such as \
             \"bytes=0-{}\"), or a higher max_bytes if the limit allows",
            max.saturating_sub(1)
        ),
    )
    .with_details(serde_json::json!({"content_length": length, "max_bytes": max}))
}

fn bad_encoding(encoding: Encoding, e: &io::Error) -> ToolError {
    ToolError::failed(format!(
        "bad_encoding: the response's {} content does not decode ({e}); the server sent a \
         corrupt body",
        encoding.name()
    ))
    .with_reason("bad_encoding")
}

/// A `Content-Encoding` the reader decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::Identity => "identity",
            Encoding::Gzip => "gzip",
            Encoding::Deflate => "deflate",
            Encoding::Brotli => "br",
        }
    }
}

/// The response's encoding: one of gzip, deflate, br (or none).
fn encoding(headers: &reqwest::header::HeaderMap) -> Result<Encoding, ToolError> {
    let mut found = Encoding::Identity;
    for value in headers.get_all(reqwest::header::CONTENT_ENCODING) {
        let text = value.to_str().unwrap_or("?");
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let e = match token.to_ascii_lowercase().as_str() {
                "identity" => continue,
                "gzip" | "x-gzip" => Encoding::Gzip,
                "deflate" => Encoding::Deflate,
                "br" => Encoding::Brotli,
                _ => return Err(unsupported(text)),
            };
            if found != Encoding::Identity {
                return Err(unsupported(text));
            }
            found = e;
        }
    }
    Ok(found)
}

fn unsupported(text: &str) -> ToolError {
    ToolError::failed(format!(
        "unsupported_encoding: the response is encoded as {text:?}, which is not decoded here \
         (only one of gzip, deflate and br); fetch another URL"
    ))
    .with_reason("unsupported_encoding")
}

/// A buffer that takes at most `cap` bytes and refuses the write that would pass it.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    full: bool,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.cap - self.buf.len();
        if data.len() > room {
            self.buf.extend_from_slice(&data[..room]);
            self.full = true;
            return Err(io::Error::other("the body's cap was reached"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Decodes chunks into a [`Capped`] buffer.
enum Decoder {
    Identity(Capped),
    Gzip(GzDecoder<Capped>),
    /// `deflate` before its first two bytes say zlib or raw.
    Deflate(Vec<u8>, Capped),
    Zlib(ZlibDecoder<Capped>),
    Raw(DeflateDecoder<Capped>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Capped>>),
}

impl Decoder {
    fn new(encoding: Encoding, cap: usize) -> Decoder {
        let sink = Capped {
            buf: Vec::new(),
            cap,
            full: false,
        };
        match encoding {
            Encoding::Identity => Decoder::Identity(sink),
            Encoding::Gzip => Decoder::Gzip(GzDecoder::new(sink)),
            Encoding::Deflate => Decoder::Deflate(Vec::new(), sink),
            Encoding::Brotli => Decoder::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(sink, 16 << 10),
            )),
        }
    }

    fn full(&self) -> bool {
        match self {
            Decoder::Identity(s) | Decoder::Deflate(_, s) => s.full,
            Decoder::Gzip(d) => d.get_ref().full,
            Decoder::Zlib(d) => d.get_ref().full,
            Decoder::Raw(d) => d.get_ref().full,
            Decoder::Brotli(d) => d.get_ref().full,
        }
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Decoder::Identity(s) => s.write_all(data),
            Decoder::Gzip(d) => d.write_all(data),
            Decoder::Zlib(d) => d.write_all(data),
            Decoder::Raw(d) => d.write_all(data),
            Decoder::Brotli(d) => d.write_all(data),
            Decoder::Deflate(head, _) => {
                head.extend_from_slice(data);
                if head.len() < 2 {
                    return Ok(());
                }
                let Decoder::Deflate(head, sink) =
                    std::mem::replace(self, Decoder::Identity(empty()))
                else {
                    unreachable!("matched above")
                };
                // RFC 1950 §2.2: a zlib stream starts with CM = 8 and a header divisible by 31
                let zlib = head[0] & 0x0f == 8 && u16::from_be_bytes([head[0], head[1]]) % 31 == 0;
                *self = if zlib {
                    Decoder::Zlib(ZlibDecoder::new(sink))
                } else {
                    Decoder::Raw(DeflateDecoder::new(sink))
                };
                self.write(&head)
            }
        }
    }

    fn sink_mut(&mut self) -> &mut Capped {
        match self {
            Decoder::Identity(s) | Decoder::Deflate(_, s) => s,
            Decoder::Gzip(d) => d.get_mut(),
            Decoder::Zlib(d) => d.get_mut(),
            Decoder::Raw(d) => d.get_mut(),
            Decoder::Brotli(d) => d.get_mut(),
        }
    }

    /// The decoded bytes and whether the cap was reached; `cut` when the input was cut short,
    /// so an unfinished stream is no error (nor is one that the cap stopped).
    fn finish(mut self, cut: bool) -> io::Result<(Vec<u8>, bool)> {
        let end = match &mut self {
            Decoder::Identity(_) => Ok(()),
            Decoder::Deflate(head, _) if head.len() == 1 => {
                Err(io::Error::other("a deflate stream of one byte"))
            }
            Decoder::Deflate(..) => Ok(()),
            Decoder::Gzip(d) => d.try_finish(),
            Decoder::Zlib(d) => d.try_finish(),
            Decoder::Raw(d) => d.try_finish(),
            Decoder::Brotli(d) => d.close(),
        };
        let sink = self.sink_mut();
        match end {
            Err(e) if !sink.full && !cut => Err(e),
            _ => Ok((std::mem::take(&mut sink.buf), sink.full)),
        }
    }
}

fn empty() -> Capped {
    Capped {
        buf: Vec::new(),
        cap: 0,
        full: false,
    }
}
