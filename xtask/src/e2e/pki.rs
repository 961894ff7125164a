//! The certificates a control plane on loopback needs, made with the `openssl` command: one CA
//! that signs the API server's serving certificate, the cluster-admin client certificate every
//! component uses, and the serving certificate of the webhook servers (Kueue's and KubeRay's),
//! which the API server trusts through the webhook configurations' `caBundle`. Plus the key
//! pair service-account tokens are signed with.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of one control plane's certificates.
#[derive(Debug, Clone)]
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }
    pub fn pem(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.crt"))
    }
    pub fn key(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.key"))
    }
    /// The CA, base64-encoded, as a webhook configuration's `caBundle` wants it.
    pub fn ca_bundle(&self) -> Result<String, String> {
        let out = Command::new("openssl")
            .args(["base64", "-A", "-in"])
            .arg(self.ca())
            .output()
            .map_err(|e| format!("cannot run openssl: {e}"))?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

fn openssl(args: &[&str], cwd: &Path) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(cwd)
        .output()
        .map_err(|e| {
            format!("cannot run openssl ({e}): the harness makes its certificates with it")
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A key and a certificate signed by the CA, with the given subject and extensions.
fn signed(dir: &Path, name: &str, subject: &str, extensions: &str) -> Result<(), String> {
    let key = format!("{name}.key");
    let csr = format!("{name}.csr");
    let crt = format!("{name}.crt");
    let ext = format!("{name}.ext");
    std::fs::write(dir.join(&ext), extensions).map_err(|e| e.to_string())?;
    openssl(
        &[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            subject,
        ],
        dir,
    )?;
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "30",
            "-out",
            &crt,
            "-extfile",
            &ext,
        ],
        dir,
    )
}

/// Makes every certificate in `dir`.
pub fn make(dir: &Path) -> Result<Pki, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "30",
            "-subj",
            "/CN=raykueue-e2e-ca",
        ],
        dir,
    )?;
    let server = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n";
    signed(
        dir,
        "apiserver",
        "/CN=kube-apiserver",
        &format!(
            "{server}subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
        ),
    )?;
    signed(
        dir,
        "webhook",
        "/CN=webhooks",
        &format!("{server}subjectAltName=IP:127.0.0.1,DNS:localhost\n"),
    )?;
    signed(
        dir,
        "admin",
        "/O=system:masters/CN=raykueue-e2e-admin",
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
    )?;
    openssl(
        &[
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
            "sa.key",
        ],
        dir,
    )?;
    openssl(&["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir)?;
    Ok(Pki {
        dir: dir.to_path_buf(),
    })
}
