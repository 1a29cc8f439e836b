//! Fuzz target: the JSON-RPC framing both MCP transports run before rmcp never panics, always
//! answers in form, lets nothing too deep or any request with another id past, and agrees with
//! the streaming id scan. The body is `toolgate_fuzz::jsonrpc_frame::run`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolgate_fuzz::jsonrpc_frame::run(data);
});
