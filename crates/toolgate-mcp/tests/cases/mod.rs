mod conformance_fixture;
mod first_hour;
mod http_security;
mod inspector;
mod metrics;
mod pydantic_ai;
mod python_sdk;
mod shutdown;
pub(crate) mod support;
