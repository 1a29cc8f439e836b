//! Who the commits made in a run are by.
//!
//! A run's `HOME` is its private temporary directory and git reads no global or system
//! configuration there (see [`super::env`]), so `git commit` would fail with "Please tell me
//! who you are". By default ([`GitIdentity::Operator`]) toolgate reads the operator's
//! `user.name` and `user.email`, and nothing else of their git configuration (which could name
//! programs: `core.fsmonitor`, `core.pager`, aliases, hooks), once per process with one `git
//! config --global --get-regexp` (in the background from the tool's construction, so
//! neither start-up nor a run waits for it unless a run comes first), and gives each run `GIT_AUTHOR_NAME`, `GIT_AUTHOR_EMAIL`,
//! `GIT_COMMITTER_NAME` and `GIT_COMMITTER_EMAIL`, each unless the run's environment sets it
//! already (inherited or fixed by [`ShellConfig`](super::ShellConfig)). No git, or no
//! identity in its configuration, gives none, as before.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// How long reading one setting with `git config` may take before it is given up.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the identity of a run's commits comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GitIdentity {
    /// The operator's `user.name` and `user.email`, as `git config --global --get` reads them
    /// in toolgate's own environment, read once per process (the default).
    #[default]
    Operator,
    /// None: a run commits only with an identity its environment or command gives.
    Off,
    /// This one.
    Fixed(Identity),
}

/// A git author or committer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    name: String,
    email: String,
}

impl Identity {
    /// A name and an email address, each non-empty, on one line, without control characters
    /// or `<`, `>` (git takes them out of an identity).
    ///
    /// # Errors
    /// Which of the two is not so, and why.
    pub fn new(name: &str, email: &str) -> Result<Identity, String> {
        for (what, value) in [("name", name), ("email", email)] {
            if value.trim().is_empty() {
                return Err(format!("the git identity's {what} is empty"));
            }
            if value
                .chars()
                .any(|c| c.is_control() || c == '<' || c == '>')
            {
                return Err(format!(
                    "the git identity's {what} holds a control character, `<` or `>`, which git \
                     does not keep in an identity"
                ));
            }
        }
        Ok(Identity {
            name: name.trim().to_string(),
            email: email.trim().to_string(),
        })
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The email address.
    pub fn email(&self) -> &str {
        &self.email
    }

    /// Reads `user.name` and `user.email` with one `git config --global --get-regexp` (the
    /// `git` on `PATH`) in toolgate's environment, with `home` as `HOME` when given (and then
    /// no `XDG_CONFIG_HOME` or `GIT_CONFIG_GLOBAL`, so only `home`'s `.gitconfig` and
    /// `.config/git/config` are read); a setting given more than once counts by its last
    /// value, as `git config --get` reads it. `None` when git is missing, fails, takes
    /// longer than a few seconds, or either setting is unset or not a valid identity.
    pub fn from_global_config(home: Option<&OsStr>) -> Option<Identity> {
        let out = read_user_settings(home)?;
        let (mut name, mut email) = (None, None);
        // `-z`: each entry is `key\nvalue\0`, the key in git's lower case
        for entry in out.split('\0') {
            match entry.split_once('\n') {
                Some(("user.name", v)) => name = Some(v),
                Some(("user.email", v)) => email = Some(v),
                _ => {}
            }
        }
        Identity::new(name?, email?).ok()
    }
}

/// The operator's identity, read the first time it is asked for.
static OPERATOR: LazyLock<Option<Identity>> = LazyLock::new(|| Identity::from_global_config(None));

impl GitIdentity {
    /// Starts reading the operator's identity on a thread of its own, for
    /// [`GitIdentity::Operator`] (a later [`GitIdentity::resolve`] waits for that read if it
    /// is not done, never starts a second).
    pub fn read_in_background(&self) {
        static STARTED: std::sync::Once = std::sync::Once::new();
        if *self == GitIdentity::Operator {
            STARTED.call_once(|| {
                // no thread: the first run reads it
                let _ = std::thread::Builder::new()
                    .name("toolgate-git-identity".into())
                    .spawn(|| {
                        let _ = &*OPERATOR;
                    });
            });
        }
    }

