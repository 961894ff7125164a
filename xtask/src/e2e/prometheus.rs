//! A real Prometheus on the control plane: Debian's `prometheus` package, on PATH where
//! `.ci/run` installs it (the tier builds only what the Go module proxy serves), scraping the control plane's Kueue
//! with the scrape job the Prometheus Operator would write for the bundle's ServiceMonitor.
//!
//! The translation is the operator's (prometheus-operator/prometheus-operator@v0.93.0
//! `pkg/prometheus/promcfg.go`, `generateServiceMonitorConfig`): job name
//! `serviceMonitor/<namespace>/<name>/<i>`; the endpoint's scheme, path, bearer token file and
//! TLS settings; the target labels `namespace`, `service`, `job` (the Service's name when no
//! `jobLabel`) and `endpoint` (the port's name). Where the operator discovers the Service's
//! endpoints, the harness resolves the selector itself against the Services Kueue's chart
//! renders (a ServiceMonitor that selects none, or names a port the Service lacks, is an
//! error) and scrapes the loopback address Kueue listens on: the process has no pod, so the
//! `pod` and `container` labels are absent.

use super::cluster::Cluster;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The `prometheus` program on PATH, if any.
pub fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("prometheus"))
        .find(|p| p.is_file())
}

/// The scrape job of endpoint `index` of `monitor` for the Service of `services` it selects,
/// scraped at `address` with the bearer token in `token_file`.
pub fn scrape_job(
    monitor: &Value,
    index: usize,
    services: &[Value],
    address: &str,
    token_file: &Path,
) -> Result<Value, String> {
    let spec = &monitor["spec"];
    let name = monitor["metadata"]["name"].as_str().unwrap_or_default();
    let service = selected(spec, services)
        .ok_or_else(|| format!("ServiceMonitor {name} selects no Service of the chart"))?;
    let endpoint = &spec["endpoints"][index];
    let port = endpoint["port"]
        .as_str()
        .ok_or_else(|| format!("ServiceMonitor {name} endpoint {index} names no port"))?;
    let has_port = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["name"] == port);
    let service_name = service["metadata"]["name"].as_str().unwrap_or_default();
    if !has_port {
        return Err(format!(
            "ServiceMonitor {name} scrapes port {port}, which Service {service_name} lacks"
        ));
    }
    let mut job = Map::new();
    job.insert(
        "job_name".into(),
        json!(format!(
            "serviceMonitor/{}/{name}/{index}",
            monitor["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
        )),
    );
    job.insert(
        "scheme".into(),
        endpoint.get("scheme").cloned().unwrap_or(json!("http")),
    );
    job.insert(
        "metrics_path".into(),
        endpoint.get("path").cloned().unwrap_or(json!("/metrics")),
    );
    if endpoint.get("bearerTokenFile").is_some() {
        job.insert(
            "authorization".into(),
            json!({"type": "Bearer", "credentials_file": token_file.display().to_string()}),
        );
    }
    if let Some(skip) = endpoint["tlsConfig"]["insecureSkipVerify"].as_bool() {
        job.insert("tls_config".into(), json!({"insecure_skip_verify": skip}));
    }
    job.insert(
        "static_configs".into(),
        json!([{
            "targets": [address],
            "labels": {
                "namespace": service["metadata"]["namespace"],
                "service": service_name,
                "job": service_name,
                "endpoint": port,
            },
        }]),
    );
    Ok(Value::Object(job))
}

/// The first Service in the monitor's namespaces whose labels include its `matchLabels`.
fn selected<'a>(spec: &Value, services: &'a [Value]) -> Option<&'a Value> {
    let namespaces: Vec<&Value> = spec["namespaceSelector"]["matchNames"]
        .as_array()
        .map(|n| n.iter().collect())
        .unwrap_or_default();
    let wanted = spec["selector"]["matchLabels"].as_object()?;
    services.iter().find(|s| {
        let labels = &s["metadata"]["labels"];
        namespaces.contains(&&s["metadata"]["namespace"])
            && wanted.iter().all(|(k, v)| &labels[k] == v)
    })
}

/// A Prometheus process of the control plane, stopped with it.
#[derive(Debug)]
pub struct Prometheus {
    pub port: u16,
}

