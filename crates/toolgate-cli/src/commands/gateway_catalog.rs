//! The upstreams' resources, resource templates, prompts and completion as a catalog of
//! `toolgate serve`'s MCP server ([`toolgate_mcp::catalog`]): the gateway lists them
//! namespaced ([`toolgate_gateway::catalog`]); each read and get is a pipeline call of the
//! upstream's unlisted tool ([`toolgate_gateway::served`]).
//!
//! A `resources/subscribe` of an upstream's resource is first a read of it through the
//! pipeline (the policy decides it, the audit records it, as a `resources/read`; a refused
//! or failed read refuses the subscription with its reason), then the gateway's subscription
//! ([`toolgate_gateway::subscriptions`]): the upstream's updates reach this session only.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use rmcp::model::{
    CompleteRequestParams, CompletionInfo, ErrorData, JsonObject, Prompt, Resource,
    ResourceTemplate,
};
use serde_json::json;
use std::sync::Arc;
use toolgate_gateway::{CatalogChange, CatalogError, UpstreamCatalog};
use toolgate_mcp::catalog::{Calls, Catalog, ListChanged, Page, Serves, Subscriber, Target};

/// The gateway's catalog: see the module docs.
#[derive(Debug, Clone)]
pub struct GatewayCatalog(pub UpstreamCatalog);

/// A catalog error as the JSON-RPC error a client reads: what the request got wrong is
/// `-32602`, an upstream's failure `-32603`.
fn rpc(e: CatalogError) -> ErrorData {
    match &e {
        CatalogError::Upstream(_) => ErrorData::internal_error(e.to_string(), None),
        CatalogError::NotSubscribable(uri, _) | CatalogError::NotSubscribed(uri) => {
            ErrorData::invalid_params(e.to_string(), Some(json!({ "uri": uri })))
        }
        CatalogError::UnknownPrompt(name) | CatalogError::Blocked(name, _) => {
            ErrorData::invalid_params(e.to_string(), Some(json!({ "name": name })))
        }
        CatalogError::MissingArgument { prompt, argument } => ErrorData::invalid_params(
            e.to_string(),
            Some(json!({ "name": prompt, "argument": argument })),
        ),
        _ => ErrorData::invalid_params(e.to_string(), None),
    }
}

impl Catalog for GatewayCatalog {
    fn serves(&self) -> Serves {
        let any = self.0.configured();
        Serves {
            resources: any,
            // offered when an upstream up at the start offers it
            subscribe: self.0.subscribable(),
            prompts: any,
            completions: any,
            list_changed: any,
        }
    }

    fn list_resources<'a>(
        &'a self,
        _calls: &'a Calls<'a>,
        cursor: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Page<Resource>, ErrorData>> {
        Box::pin(async move {
            let (items, next) = self.0.list_resources(cursor).await.map_err(rpc)?;
            Ok(Page { items, next })
        })
    }

    fn list_resource_templates<'a>(
        &'a self,
        _calls: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, ErrorData>> {
        Box::pin(async move { Ok(self.0.list_resource_templates().await) })
    }

    fn list_prompts<'a>(
        &'a self,
        _calls: &'a Calls<'a>,
    ) -> BoxFuture<'a, Result<Vec<Prompt>, ErrorData>> {
        Box::pin(async move { Ok(self.0.list_prompts().await) })
    }

    fn read(&self, uri: &str) -> Option<Target> {
        let (tool, arguments) = self.0.read_target(uri)?;
        Some(Target { tool, arguments })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a JsonObject,
    ) -> BoxFuture<'a, Option<Result<Target, ErrorData>>> {
        Box::pin(async move {
            match self.0.prompt_target(name, arguments).await {
                Ok((tool, arguments)) => Some(Ok(Target { tool, arguments })),
                // not an upstream's: the next catalog's, or not found
                Err(CatalogError::UnknownPrompt(_)) => None,
                Err(e) => Some(Err(rpc(e))),
            }
        })
    }

    fn complete<'a>(
        &'a self,
        _calls: &'a Calls<'a>,
        request: &'a CompleteRequestParams,
    ) -> Option<BoxFuture<'a, Result<CompletionInfo, ErrorData>>> {
        if !self.0.configured() {
            return None;
        }
        Some(Box::pin(async move {
            self.0.complete(request).await.map_err(|e| match e {
                CatalogError::UnknownPrompt(_) => ErrorData::invalid_params(
                    "the reference is not served here: complete the arguments of a prompt \
                     from prompts/list or a template from resources/templates/list",
                    None,
                ),
                e => rpc(e),
            })
        }))
    }

    fn subscribe<'a>(
        &'a self,
        calls: &'a Calls<'a>,
        subscriber: &'a Subscriber,
        uri: &'a str,
        on: bool,
    ) -> Option<BoxFuture<'a, Result<(), ErrorData>>> {
        if !self.0.configured() {
            return None;
        }
        Some(Box::pin(async move {
            if !on {
                return self.0.unsubscribe(uri, subscriber.id()).await.map_err(rpc);
            }
            // past the session's limit: refused before anything reaches the upstream
            self.0.may_subscribe(uri, subscriber.id()).map_err(rpc)?;
            // a read the policy decides, as resources/read: refused, no subscription
            let Some((tool, arguments)) = self.0.read_target(uri) else {
                return Err(rpc(CatalogError::NotSubscribable(
                    uri.to_string(),
                    "no upstream serves it; subscribe to a URI from resources/list".into(),
                )));
            };
            let read = calls.call(&tool, arguments).await?;
            toolgate_mcp::catalog::to_read_result(uri, read)?;
            let sink = subscriber.clone();
            self.0
                .subscribe(uri, subscriber.id(), Arc::new(move |u| sink.updated(u)))
                .await
                .map_err(rpc)
        }))
    }

    fn session_ended(&self, subscriber: u64) {
        self.0.session_ended(subscriber);
    }

    fn list_changes(&self) -> Option<BoxStream<'static, ListChanged>> {
        let changes = self.0.list_changes();
        // the second of two changes to say, after a lag
        let owed: Option<ListChanged> = None;
        Some(Box::pin(futures::stream::unfold(
            (changes, owed),
            |(mut rx, owed)| async move {
                if let Some(change) = owed {
                    return Some((change, (rx, None)));
                }
                let change = match rx.recv().await {
                    Ok(CatalogChange::Resources) => ListChanged::Resources,
                    Ok(CatalogChange::Prompts) => ListChanged::Prompts,
                    // changes missed (a session that stopped reading): either list may have
                    // changed, so the client is told of both
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        return Some((ListChanged::Resources, (rx, Some(ListChanged::Prompts))));
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                };
                Some((change, (rx, None)))
            },
        )))
    }
}
