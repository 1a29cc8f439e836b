mod conformance_fixture;
mod http_security;
mod inspector;
mod metrics;
mod pydantic_ai;
mod python_sdk;
mod shutdown;
pub(crate) mod support;