impl Prometheus {
    /// Starts Prometheus with `jobs`, scraping every second, and waits until it is ready.
    pub fn start(cluster: &Cluster, bin: &Path, jobs: &[Value]) -> Result<Self, String> {
        let dir = cluster.dir.join("prometheus");
        std::fs::create_dir_all(dir.join("data")).map_err(|e| e.to_string())?;
        // JSON is YAML: Prometheus reads its configuration with a YAML parser.
        let config = json!({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "scrape_configs": jobs,
        });
        let path = dir.join("prometheus.yml");
        std::fs::write(&path, config.to_string()).map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("no free loopback port: {e}"))?;
        let mut cmd = Command::new(bin);
        cmd.arg(format!("--config.file={}", path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn");
        cluster.spawn("prometheus", cmd)?;
        cluster.wait_ready("prometheus", Duration::from_secs(60), || {
            super::cluster::http_get(port, "/-/ready").is_some()
        })?;
        Ok(Self { port })
    }

    /// The result of an instant query (`data.result`), or Prometheus's error.
    pub fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/query?query={}", encode(expr));
        let body = http_get_any(self.port, &path)
            .ok_or_else(|| format!("Prometheus did not answer the query {expr}"))?;
        let answer: Value = serde_json::from_str(&body)
            .map_err(|e| format!("Prometheus answered {expr} with no JSON ({e}): {body}"))?;
        if answer["status"] != "success" {
            return Err(format!(
                "Prometheus refused {expr}: {}",
                answer["error"].as_str().unwrap_or(&body)
            ));
        }
        Ok(answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    /// Waits until every job's target is up, failing with the targets' last errors.
    pub fn wait_up(&self, timeout: Duration) -> Result<(), String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let targets = http_get_any(self.port, "/api/v1/targets")
                .and_then(|b| serde_json::from_str::<Value>(&b).ok())
                .unwrap_or_default();
            let active = targets["data"]["activeTargets"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !active.is_empty() && active.iter().all(|t| t["health"] == "up") {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                let errors: Vec<String> = active
                    .iter()
                    .map(|t| {
                        format!(
                            "{}: {} {}",
                            t["scrapePool"].as_str().unwrap_or_default(),
                            t["health"].as_str().unwrap_or_default(),
                            t["lastError"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                return Err(format!(
                    "Prometheus's targets are not up within {} s: {}",
                    timeout.as_secs(),
                    errors.join("; ")
                ));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// A GET on loopback whose body is returned whatever the status (Prometheus answers a refused
/// query with 400 and a JSON error).
fn http_get_any(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(500),
    )
    .ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

/// Percent-encodes a query parameter (RFC 3986 unreserved characters kept).
fn encode(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// PromQL keywords that precede a parenthesised list of label names, not an expression.
const LABEL_LISTS: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// Words of PromQL that are neither metrics nor label names: the binary operators and
/// modifiers, and the aggregations, whose `(` may follow a `by (…)` list.
const KEYWORDS: [&str; 17] = [
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

/// The vector selectors of a PromQL expression (`name{matchers}` or a bare name), in order:
/// identifiers that are not functions, keywords or label lists, with their braces. Strings,
/// ranges and durations are skipped.
pub fn selectors(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            i = skip_string(&chars, i);
        } else if c == '[' {
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_:".contains(chars[i])) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let next = chars.get(j).copied();
            if LABEL_LISTS.contains(&word.as_str()) {
                if next == Some('(') {
                    i = close(&chars, j);
                }
            } else if next == Some('(') || KEYWORDS.contains(&word.as_str()) {
                // A function or aggregation's name, or an operator.
            } else if next == Some('{') {
                let end = close(&chars, j);
                out.push(format!(
                    "{word}{}",
                    chars[j..end].iter().collect::<String>()
                ));
                i = end;
            } else {
                out.push(word);
            }
        } else if c == '{' {
            // A selector without a name (`{__name__=…}`).
            let end = close(&chars, i);
            out.push(chars[i..end].iter().collect());
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The index after the string starting at `i`.
fn skip_string(chars: &[char], i: usize) -> usize {
    let quote = chars[i];
    let mut k = i + 1;
    while k < chars.len() && chars[k] != quote {
        if chars[k] == '\\' {
            k += 1;
        }
        k += 1;
    }
    k + 1
}

/// The index after the bracket that closes the one at `open`, strings skipped.
fn close(chars: &[char], open: usize) -> usize {
    let (o, c) = (chars[open], if chars[open] == '(' { ')' } else { '}' });
    let mut depth = 0;
    let mut k = open;
    while k < chars.len() {
        match chars[k] {
            '"' | '\'' => {
                k = skip_string(chars, k);
                continue;
            }
            x if x == o => depth += 1,
            x if x == c => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
        k += 1;
    }
    chars.len()
}
