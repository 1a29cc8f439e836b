//! toolgate-core's integration tests, one binary.

mod pipeline;
