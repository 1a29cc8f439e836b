//! toolgate-core's integration tests, one binary.

mod import;
mod pipeline;
mod provider;
