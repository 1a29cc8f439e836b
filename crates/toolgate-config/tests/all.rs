//! toolgate-config's integration tests: one binary.

mod all {
    pub mod config_fuzz;
    pub mod http;
    pub mod identity;
    pub mod load;
    pub mod mail;
    pub mod policy_cases;
    pub mod support;
    pub mod upstreams;
}
