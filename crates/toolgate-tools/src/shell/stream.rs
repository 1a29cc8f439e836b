//! A command's output streamed as progress while it runs, when the caller listens
//! ([`toolgate_core::ToolContext::wants_progress`]; an MCP client that sent a `progressToken`).
//!
//! Bounded on every side, by [`StreamLimits`]:
//!
//! - **rate**: lines are coalesced and sent at most once per [`StreamLimits::interval`]
//!   (default 250 ms, so at most 4 reports a second), plus one last report when the command
//!   ends with what is left;
//! - **size**: a report holds at most [`StreamLimits::max_message_bytes`] of lines (the lines
//!   past that are counted, `[N more lines]`), a line at most [`StreamLimits::max_line_bytes`]
//!   (cut with `…`), and a call streams at most [`StreamLimits::max_total_bytes`] in all, then
//!   says so once and stops (the result still has the output, within its own caps);
//! - **content**: terminal escape sequences (CSI, OSC, DCS and the other ESC sequences) are
//!   removed, a carriage return ends a line (progress bars become lines), every other control
//!   character is dropped, invalid UTF-8 becomes U+FFFD, and blank lines are skipped. Lines of
//!   standard error start with `[stderr] `.
//!
//! Each report's `progress` is the number of output bytes (both streams) read so far, which
//! only grows; `total` is unknown.

use std::time::Duration;

/// The bounds of one call's stream of progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The shortest time between two reports (lines in between are coalesced).
    pub interval: Duration,
    /// The most bytes of lines in one report.
    pub max_message_bytes: usize,
    /// The most bytes of one line (longer ones are cut).
    pub max_line_bytes: usize,
    /// The most bytes of messages one call sends in all.
    pub max_total_bytes: usize,
}

impl Default for StreamLimits {
    /// At most 4 reports a second, 4 KiB each, lines of at most 512 bytes, 64 KiB in all.
    fn default() -> Self {
        StreamLimits {
            interval: Duration::from_millis(250),
            max_message_bytes: 4 << 10,
            max_line_bytes: 512,
            max_total_bytes: 64 << 10,
        }
    }
}

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error (its lines start with `[stderr] `).
    Stderr,
}

/// Where the escape-sequence scanner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Esc {
    /// Ordinary text.
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes, waiting for the final byte.
    Intermediate,
    /// Inside a control sequence (`ESC [`), `n` bytes in.
    Csi(u16),
    /// Inside a string (OSC, DCS, SOS, PM, APC), ended by BEL or `ESC \`; `n` bytes in.
    Str(u16),
    /// After ESC inside a string.
    StrEscape,
}

/// A control sequence or string longer than this is taken as garbage and ended, so a
/// malformed one cannot swallow the rest of the output.
const MAX_SEQUENCE: u16 = 4096;

/// Splits one stream's bytes into clean lines (see the module docs), across chunk
/// boundaries.
#[derive(Debug)]
pub struct Lines {
    esc: Esc,
    line: Vec<u8>,
    cut: bool,
    max_line: usize,
}

impl Lines {
    /// A splitter cutting lines at `max_line` bytes (at least 16).
    pub fn new(max_line: usize) -> Lines {
        Lines {
            esc: Esc::Ground,
            line: Vec::new(),
            cut: false,
            max_line: max_line.max(16),
        }
    }

