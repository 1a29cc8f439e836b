//! Code search: [`search_code`], built on ripgrep's crates (`ignore` for the walk, `grep-regex`
//! for matching, `grep-searcher` for reading), never on a shell or another process.

mod collect;
pub mod search_code;

pub use search_code::SearchCode;
