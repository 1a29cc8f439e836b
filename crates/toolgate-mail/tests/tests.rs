//! toolgate-mail's integration tests: the tools through the real pipeline, sending to a real
//! SMTP server (aiosmtpd) on 127.0.0.1.

mod support {
    pub mod setup;
    pub mod smtp;
}
mod bad_input;
mod refusals;
mod relay_echo;
mod rerun;
mod send;
mod timeouts;
mod tls;
