//! The environment of a sandboxed command: built from an allowlist, never inherited whole.
//!
//! The command gets, in this order (later entries win):
//!
//! 1. the variables named in [`ShellConfig::inherit_env`](super::ShellConfig::inherit_env)
//!    that are set in toolgate's own environment (by default `PATH`, `LANG`, `LC_ALL`, `TERM`,
//!    `TZ`, `USER`; nothing that usually holds a secret);
//! 2. the fixed variables of [`ShellConfig::env`](super::ShellConfig::env);
//! 3. `HOME` and `TMPDIR` set to the run's private home and temporary directories (two, so a
//!    path made from `$TMPDIR` does not reach the startup files programs read from `HOME`),
//!    `PYTHONNOUSERSITE=1` unless set (Python's user site runs code at every start), `PWD`
//!    unset (bash sets it), and the git settings of [`git_env`], which turn off everything through which a
//!    repository's own files could run code (hooks, fsmonitor, pagers, editors, credential
//!    helpers, `ext::` transports, implicit bare repositories), and terminal prompts;
//! 4. git's author and committer from [`ShellConfig::git_identity`](super::ShellConfig::git_identity),
//!    each that the entries above do not set.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// The variables inherited by default: none of them usually holds a secret.
pub const DEFAULT_INHERIT: [&str; 6] = ["PATH", "LANG", "LC_ALL", "TERM", "TZ", "USER"];

/// `PATH` when toolgate's own environment has none.
pub const FALLBACK_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Git configuration given through the environment (`GIT_CONFIG_KEY_n`), which overrides the
/// repository's `.git/config`.
pub const GIT_CONFIG: [(&str, &str); 9] = [
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("credential.helper", ""),
    ("protocol.ext.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("safe.bareRepository", "explicit"),
];

/// The git variables every run gets: no system or global configuration, [`GIT_CONFIG`], no
/// terminal prompt, `cat` as pager and editor that fails.
pub fn git_env() -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
        ("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()),
        ("GIT_PAGER".to_string(), "cat".to_string()),
        ("PAGER".to_string(), "cat".to_string()),
        ("GIT_EDITOR".to_string(), "false".to_string()),
        ("GIT_ASKPASS".to_string(), "false".to_string()),
        ("SSH_ASKPASS".to_string(), "false".to_string()),
        ("GIT_CONFIG_COUNT".to_string(), GIT_CONFIG.len().to_string()),
    ];
    for (i, (key, value)) in GIT_CONFIG.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), (*key).to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), (*value).to_string()));
    }
    env
}

/// The whole environment of one run, from `parent` (toolgate's own environment), with git's
/// author and committer `identity` where nothing before sets them.
pub fn build(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    inherit: &[String],
    fixed: &BTreeMap<String, String>,
    private_tmp: &Path,
    home: &Path,
    identity: Option<&super::Identity>,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(k, _)| inherit.iter().any(|name| k == name.as_str()))
        .collect();
    env.entry("PATH".into())
        .or_insert_with(|| FALLBACK_PATH.into());
    for (k, v) in fixed {
        env.insert(k.into(), v.into());
    }
    env.insert("HOME".into(), home.into());
    env.insert("TMPDIR".into(), private_tmp.into());
    // Python's user site (`~/.local/lib/python3.X/site-packages`, whose `.pth` files and
    // `usercustomize` run at every start) is not read
    env.entry("PYTHONNOUSERSITE".into())
        .or_insert_with(|| "1".into());
    env.remove(&OsString::from("PWD"));
    for (k, v) in git_env() {
        env.insert(k.into(), v.into());
    }
    super::git_identity::add_to(&mut env, identity);
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn only_allowlisted_variables_pass() {
        let parent = os(&[
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk-canary-2"),
            ("TOOLGATE_TEST_API_KEY", "sk-canary-1"),
            ("LANG", "C.UTF-8"),
            ("HOME", "/root"),
            ("BASH_ENV", "/tmp/evil"),
        ]);
        let inherit: Vec<String> = DEFAULT_INHERIT.iter().map(|s| s.to_string()).collect();
        let env = build(
            parent,
            &inherit,
            &BTreeMap::new(),
            Path::new("/tmp/p"),
            Path::new("/tmp/h"),
            None,
        );
        let get = |k: &str| env.get(&OsString::from(k)).map(|v| v.to_str().unwrap());
        assert_eq!(get("PATH"), Some("/bin"));
        assert_eq!(get("LANG"), Some("C.UTF-8"));
        assert_eq!(get("HOME"), Some("/tmp/h"));
        assert_eq!(get("TMPDIR"), Some("/tmp/p"));
        assert_eq!(get("PYTHONNOUSERSITE"), Some("1"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("core.hooksPath"));
        for secret in ["OPENAI_API_KEY", "TOOLGATE_TEST_API_KEY", "BASH_ENV"] {
            assert_eq!(get(secret), None);
        }
        let text = format!("{env:?}");
        assert!(!text.contains("sk-canary"));
    }

    #[test]
    fn path_falls_back_and_fixed_variables_win() {
        let fixed = BTreeMap::from([("LANG".to_string(), "C".to_string())]);
        let env = build(
            os(&[("LANG", "de_DE")]),
            &["LANG".to_string()],
            &fixed,
            Path::new("/t"),
            Path::new("/h"),
            None,
        );
        assert_eq!(env[&OsString::from("PATH")], OsString::from(FALLBACK_PATH));
        assert_eq!(env[&OsString::from("LANG")], OsString::from("C"));
    }
}

#[cfg(test)]
mod pinned_tests {
    use super::GIT_CONFIG;
    use toolgate_core::pattern::program::{git_setting_is_harmless, GIT_PINNED_SETTINGS};

    /// The command grammar lets `git -c KEY=VALUE` through when VALUE is what the sandbox
    /// pins KEY to: its table must be the sandbox's.
    #[test]
    fn the_grammar_knows_the_values_the_sandbox_pins() {
        assert_eq!(GIT_CONFIG.len(), GIT_PINNED_SETTINGS.len());
        for (key, value) in GIT_CONFIG {
            assert!(
                git_setting_is_harmless(&format!("{key}={value}")),
                "{key}={value}"
            );
            assert!(!git_setting_is_harmless(&format!("{key}=id")), "{key}=id");
        }
    }
}
