//! The recording SMTP server (aiosmtpd, `recording_smtp.py`) as a child process.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

/// A running server; killed when dropped.
pub struct SmtpServer {
    child: Child,
    /// The port on 127.0.0.1.
    pub port: u16,
    out: tempfile::TempDir,
}

impl SmtpServer {
    /// Starts the server with `args` (see the script); `None` when Python is not configured
    /// (outside CI: the test is skipped).
    pub fn start(args: &[&str]) -> Option<SmtpServer> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/recording_smtp.py");
        let mut cmd = toolgate_test_support::clients::python_script(script)?;
        let out = tempfile::tempdir().unwrap();
        cmd.arg("--out")
            .arg(out.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("starting the SMTP server");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the SMTP server printed no port within 30 s");
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the SMTP server printed {line:?}, not a port")
        });
        Some(SmtpServer { child, port, out })
    }

    /// The file `name` the server wrote in its output folder (`ca.pem`, `other-ca.pem`).
    pub fn file(&self, name: &str) -> std::path::PathBuf {
        self.out.path().join(name)
    }

    /// Every message recorded, in the order received.
    pub fn messages(&self) -> Vec<Value> {
        let mut files: Vec<_> = std::fs::read_dir(self.out.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
            .collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
