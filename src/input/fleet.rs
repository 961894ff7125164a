//! A fleet file (`kind: Fleet`): read with positions and checked against its schema like a
//! profile, then each member profile it names resolved (a shipped name or a path relative to
//! the fleet file), read and typed. Checking the members, alone and against each other, is the
//! checks' work (`checks::fleet`).

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::pointer::{Pointer, field_path, ptr};
use crate::input::load::{self, Loaded};
use crate::input::overlay;
use crate::input::resolve::{self, Resolved};
use crate::input::schema::{self, Document};
use crate::input::scripts::{self, ScriptFiles};
use crate::profile::fleet::Fleet;
use crate::profile::{Profile, Quantity, Role};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Whether a file is a fleet rather than a profile: a top-level `kind: Fleet` line. Read from
/// the text, so a profile is parsed once; a fleet written in flow style is read as a profile,
/// whose schema check then names `kind`.
pub(crate) fn is_fleet(resolved: &Resolved) -> bool {
    matches!(
        super::kind::kind_of(&resolved.source.text),
        Some((super::kind::Kind::Fleet, _))
    )
}

/// One member profile, read and typed (not yet checked).
#[derive(Debug)]
pub(crate) struct MemberInput {
    /// `manager`, or the worker's name.
    pub(crate) name: String,
    /// Where the fleet file names this member's profile (a JSON pointer into the fleet file).
    pub(crate) pointer: Pointer,
    /// What the profile file is: a shipped name's embedded path, or the file's canonical path
    /// (two members with one identity are one profile).
    pub(crate) identity: String,
    pub(crate) loaded: Loaded,
    pub(crate) profile: Profile,
    pub(crate) scripts: ScriptFiles,
}

/// A fleet file and its members, read.
#[derive(Debug)]
pub(crate) struct FleetInput {
    pub(crate) loaded: Loaded,
    pub(crate) fleet: Fleet,
    /// The manager first, then the workers in fleet order.
    pub(crate) members: Vec<MemberInput>,
}

/// The fleet file's schema, generated from its types.
pub(crate) fn fleet_schema() -> &'static Value {
    static S: OnceLock<Value> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = serde_json::to_value(schemars::schema_for!(Fleet)).unwrap_or_default();
        schema::strip_null(&mut s);
        s
    })
}

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| schema::compile_schema(fleet_schema()))
}

/// Read a fleet file and every member profile it names. Every problem found in any of them is
/// reported at once.
pub(crate) fn read(resolved: &Resolved) -> Result<FleetInput, Vec<Diagnostic>> {
    let loaded = load::parse(&resolved.source)?;
    let doc = Document {
        validator: validator(),
        schema: fleet_schema(),
        kind: "Fleet",
    };
    let fleet: Fleet = schema::check_document(&loaded, &doc)?;
    let mut refs = vec![(
        "manager".to_owned(),
        ptr!["manager", "profile"],
        fleet.manager.profile.clone(),
    )];
    refs.extend(fleet.workers.iter().enumerate().map(|(i, w)| {
        (
            w.name.to_string(),
            ptr!["workers", i, "profile"],
            w.profile.clone(),
        )
    }));
    let mut members = Vec::new();
    let mut errors = Vec::new();
    for (name, pointer, reference) in refs {
        let member = resolve::relative(&reference, resolved.base_dir.as_deref(), "name")
            .map_err(|msg| {
                vec![
                    loaded
                        .at_value(
                            Diagnostic::new(
                                &codes::FLEET_MEMBER_UNREADABLE,
                                format!("the profile of fleet member `{name}`: {msg}"),
                            ),
                            &pointer,
                        )
                        .path(field_path(&pointer))
                        .hint("a shipped profile name (single, team, …) or a path relative to the fleet file"),
                ]
            })
            .and_then(|r| read_member(&r).map(|m| (r, m)));
        match member {
            Ok((r, (loaded, profile, scripts))) => members.push(MemberInput {
                name,
                pointer,
                identity: identity(&r),
                loaded,
                profile,
                scripts,
            }),
            Err(d) => errors.extend(d),
        }
    }
    if errors.is_empty() {
        Ok(FleetInput {
            loaded,
            fleet,
            members,
        })
    } else {
        Err(errors)
    }
}

fn identity(r: &Resolved) -> String {
    let name = r.source.name.to_string();
    match &r.base_dir {
        Some(_) => std::fs::canonicalize(&name).map_or(name, |p| p.display().to_string()),
        None => name,
    }
}

/// A member profile through the input stages, as `compile` reads a profile.
fn read_member(r: &Resolved) -> Result<(Loaded, Profile, ScriptFiles), Vec<Diagnostic>> {
    let tree =
        load::parse_tree(&r.source).and_then(|t| overlay::expand(t, r.base_dir.as_deref()))?;
    let loaded = load::flatten(tree);
    let profile = schema::typed(&loaded)?;
    let scripts = scripts::read_all(&profile, r.base_dir.as_deref());
    Ok((loaded, profile, scripts))
}

