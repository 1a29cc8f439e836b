//! Result tools: [`read_result`], paging through results the pipeline truncated.

pub mod read_result;

pub use read_result::ReadResult;
