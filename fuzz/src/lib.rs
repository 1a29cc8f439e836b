//! The bodies of toolgate's fuzz targets, one module per target, written so they also build
//! and run on the stable toolchain without libFuzzer (the test suites replay them).

#![forbid(unsafe_code)]

pub mod command_grammar;
pub mod command_parser;
pub mod config_parser;
pub mod jsonrpc_frame;
pub mod path_resolver;
