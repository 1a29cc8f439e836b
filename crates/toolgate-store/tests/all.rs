//! toolgate-store against real SQLite files in temporary directories.

mod all {
    pub mod audit;
    pub mod chain;
    pub mod crash;
    pub mod durable;
    pub mod grants;
    pub mod identity;
    pub mod ledger;
    pub mod open;
    pub mod pins;
    pub mod results;
    pub mod stats;
    pub mod support;
}