    /// Takes the next chunk; every line it completes goes to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut impl FnMut(String)) {
        for &b in bytes {
            self.esc = match self.esc {
                Esc::Ground => match b {
                    0x1b => Esc::Escape,
                    b'\n' | b'\r' => {
                        self.end_line(out);
                        Esc::Ground
                    }
                    b'\t' => {
                        self.keep(b' ');
                        Esc::Ground
                    }
                    0..=0x1f | 0x7f => Esc::Ground,
                    _ => {
                        self.keep(b);
                        Esc::Ground
                    }
                },
                Esc::Escape => match b {
                    b'[' => Esc::Csi(0),
                    b']' | b'P' | b'X' | b'^' | b'_' => Esc::Str(0),
                    0x20..=0x2f => Esc::Intermediate,
                    // CAN and SUB abort a sequence; ESC starts a new one
                    0x1b => Esc::Escape,
                    _ => Esc::Ground,
                },
                Esc::Intermediate => match b {
                    0x20..=0x2f => Esc::Intermediate,
                    _ => Esc::Ground,
                },
                Esc::Csi(n) => match b {
                    0x40..=0x7e | 0x18 | 0x1a => Esc::Ground,
                    0x1b => Esc::Escape,
                    _ if n >= MAX_SEQUENCE => Esc::Ground,
                    _ => Esc::Csi(n + 1),
                },
                Esc::Str(n) => match b {
                    0x07 | 0x18 | 0x1a => Esc::Ground,
                    0x1b => Esc::StrEscape,
                    _ if n >= MAX_SEQUENCE => Esc::Ground,
                    _ => Esc::Str(n + 1),
                },
                // `ESC \` ends the string; anything else after ESC ends it too
                Esc::StrEscape => Esc::Ground,
            };
        }
    }

    /// Ends the stream: a last line without a newline goes to `out`.
    pub fn finish(&mut self, out: &mut impl FnMut(String)) {
        self.end_line(out);
        self.esc = Esc::Ground;
    }

    fn keep(&mut self, b: u8) {
        if self.line.len() < self.max_line {
            self.line.push(b);
        } else {
            self.cut = true;
        }
    }

    fn end_line(&mut self, out: &mut impl FnMut(String)) {
        let cut = std::mem::take(&mut self.cut);
        let mut text: String = String::from_utf8_lossy(&self.line)
            .chars()
            // C1 controls (U+0080 to U+009F) are controls too
            .filter(|c| !('\u{80}'..='\u{9f}').contains(c))
            .collect();
        self.line.clear();
        if cut {
            // a character split by the cut shows as U+FFFD: drop it
            while text.ends_with('\u{fffd}') {
                text.pop();
            }
            text.push('…');
        }
        let trimmed = text.trim_end();
        if !trimmed.is_empty() {
            text.truncate(trimmed.len());
            out(text);
        }
    }
}

/// Both streams of one run, and the lines waiting for the next report.
#[derive(Debug)]
pub struct OutputProgress {
    limits: StreamLimits,
    stdout: Lines,
    stderr: Lines,
    pending: String,
    more_lines: u64,
    seen: u64,
    sent: usize,
    stopped: bool,
}

impl OutputProgress {
    /// Nothing seen yet.
    pub fn new(limits: StreamLimits) -> OutputProgress {
        OutputProgress {
            limits,
            stdout: Lines::new(limits.max_line_bytes),
            stderr: Lines::new(limits.max_line_bytes),
            pending: String::new(),
            more_lines: 0,
            seen: 0,
            sent: 0,
            stopped: false,
        }
    }

    /// Takes the next chunk of `stream`.
    pub fn push(&mut self, stream: Stream, bytes: &[u8]) {
        self.seen = self.seen.saturating_add(bytes.len() as u64);
        if self.stopped {
            return;
        }
        let OutputProgress {
            stdout,
            stderr,
            pending,
            more_lines,
            limits,
            ..
        } = self;
        let (lines, prefix) = match stream {
            Stream::Stdout => (stdout, ""),
            Stream::Stderr => (stderr, "[stderr] "),
        };
        let max = limits.max_message_bytes;
        lines.push(bytes, &mut |line| {
            queue(pending, more_lines, max, prefix, &line)
        });
    }

    /// Ends both streams: their last lines without a newline are queued.
    pub fn finish(&mut self) {
        if self.stopped {
            return;
        }
        let max = self.limits.max_message_bytes;
        let (pending, more) = (&mut self.pending, &mut self.more_lines);
        self.stdout
            .finish(&mut |line| queue(pending, more, max, "", &line));
        self.stderr
            .finish(&mut |line| queue(pending, more, max, "[stderr] ", &line));
    }

    /// The next report, `(progress, message)`, when lines are waiting and the call's total
    /// allows; once the total is reached, one last report says streaming stopped.
    pub fn take(&mut self) -> Option<(f64, String)> {
        if self.stopped || (self.pending.is_empty() && self.more_lines == 0) {
            return None;
        }
        let mut message = std::mem::take(&mut self.pending);
        if self.more_lines > 0 {
            if !message.is_empty() {
                message.push('\n');
            }
            message.push_str(&format!("[{} more lines]", self.more_lines));
            self.more_lines = 0;
        }
        if self.sent + message.len() > self.limits.max_total_bytes {
            self.stopped = true;
            message = format!(
                "[output streaming stopped after {} bytes; the result has the output]",
                self.sent
            );
        }
        self.sent += message.len();
        Some((self.seen as f64, message))
    }

    /// The shortest time between two reports (at least 10 ms).
    pub fn interval(&self) -> Duration {
        self.limits.interval.max(Duration::from_millis(10))
    }
}

