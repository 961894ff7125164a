//! The scenario file of `raykueue simulate`: its types (the JSON Schema is generated from
//! them, as for the profile), how it is read (the profile's loader, schema check and located
//! diagnostics), and the checks against the profile it runs on (RK6xx: queues, priority
//! classes and `from` workloads that name nothing).

use crate::base::codes;
use crate::base::codes::Code;
use crate::base::diagnostic::{Diagnostic, did_you_mean};
use crate::base::pointer::field_path;
use crate::base::pointer::ptr;
use crate::input::load::{self, Loaded};
use crate::input::schema::{self as schema_check, Document};
use crate::profile::{ApiVersion, Dns1123Subdomain, Profile, QualifiedName, Quantity};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ScenarioKind {
    Scenario,
}

/// A `simulate` scenario: workloads submitted to a profile's queues over time.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Format version: `raykueue.io/v1alpha1`.
    pub api_version: ApiVersion,
    pub kind: ScenarioKind,
    /// The scenario's name, for reports.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Free text for readers.
    #[serde(default)]
    pub description: Option<String>,
    /// Submissions; their order in the file does not matter.
    #[schemars(length(min = 1, max = 100_000))]
    pub workloads: Vec<ScenarioWorkload>,
}

/// One submission.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioWorkload {
    /// Unique in the scenario.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// A LocalQueue of the profile (in the profile's namespace).
    pub queue: Dns1123Subdomain,
    /// A WorkloadPriorityClass of the profile.
    #[serde(default)]
    pub(crate) priority_class: Option<Dns1123Subdomain>,
    /// A plain priority instead of `priorityClass`; 0 when neither is given.
    #[serde(default)]
    pub priority: Option<i32>,
    /// Seconds from the start of the scenario (the workload's creation time).
    #[schemars(range(max = 1_000_000_000_000u64))]
    pub(crate) submit_at: u64,
    /// Seconds of run time once admitted; a preempted workload starts over.
    #[schemars(range(min = 1, max = 1_000_000_000_000u64))]
    pub run_for: u64,
    /// What Kueue counts: `count` pods with `requests` each, per pod set.
    #[serde(default)]
    #[schemars(length(min = 1, max = 18))]
    pub pod_sets: Option<Vec<ScenarioPodSet>>,
    /// Instead of `podSets`: a workload of the profile, with the pod sets Kueue builds for it
    /// (head, worker groups × replicas, the K8sJobMode submitter).
    #[serde(default)]
    pub from: Option<Dns1123Subdomain>,
}

/// One pod set of a submission.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioPodSet {
    #[schemars(length(min = 1, max = 63))]
    pub name: String,
    /// Number of pods.
    #[schemars(range(max = 1_000_000))]
    pub count: u32,
    /// What one pod requests (Kubernetes quantities).
    #[serde(default)]
    pub requests: BTreeMap<QualifiedName, Quantity>,
}

fn schema() -> &'static Value {
    static S: OnceLock<Value> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = serde_json::to_value(schemars::schema_for!(Scenario)).unwrap_or_default();
        schema_check::strip_null(&mut s);
        s
    })
}

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| schema_check::compile_schema(schema()))
}

/// Why a scenario could not be read: I/O (exit 2) or invalid content (exit 1).
#[derive(Debug)]
pub enum ReadError {
    Io(String),
    Invalid(Vec<Diagnostic>),
}

/// Read, parse and schema-check a scenario file.
pub fn read(path: &str) -> Result<(Loaded, Scenario), ReadError> {
    let bytes =
        std::fs::read(path).map_err(|e| ReadError::Io(format!("cannot read {path}: {e}")))?;
    let source = load::decode_scenario(path, &bytes).map_err(|d| ReadError::Invalid(vec![d]))?;
    parse(&source).map_err(ReadError::Invalid)
}

/// Parse and schema-check a scenario already in memory.
pub fn parse(source: &crate::base::source::Source) -> Result<(Loaded, Scenario), Vec<Diagnostic>> {
    if source
        .text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Err(vec![
            Diagnostic::new(&codes::EMPTY_INPUT, "the scenario is empty")
                .at(source, source.pos_at(0))
                .hint("a scenario starts with `apiVersion: raykueue.io/v1alpha1`, `kind: Scenario` and lists `workloads`"),
        ]);
    }
    let loaded = load::parse(source)?;
    let doc = Document {
        validator: validator(),
        schema: schema(),
        kind: "Scenario",
    };
    let scenario = schema_check::check_document(&loaded, &doc)?;
    Ok((loaded, scenario))
}

