//! toolgate-config's integration tests: one binary.

mod all {
    pub mod load;
    pub mod policy_cases;
    pub mod support;
}