/// The name of the one ResourceFlavor of derived manager queues: no node labels, as the
/// manager runs no job pods (kueue@v0.19.2 `keps/9988-multikueue-manager-quota-automation`
/// "Treatment of ResourceFlavors": the manager's flavor choice does not reach the workers).
pub(crate) const DERIVED_FLAVOR: &str = "multikueue";

impl FleetInput {
    /// Complete the members for their parts in the fleet: the manager's queues derived from the
    /// workers' when its profile has none, and every member's [`Role`] set.
    ///
    /// Derived queues: one LocalQueue per (namespace, name) any worker serves, in fleet order;
    /// each with a ClusterQueue of the same name holding, per resource, the sum of the nominal
    /// quotas (all flavors) of the ClusterQueues behind that LocalQueue on every worker — what
    /// the workers guarantee together. With several, they share one cohort named after the
    /// fleet, so the manager lends between them as the workers' team queues lend to each other.
    pub(crate) fn complete(&mut self) {
        let fleet = std::sync::Arc::new(self.fleet.clone());
        let (manager, workers) = self.members.split_at_mut(1);
        let manager = &mut manager[0];
        if manager.profile.queues.is_none() {
            derive_queues(
                &mut manager.profile,
                workers.iter().map(|w| &w.profile),
                &fleet,
            );
        }
        let frameworks = manager
            .profile
            .operators
            .kueue
            .as_ref()
            .map(|k| k.frameworks.clone())
            .unwrap_or_default();
        manager.profile.role = Some(Role::Manager(fleet.clone()));
        for w in workers {
            w.profile.role = Some(Role::Worker {
                fleet: fleet.clone(),
                name: crate::profile::Dns1123Label(w.name.clone()),
                frameworks: frameworks.clone(),
            });
        }
    }
}

/// Each (namespace, LocalQueue) the workers serve, in fleet order, with the sum of the nominal
/// quotas behind it on every worker.
pub(crate) fn served_queues<'a>(
    workers: impl Iterator<Item = &'a Profile>,
) -> Vec<((String, String), BTreeMap<String, Quantity>)> {
    let mut out: Vec<((String, String), BTreeMap<String, Quantity>)> = Vec::new();
    for w in workers {
        for lq in w.queues.iter().flat_map(|q| &q.local_queues) {
            let ns = lq.namespace.as_deref().unwrap_or(&w.namespace);
            let key = (ns.to_owned(), lq.name.to_string());
            let at = out.iter().position(|(k, _)| *k == key).unwrap_or_else(|| {
                out.push((key, BTreeMap::new()));
                out.len() - 1
            });
            for (r, q) in w.nominal_behind(ns, &lq.name).unwrap_or_default() {
                let sum = out[at].1.entry(r).or_insert_with(Quantity::zero);
                *sum = sum.plus(q);
            }
        }
    }
    out
}

fn derive_queues<'a>(
    manager: &mut Profile,
    workers: impl Iterator<Item = &'a Profile>,
    fleet: &Fleet,
) {
    let served = served_queues(workers);
    let unique_names = {
        let mut names: Vec<&str> = served.iter().map(|((_, n), _)| n.as_str()).collect();
        names.sort_unstable();
        names.windows(2).all(|w| w[0] != w[1])
    };
    let cq_name = |ns: &str, name: &str| {
        if unique_names {
            name.to_owned()
        } else {
            format!("{ns}-{name}")
        }
    };
    let several = served.len() > 1;
    let cluster_queues: Vec<Value> = served
        .iter()
        .map(|((ns, name), quota)| {
            let resources: Vec<Value> = quota
                .iter()
                .map(|(r, q)| serde_json::json!({"name": r, "nominalQuota": q}))
                .collect();
            let mut cq = serde_json::json!({
                "name": cq_name(ns, name),
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "resourceGroups": [{
                    "coveredResources": quota.keys().collect::<Vec<_>>(),
                    "flavors": [{"name": DERIVED_FLAVOR, "resources": resources}],
                }],
            });
            if several {
                cq["cohortName"] = serde_json::json!(fleet.name);
            }
            cq
        })
        .collect();
    let local_queues: Vec<Value> = served
        .iter()
        .map(|((ns, name), _)| {
            serde_json::json!({"name": name, "namespace": ns, "clusterQueue": cq_name(ns, name)})
        })
        .collect();
    if served.is_empty() {
        return;
    }
    let queues = serde_json::json!({
        "mode": if several { "team" } else { "single" },
        "clusterQueues": cluster_queues,
        "localQueues": local_queues,
    });
    // The values are built from typed worker profiles, so they type; a failure would be a bug
    // here, and leaving the queues out makes the manager's checks say what is missing.
    if let Ok(q) = serde_json::from_value(queues) {
        manager.queues = Some(q);
    }
    if !manager
        .flavors
        .iter()
        .any(|f| f.name.as_str() == DERIVED_FLAVOR)
        && let Ok(f) = serde_json::from_value(serde_json::json!({"name": DERIVED_FLAVOR}))
    {
        manager.flavors.push(f);
    }
}
