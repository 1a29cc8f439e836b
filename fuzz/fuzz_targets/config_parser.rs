//! Fuzz target: `toolgate_config::load_str` never panics or overflows the stack, is
//! deterministic, locates every problem inside the text, and gives a policy that decides
//! without panicking. The body is `toolgate_fuzz::config_parser::run`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::config_parser::run(data);
});
