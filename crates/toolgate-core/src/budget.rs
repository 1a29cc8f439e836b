//! Session budgets: calls per session and per tool, wall time, result bytes.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Limits for one session. `None` is unlimited; the default is unlimited everywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// Calls that may pass the budget stage in the session.
    pub max_calls: Option<u64>,
    /// Calls of any one tool in the session.
    pub max_calls_per_tool: Option<u64>,
    /// Wall time from the session's start after which no call starts, in milliseconds on the
    /// wire.
    #[serde(with = "opt_ms")]
    pub max_wall_time: Option<Duration>,
    /// Result bytes (rendered, before truncation) the session may receive in all.
    pub max_result_bytes: Option<u64>,
}

mod opt_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_millis() as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}
