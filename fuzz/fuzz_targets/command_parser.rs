//! Fuzz target: `toolgate_tools::shell::analyze` never panics, is deterministic, never lets a
//! policy allow what it could not see, and never loses a command placed in a line. The body
//! is `toolgate_fuzz::command_parser::run`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::command_parser::run(data);
});
