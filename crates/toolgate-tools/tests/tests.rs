//! The integration tests of toolgate-tools: every built-in run through a real pipeline and
//! directly, fed bad input, and the security cases of `shared/cases/security.jsonl` that
//! concern them, each generalized to its class.

mod cases;
