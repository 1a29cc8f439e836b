//! Exit codes.

use std::process::ExitCode;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success,
    /// 1: a host error (unreadable file, bad flag value).
    HostError,
    /// 3: a recoverable tool error (or invalid calls found by `validate`).
    Recoverable,
    /// 4: a fatal tool error.
    Fatal,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(match e {
            Exit::Success => 0,
            Exit::HostError => 1,
            Exit::Recoverable => 3,
            Exit::Fatal => 4,
        })
    }
}
