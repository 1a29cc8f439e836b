//! Fuzz target: `Workspace::resolve` never lets a path escape the workspace root, and never
//! panics. The body is `toolgate_fuzz::path_resolver::run`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::path_resolver::run(data);
});