    /// The identity a run gets, if any ([`GitIdentity::Operator`] reads it the first time).
    pub fn resolve(&self) -> Option<&Identity> {
        match self {
            GitIdentity::Operator => OPERATOR.as_ref(),
            GitIdentity::Off => None,
            GitIdentity::Fixed(identity) => Some(identity),
        }
    }
}

/// Sets git's author and committer variables in `env` to `identity`, each that `env` does
/// not set already.
pub(crate) fn add_to(env: &mut BTreeMap<OsString, OsString>, identity: Option<&Identity>) {
    let Some(identity) = identity else {
        return;
    };
    for (var, value) in [
        ("GIT_AUTHOR_NAME", &identity.name),
        ("GIT_AUTHOR_EMAIL", &identity.email),
        ("GIT_COMMITTER_NAME", &identity.name),
        ("GIT_COMMITTER_EMAIL", &identity.email),
    ] {
        env.entry(var.into()).or_insert_with(|| value.into());
    }
}

/// The `user.name` and `user.email` entries of the global git configuration, as
/// `git config -z --get-regexp` prints them; `None` when git cannot be run, fails (neither is
/// set) or does not answer within [`READ_TIMEOUT`].
fn read_user_settings(home: Option<&OsStr>) -> Option<String> {
    let mut command = Command::new("git");
    command
        .args([
            "--no-pager",
            "config",
            "--global",
            "-z",
            "--get-regexp",
            r"^user\.(name|email)$",
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(home) = home {
        command
            .env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("GIT_CONFIG_GLOBAL");
    }
    let mut child = command.spawn().ok()?;
    let started = Instant::now();
    // git answers in about a millisecond: look often at first, then less
    let mut pause = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < READ_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    status.success().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_identity_is_one_clean_line_each() {
        let id = Identity::new(" Ada Lovelace ", "ada@example.invalid").unwrap();
        assert_eq!(
            (id.name(), id.email()),
            ("Ada Lovelace", "ada@example.invalid")
        );
        for (name, email) in [
            ("", "a@b"),
            ("  ", "a@b"),
            ("Ada", ""),
            ("Ada\nEvil", "a@b"),
            ("Ada", "a@b\0"),
            ("Ada <x@y>", "a@b"),
            ("Ada", "<a@b>"),
        ] {
            assert!(Identity::new(name, email).is_err(), "{name:?} {email:?}");
        }
    }

    #[test]
    fn the_environment_of_the_run_wins() {
        let id = Identity::new("Ada", "ada@example.invalid").unwrap();
        let mut env = BTreeMap::from([(
            OsString::from("GIT_AUTHOR_NAME"),
            OsString::from("Set By The Operator"),
        )]);
        add_to(&mut env, Some(&id));
        let get = |k: &str| env[&OsString::from(k)].to_str().unwrap().to_string();
        assert_eq!(get("GIT_AUTHOR_NAME"), "Set By The Operator");
        assert_eq!(get("GIT_AUTHOR_EMAIL"), "ada@example.invalid");
        assert_eq!(get("GIT_COMMITTER_NAME"), "Ada");
        assert_eq!(get("GIT_COMMITTER_EMAIL"), "ada@example.invalid");
        let mut none = BTreeMap::new();
        add_to(&mut none, GitIdentity::Off.resolve());
        assert!(none.is_empty());
    }

    /// Only `user.name` and `user.email` are read, from the `.gitconfig` of the `HOME`
    /// given; without them, no identity.
    #[test]
    fn the_global_configuration_gives_name_and_email_only() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(
            Identity::from_global_config(Some(home.path().as_os_str())),
            None
        );
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = Ada Operator\n\temail = ada@example.invalid\n[core]\n\tpager = false\n",
        )
        .unwrap();
        if Command::new("git").arg("--version").output().is_err() {
            return;
        }
        let id = Identity::from_global_config(Some(home.path().as_os_str())).unwrap();
        assert_eq!(
            (id.name(), id.email()),
            ("Ada Operator", "ada@example.invalid")
        );
        // the last of a setting given twice, a key in any case, a value with spaces
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = First\n\tEMAIL = a@example.invalid\n[User]\n\tName = Ada  Q. Operator\n\
             [username]\n\tx = y\n[user \"sub\"]\n\tname = Sub\n",
        )
        .unwrap();
        let id = Identity::from_global_config(Some(home.path().as_os_str())).unwrap();
        assert_eq!(
            (id.name(), id.email()),
            ("Ada  Q. Operator", "a@example.invalid")
        );
        std::fs::write(home.path().join(".gitconfig"), "[user]\n\tname = Ada\n").unwrap();
        assert_eq!(
            Identity::from_global_config(Some(home.path().as_os_str())),
            None
        );
    }
}
