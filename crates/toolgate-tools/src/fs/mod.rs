//! File-system tools: [`read_file`], [`list_dir`] and [`glob`]. Every path they take is
//! resolved inside the session's workspace and every path they return is relative to its root.

pub mod glob;
pub mod list_dir;
pub mod read_file;

pub use glob::Glob;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
