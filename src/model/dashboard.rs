//! The Grafana dashboard made from the profile, built as data: one row per ClusterQueue (usage
//! against nominal quota and borrowing limit per flavor and resource, pending and admitted
//! workloads, admission wait time, preemptions and evictions by reason), one per cohort
//! (its queues' usage against their nominal quota, admitted workloads), and one per GPU pool
//! (GPU utilisation and memory, and which namespaces' pods hold the GPUs). Queries name only
//! metrics and labels of `facts::metrics`; every panel reads the `datasource` variable.

use crate::facts::metrics::node_label;
use crate::facts::monitoring::Resolved;
use crate::profile::{GpuMetrics, Profile};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Grafana's dashboard JSON schema version raykueue writes (Grafana 11's; the
/// kube-prometheus-stack chart's Grafana reads it and migrates older ones).
pub(crate) const SCHEMA_VERSION: u64 = 39;
/// The template variable every panel's datasource names.
pub(crate) const DATASOURCE_VAR: &str = "datasource";

/// Panels laid out left to right, three to a line, each row header across the width.
/// A panel as Grafana's JSON has it, its keys in the order written. Typed rather than built
/// as `serde_json::Value`: a dashboard has hundreds of small objects, and each key of a
/// `Value` map is hashed with SipHash.
#[derive(Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // Most panels are the large variant: boxing buys nothing.
enum Panel {
    Row(Row),
    Series(Series),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    #[serde(rename = "type")]
    ty: &'static str,
    id: u64,
    title: String,
    collapsed: bool,
    grid_pos: GridPos,
    panels: [u8; 0],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Series {
    #[serde(rename = "type")]
    ty: &'static str,
    id: u64,
    title: String,
    datasource: Datasource,
    grid_pos: GridPos,
    field_config: FieldConfig,
    options: Options,
    targets: Vec<Target>,
}

/// `{"type": "prometheus", "uid": "${datasource}"}`: every panel and query reads the variable
/// `DATASOURCE_VAR` (`tests::the_datasource_is_the_variable`).
#[derive(Serialize)]
struct Datasource {
    #[serde(rename = "type")]
    ty: &'static str,
    uid: &'static str,
}

const DATASOURCE: Datasource = Datasource {
    ty: "prometheus",
    uid: "${datasource}",
};

/// `{"defaults": {"unit": …}, "overrides": []}`.
#[derive(Serialize)]
struct FieldConfig {
    defaults: Unit,
    overrides: [u8; 0],
}

#[derive(Serialize)]
struct Unit {
    unit: &'static str,
}

/// `{"legend": {"displayMode": "list", "placement": "bottom"}}`.
#[derive(Serialize)]
struct Options {
    legend: Legend,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Legend {
    display_mode: &'static str,
    placement: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Target {
    datasource: Datasource,
    expr: String,
    legend_format: String,
    ref_id: String,
}

#[derive(Serialize)]
struct GridPos {
    h: u64,
    w: u64,
    x: u64,
    y: u64,
}

/// The rows one dashboard holds at most; a profile with more gets several dashboards, each a
/// ConfigMap of its own. Kubernetes refuses a ConfigMap over 1 MiB (RK901), and a client-side
/// `kubectl apply` (as `up.sh` runs it) refuses one whose last-applied annotation exceeds
/// 256 KiB; one row of a ClusterQueue with two or three resources takes 6 to 8 KiB of JSON,
/// so 25 rows stay below both.
pub(crate) const MAX_ROWS: usize = 25;

#[derive(Default)]
struct Layout {
    /// The dashboards filled so far.
    pages: Vec<Vec<Panel>>,
    panels: Vec<Panel>,
    rows: usize,
    next_id: u64,
    y: u64,
    x: u64,
}

impl Layout {
    /// The panels of every dashboard, one list per dashboard.
    fn finish(mut self) -> Vec<Vec<Panel>> {
        if !self.panels.is_empty() || self.pages.is_empty() {
            self.pages.push(self.panels);
        }
        self.pages
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn row(&mut self, title: String) {
        if self.rows == MAX_ROWS {
            self.pages.push(std::mem::take(&mut self.panels));
            (self.rows, self.next_id, self.y, self.x) = (0, 0, 0, 0);
        }
        self.rows += 1;
        if self.x > 0 {
            self.y += 8;
            self.x = 0;
        }
        let id = self.id();
        self.panels.push(Panel::Row(Row {
            ty: "row",
            id,
            title,
            collapsed: false,
            grid_pos: GridPos {
                h: 1,
                w: 24,
                x: 0,
                y: self.y,
            },
            panels: [],
        }));
        self.y += 1;
    }

    fn panel(&mut self, title: String, unit: &'static str, targets: Vec<(String, String)>) {
        if self.x >= 24 {
            self.x = 0;
            self.y += 8;
        }
        let id = self.id();
        let targets: Vec<Target> = targets
            .into_iter()
            .zip('A'..)
            .map(|((expr, legend_format), ref_id)| Target {
                datasource: DATASOURCE,
                expr,
                legend_format,
                ref_id: ref_id.to_string(),
            })
            .collect();
        self.panels.push(Panel::Series(Series {
            ty: "timeseries",
            id,
            title,
            datasource: DATASOURCE,
            grid_pos: GridPos {
                h: 8,
                w: 8,
                x: self.x,
                y: self.y,
            },
            field_config: FieldConfig {
                defaults: Unit { unit },
                overrides: [],
            },
            options: Options {
                legend: Legend {
                    display_mode: "list",
                    placement: "bottom",
                },
            },
            targets,
        }));
        self.x += 8;
    }
}

/// The rows raykueue draws, one method per kind.
impl Layout {
    /// A ClusterQueue's row; records the (flavor, resource) pairs its cohort holds quota of.
    fn cluster_queue<'p>(
        &mut self,
        cq: &'p crate::profile::ClusterQueue,
        cohorts: &mut BTreeMap<&'p str, BTreeSet<(&'p str, &'p str)>>,
    ) {
        let name = cq.name.as_str();
        self.row(format!("ClusterQueue {name}"));
        for rg in &cq.resource_groups {
            for f in &rg.flavors {
                for r in &f.resources {
                    let (flavor, resource) = (f.name.as_str(), r.name.as_str());
                    if let Some(c) = &cq.cohort_name {
                        cohorts
                            .entry(c.as_str())
                            .or_default()
                            .insert((flavor, resource));
                    }
                    let sel = format!(
                        "cluster_queue=\"{name}\", flavor=\"{flavor}\", resource=\"{resource}\""
                    );
                    let mut targets = vec![
                        (
                            format!("kueue_cluster_queue_resource_usage{{{sel}}}"),
                            "usage".to_owned(),
                        ),
                        (
                            format!("kueue_cluster_queue_nominal_quota{{{sel}}}"),
                            "nominal quota".to_owned(),
                        ),
                    ];
                    if cq.cohort_name.is_some() {
                        targets.push((
                            format!("kueue_cluster_queue_borrowing_limit{{{sel}}}"),
                            "borrowing limit".to_owned(),
                        ));
                    }
                    self.panel(
                        format!("{name}: {resource} on {flavor}"),
                        unit(resource),
                        targets,
                    );
                }
            }
        }
        let cq_sel = format!("cluster_queue=\"{name}\"");
        self.panel(
            format!("{name}: workloads"),
            "short",
            vec![
                (
                    format!("sum by (status) (kueue_pending_workloads{{{cq_sel}}})"),
                    "pending ({{status}})".to_owned(),
                ),
                (
                    format!("sum(kueue_admitted_active_workloads{{{cq_sel}}})"),
                    "admitted".to_owned(),
                ),
            ],
        );
        self.panel(
            format!("{name}: admission wait time"),
            "s",
            vec![
                (
                    format!("histogram_quantile(0.5, sum by (le) (rate(kueue_admission_wait_time_seconds_bucket{{{cq_sel}}}[5m])))"),
                    "p50".to_owned(),
                ),
                (
                    format!("histogram_quantile(0.9, sum by (le) (rate(kueue_admission_wait_time_seconds_bucket{{{cq_sel}}}[5m])))"),
                    "p90".to_owned(),
                ),
            ],
        );
        self.panel(
            format!("{name}: preemptions and evictions"),
            "short",
            vec![
                (
                    format!("sum by (reason) (increase(kueue_preempted_workloads_total{{preempting_cluster_queue=\"{name}\"}}[1h]))"),
                    "preempted by it ({{reason}})".to_owned(),
                ),
                (
                    format!("sum by (reason) (increase(kueue_evicted_workloads_total{{{cq_sel}}}[1h]))"),
                    "evicted ({{reason}})".to_owned(),
                ),
            ],
        );
    }

    /// A cohort's row: its queues' usage against their summed nominal quota, admitted workloads.
    fn cohort(&mut self, cohort: &str, pairs: &BTreeSet<(&str, &str)>) {
        self.row(format!("Cohort {cohort}"));
        for (flavor, resource) in pairs {
            let sel = format!("cohort=\"{cohort}\", flavor=\"{flavor}\", resource=\"{resource}\"");
            self.panel(
                format!("{cohort}: {resource} on {flavor}"),
                unit(resource),
                vec![
                    (
                        format!(
                            "sum by (cluster_queue) (kueue_cluster_queue_resource_usage{{{sel}}})"
                        ),
                        "usage {{cluster_queue}}".to_owned(),
                    ),
                    (
                        format!("sum(kueue_cluster_queue_nominal_quota{{{sel}}})"),
                        "nominal quota (all queues)".to_owned(),
                    ),
                ],
            );
        }
        self.panel(
            format!("{cohort}: admitted workloads"),
            "short",
            vec![(
                format!(
                    "sum(kueue_cohort_subtree_admitted_active_workloads{{cohort=\"{cohort}\"}})"
                ),
                "admitted".to_owned(),
            )],
        );
    }

    /// A GPU pool's row, its nodes found by kube-state-metrics' pool label `label`.
    fn gpu_pool(&mut self, pool: &str, label: &str) {
        self.row(format!("GPU pool {pool}"));
        let on_pool = format!(
            "* on (node) group_left () max by (node) (kube_node_labels{{{label}=\"{pool}\"}})"
        );
        self.panel(
            format!("{pool}: GPU utilisation"),
            "percent",
            vec![(
                format!("avg by (node, gpu) (DCGM_FI_DEV_GPU_UTIL) {on_pool}"),
                "{{node}} GPU {{gpu}}".to_owned(),
            )],
        );
        self.panel(
            format!("{pool}: GPU memory used"),
            "decmbytes",
            vec![(
                format!("sum by (node, gpu) (DCGM_FI_DEV_FB_USED) {on_pool}"),
                "{{node}} GPU {{gpu}}".to_owned(),
            )],
        );
        self.panel(
            format!("{pool}: GPUs held, by namespace"),
            "short",
            vec![(
                format!("count by (exported_namespace) (DCGM_FI_DEV_GPU_UTIL{{exported_pod!=\"\"}} {on_pool})"),
                "{{exported_namespace}}".to_owned(),
            )],
        );
    }
}

/// Grafana's unit for a Kueue resource's quantities (Kueue reports memory in bytes, CPU in
/// cores, other resources as counts).
fn unit(resource: &str) -> &'static str {
    match resource {
        "memory" | "ephemeral-storage" => "bytes",
        _ => "short",
    }
}

/// A dashboard, its keys in the order written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Dashboard {
    uid: String,
    title: String,
    tags: [&'static str; 3],
    schema_version: u64,
    version: u64,
    editable: bool,
    time: Value,
    refresh: &'static str,
    templating: Value,
    annotations: Value,
    panels: Vec<Panel>,
}

/// The dashboards of a profile, as data: one, or with more than `MAX_ROWS` rows several.
fn dashboards(p: &Profile, m: &Resolved) -> Vec<Dashboard> {
    let mut l = Layout::default();
    if let Some(q) = &p.queues {
        // Per cohort: its queues, and the (flavor, resource) pairs they hold quota of.
        let mut cohorts: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
        for cq in &q.cluster_queues {
            l.cluster_queue(cq, &mut cohorts);
        }
        for (cohort, pairs) in &cohorts {
            l.cohort(cohort, pairs);
        }
    }
    if m.gpu_metrics == GpuMetrics::DcgmExporter
        && let Some(cloud) = p.cloud()
    {
        let label = node_label(cloud.words().pool_label);
        for g in cloud.node_groups().iter().filter(|g| g.gpu) {
            l.gpu_pool(g.name, &label);
        }
    }
    let pages = l.finish();
    let count = pages.len();
    pages
        .into_iter()
        .enumerate()
        .map(|(i, panels)| {
            let (uid, title) = match count {
                1 => (
                    format!("raykueue-{}", p.name),
                    format!("raykueue: {}", p.name),
                ),
                _ => (
                    format!("raykueue-{}-{}", p.name, i + 1),
                    format!("raykueue: {} ({}/{count})", p.name, i + 1),
                ),
            };
            page(uid, title, panels)
        })
        .collect()
}

/// One dashboard around its panels.
fn page(uid: String, title: String, panels: Vec<Panel>) -> Dashboard {
    Dashboard {
        uid,
        title,
        tags: ["raykueue", "kueue", "ray"],
        schema_version: SCHEMA_VERSION,
        version: 1,
        editable: true,
        time: json!({ "from": "now-6h", "to": "now" }),
        refresh: "1m",
        templating: json!({ "list": [{
            "name": DATASOURCE_VAR,
            "label": "Data source",
            "type": "datasource",
            "query": "prometheus",
            "current": {},
            "hide": 0,
        }]}),
        annotations: json!({ "list": [] }),
        panels,
    }
}

/// The dashboards' uids (their files' and ConfigMaps' names), without writing their JSON.
pub(crate) fn uids(p: &Profile, m: &Resolved) -> Vec<String> {
    dashboards(p, m).into_iter().map(|d| d.uid).collect()
}

/// Each dashboard as (uid, the text of its file: pretty-printed, with a trailing newline).
pub(crate) fn texts(p: &Profile, m: &Resolved) -> Vec<(String, String)> {
    dashboards(p, m)
        .into_iter()
        .map(|d| {
            let mut s = serde_json::to_string_pretty(&d).unwrap_or_default();
            s.push('\n');
            (d.uid, s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_datasource_is_the_variable() {
        assert_eq!(DATASOURCE.uid, format!("${{{DATASOURCE_VAR}}}"));
    }
}