/// The checks of a scenario against the profile it runs on, every finding located.
pub fn against_profile(profile: &Profile, loaded: &Loaded, scenario: &Scenario) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut report = |info: &'static Code, pointer: &str, message: String, hint: Option<String>| {
        let mut d = loaded
            .at_value(Diagnostic::new(info, message), pointer)
            .path(field_path(pointer));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        out.push(d);
    };
    let hint_for = |name: &str, known: &[&str], what: &str| {
        did_you_mean(name, known.iter().copied()).map_or_else(
            || {
                if known.is_empty() {
                    format!("the profile defines no {what}")
                } else {
                    format!("defined: {}", known.join(", "))
                }
            },
            |s| format!("did you mean `{s}`?"),
        )
    };
    // A scenario submits in the profile's namespace, as its workloads do by default.
    let queues: Vec<&str> = profile
        .queues
        .as_ref()
        .map(|q| {
            q.local_queues
                .iter()
                .filter(|l| l.namespace.as_ref().is_none_or(|n| *n == profile.namespace))
                .map(|l| l.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let classes: Vec<&str> = profile
        .priority_classes
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let workloads: Vec<&str> = profile.workloads.iter().map(|w| w.name.as_str()).collect();
    let mut seen = BTreeSet::new();
    for (i, w) in scenario.workloads.iter().enumerate() {
        let base = ptr!["workloads", i];
        if !seen.insert(w.name.as_str()) {
            report(
                &codes::SCENARIO_DUPLICATE_WORKLOAD,
                &base.at("name"),
                format!("a workload named `{}` is already in the scenario", w.name),
                Some("give each submission its own name".into()),
            );
        }
        if !queues.contains(&w.queue.as_str()) {
            report(
                &codes::UNKNOWN_QUEUE,
                &base.at("queue"),
                format!(
                    "`{}` names no LocalQueue of the profile in its namespace `{}`",
                    w.queue, profile.namespace
                ),
                Some(hint_for(&w.queue, &queues, "LocalQueue")),
            );
        }
        if let Some(pc) = &w.priority_class
            && !classes.contains(&pc.as_str())
        {
            report(
                &codes::UNKNOWN_PRIORITY_CLASS,
                &base.at("priorityClass"),
                format!("`{pc}` names no WorkloadPriorityClass of the profile"),
                Some(hint_for(pc, &classes, "WorkloadPriorityClass")),
            );
        }
        if w.priority_class.is_some() && w.priority.is_some() {
            report(
                &codes::PRIORITY_TWICE,
                &base.at("priority"),
                "both `priority` and `priorityClass` are given".into(),
                Some("keep one: the class's value or a plain number".into()),
            );
        }
        match (&w.pod_sets, &w.from) {
            (Some(_), Some(_)) | (None, None) => report(
                &codes::PODS_OR_FROM,
                &base,
                format!(
                    "workload `{}` needs exactly one of `podSets` and `from`",
                    w.name
                ),
                Some("list the pod sets, or name a workload of the profile with `from`".into()),
            ),
            (None, Some(from)) if !workloads.contains(&from.as_str()) => report(
                &codes::UNKNOWN_FROM,
                &base.at("from"),
                format!("`{from}` names no workload of the profile"),
                Some(hint_for(from, &workloads, "workloads")),
            ),
            _ => {}
        }
        if let Some(sets) = &w.pod_sets {
            let mut names = BTreeSet::new();
            for (j, ps) in sets.iter().enumerate() {
                if !names.insert(ps.name.as_str()) {
                    report(
                        &codes::SCENARIO_DUPLICATE_WORKLOAD,
                        &ptr!(base; "podSets", j, "name"),
                        format!("two pod sets of `{}` are named `{}`", w.name, ps.name),
                        Some("Kueue needs unique pod set names within a workload".into()),
                    );
                }
            }
        }
    }
    out
}
