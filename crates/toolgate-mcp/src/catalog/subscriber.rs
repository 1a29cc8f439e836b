//! [`Subscriber`]: the session a `resources/subscribe` came from, for the catalog to send that
//! resource's `notifications/resources/updated` to (and to no other session).

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};

/// One MCP session that subscribes to resources: its id (unique in the process, the same for
/// every request of the session, handed to [`super::Catalog::session_ended`] when the session
/// is over) and the way to its client. Cheap to clone.
#[derive(Clone)]
pub struct Subscriber {
    id: u64,
    peer: Peer<RoleServer>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber").field("id", &self.id).finish()
    }
}

impl Subscriber {
    pub(crate) fn new(id: u64, peer: Peer<RoleServer>) -> Self {
        Subscriber { id, peer }
    }

    /// The session's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Sends `notifications/resources/updated` for `uri` (as this server lists it) to the
    /// session's client, in a task of its own (a slow client holds up no one); a closed
    /// session drops it.
    pub fn updated(&self, uri: String) {
        let peer = self.peer.clone();
        tokio::spawn(async move {
            if let Err(e) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
            {
                tracing::debug!(error = %e, "resources/updated not sent");
            }
        });
    }
}
