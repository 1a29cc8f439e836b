//! File-system tools: [`read_file`], [`list_dir`] and [`glob`] read; [`write_file`] and
//! [`edit_file`] write. Every path they take is resolved inside the session's workspace and
//! every path they return is relative to its root.
//!
//! The write tools share [`atomic`] (confined, atomic replacement of one file),
//! [`protected`] (the paths no tool writes by default) and, for `edit_file`, the exact-match
//! engine and the diff. `lookup` checks what a path names before a call is put to an
//! approver, and says which names are near when it names nothing.

pub mod atomic;
mod diff;
pub mod edit_file;
pub mod glob;
pub mod list_dir;
pub(crate) mod lookup;
pub mod protected;
pub mod read_file;
mod replace;
pub mod temp;
pub mod write_file;

pub use edit_file::EditFile;
pub use glob::Glob;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use write_file::WriteFile;
