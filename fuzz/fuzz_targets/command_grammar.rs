//! Fuzz target: for command lines built out of programs that run other programs, and rules
//! built from the same input, every program the line can run is decided by a rule or makes
//! the call ask. The body is `toolgate_fuzz::command_grammar::run`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::command_grammar::run(data);
});