/// Queues `line` (with `prefix`) when the report has room, else counts it.
fn queue(pending: &mut String, more: &mut u64, max: usize, prefix: &str, line: &str) {
    let need = prefix.len() + line.len() + usize::from(!pending.is_empty());
    if *more > 0 || pending.len() + need > max {
        *more += 1;
        return;
    }
    if !pending.is_empty() {
        pending.push('\n');
    }
    pending.push_str(prefix);
    pending.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut l = Lines::new(512);
        let mut out = Vec::new();
        for c in chunks {
            l.push(c, &mut |s| out.push(s));
        }
        l.finish(&mut |s| out.push(s));
        out
    }

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(
            lines(&[b"\x1b[1;31merror\x1b[0m: bad\n\x1b]0;title\x07ok\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n"]),
            ["error: bad", "oklink"]
        );
        assert_eq!(lines(&[b"a\x07b\x00c\x7fd\te\n"]), ["abcd e"]);
        assert_eq!(lines(&[b"\x1bPq#0;2;0;0;0\x1b\\x\x1b(By\x1b7z\n"]), ["xyz"]);
        // C1 controls, as UTF-8, and an 8-bit CSI byte (invalid UTF-8)
        assert_eq!(
            lines(&["a\u{9b}31mb\n".as_bytes(), b"c\x9bd\n"]),
            ["a31mb", "c\u{fffd}d"]
        );
    }

    #[test]
    fn sequences_and_characters_split_across_chunks_are_handled() {
        assert_eq!(lines(&[b"red: \x1b[3", b"1mX\x1b", b"[0m\n"]), ["red: X"]);
        assert_eq!(lines(&[b"caf\xc3", b"\xa9\n"]), ["caf\u{e9}"]);
    }

    #[test]
    fn carriage_returns_end_lines_and_blank_lines_are_skipped() {
        assert_eq!(
            lines(&[b"10%\r50%\r100%\r\n\n   \nend"]),
            ["10%", "50%", "100%", "end"]
        );
    }

    #[test]
    fn long_lines_and_unterminated_sequences_are_bounded() {
        let mut long = "é".repeat(300).into_bytes();
        long.push(b'\n');
        let got = {
            let mut l = Lines::new(33);
            let mut out = Vec::new();
            l.push(&long, &mut |s| out.push(s));
            out
        };
        assert_eq!(got, [format!("{}…", "é".repeat(16))]);
        // an OSC that never ends stops swallowing after MAX_SEQUENCE bytes
        let mut bytes = b"\x1b]".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', usize::from(MAX_SEQUENCE) + 1));
        bytes.extend(b"visible\n");
        assert_eq!(lines(&[&bytes]), ["visible"]);
    }

    #[test]
    fn reports_coalesce_lines_and_are_capped() {
        let limits = StreamLimits {
            interval: Duration::from_millis(10),
            max_message_bytes: 40,
            max_line_bytes: 512,
            max_total_bytes: 100,
        };
        let mut p = OutputProgress::new(limits);
        assert_eq!(p.take(), None);
        p.push(Stream::Stdout, b"one\ntwo\n");
        p.push(Stream::Stderr, b"warn\n");
        assert_eq!(
            p.take(),
            Some((13.0, "one\ntwo\n[stderr] warn".to_string()))
        );
        assert_eq!(p.take(), None);
        p.push(
            Stream::Stdout,
            b"0123456789\n0123456789\n0123456789\n0123456789\nlast",
        );
        let (progress, message) = p.take().unwrap();
        assert_eq!(progress, 61.0);
        assert_eq!(
            message,
            "0123456789\n0123456789\n0123456789\n[1 more lines]"
        );
        p.finish();
        assert_eq!(p.take().unwrap().1, "last");
        p.push(Stream::Stdout, b"x\n".repeat(50).as_slice());
        let stop = p.take().unwrap().1;
        assert!(
            stop.starts_with("[output streaming stopped after"),
            "{stop}"
        );
        p.push(Stream::Stdout, b"more\n");
        assert_eq!(p.take(), None);
    }

    #[test]
    fn no_input_panics_or_leaks_a_control_character() {
        // random chunks, heavy in ESC and the bytes that start, end or break sequences
        const SPECIAL: &[u8] = b"[]P\\\x07\n\r;m\x18";
        let mut seed = 0x2545_f491_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let mut p = OutputProgress::new(StreamLimits {
            max_total_bytes: usize::MAX,
            ..StreamLimits::default()
        });
        for _ in 0..2000 {
            let len = (next() % 64) as usize;
            let chunk: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    0 => 0x1b,
                    1 => SPECIAL[next() as usize % SPECIAL.len()],
                    _ => (next() % 256) as u8,
                })
                .collect();
            let stream = if next() % 2 == 0 {
                Stream::Stdout
            } else {
                Stream::Stderr
            };
            p.push(stream, &chunk);
            if let Some((_, message)) = p.take() {
                assert!(
                    !message.chars().any(|c| c.is_control() && c != '\n'),
                    "{message:?}"
                );
            }
        }
    }
}
