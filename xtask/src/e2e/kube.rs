//! kubectl, of the API server's own minor, as the harness and the tests talk to the cluster.

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[derive(Debug, Clone)]
pub struct Kubectl {
    pub bin: PathBuf,
    pub kubeconfig: PathBuf,
}

/// What kubectl answered: its exit, stdout and stderr.
#[derive(Debug, Clone)]
pub struct Answer {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Answer {
    fn from(o: Output) -> Self {
        Self {
            ok: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Kubectl {
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg(format!("--kubeconfig={}", self.kubeconfig.display()));
        cmd
    }

    /// Runs kubectl with `args`, `input` on its stdin.
    pub fn run(&self, args: &[&str], input: Option<&str>) -> Answer {
        let mut cmd = self.command();
        cmd.args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let Ok(mut child) = cmd.spawn() else {
            return Answer {
                ok: false,
                stdout: String::new(),
                stderr: format!("cannot run {}", self.bin.display()),
            };
        };
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            let _ = stdin.write_all(text.as_bytes());
        }
        child.wait_with_output().map_or_else(
            |e| Answer {
                ok: false,
                stdout: String::new(),
                stderr: e.to_string(),
            },
            Answer::from,
        )
    }

    /// `kubectl get --raw PATH`.
    pub fn raw(&self, path: &str) -> Result<String, String> {
        let a = self.run(&["get", "--raw", path], None);
        if a.ok { Ok(a.stdout) } else { Err(a.stderr) }
    }

    /// Server-side apply of a YAML stream, as the README tells users to apply a bundle.
    pub fn apply(&self, yaml: &str, extra: &[&str]) -> Answer {
        let mut args = vec![
            "apply",
            "--server-side",
            "--field-manager=raykueue-e2e",
            "-f",
            "-",
        ];
        args.extend_from_slice(extra);
        self.run(&args, Some(yaml))
    }

    /// `kubectl get … -o json`, parsed.
    pub fn get_json(&self, args: &[&str]) -> Result<Value, String> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let a = self.run(&all, None);
        if !a.ok {
            return Err(a.stderr);
        }
        serde_json::from_str(&a.stdout).map_err(|e| format!("kubectl get answered no JSON: {e}"))
    }

    /// Every item of a list (`kubectl get KIND -A`).
    pub fn items(&self, args: &[&str]) -> Result<Vec<Value>, String> {
        Ok(self
            .get_json(args)?
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }
}
