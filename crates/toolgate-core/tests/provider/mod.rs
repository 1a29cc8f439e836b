//! Provider formats: every BFCL definition through each provider's shape and back, each
//! provider's tool-call messages answered through the pipeline, tool search and deferred
//! tools.

mod messages;
mod roundtrip;
mod search;
