//! The profile's node pools as kwok nodes: one Node per node of each pool at its largest
//! (`count`, or `autoscale.max`), with the labels the cloud stamps and the profile's own, the
//! pool's taints and the catalogue's allocatable (`raykueue::api::cloud::pool_nodes`). kwok manages
//! only nodes annotated `kwok.x-k8s.io/node: fake`, keeps them Ready and runs the pods the
//! scheduler binds to them.

use serde_json::{Map, Value, json};

pub const KWOK_ANNOTATION: &str = "kwok.x-k8s.io/node";

/// Pods a node takes when the catalogue says nothing (the kubelet's default `maxPods`).
const MAX_PODS: &str = "110";

/// The Node objects of a profile, in pool order.
pub fn nodes(profile: &raykueue::api::profile::Profile) -> Vec<Value> {
    let mut out = Vec::new();
    for pool in raykueue::api::cloud::pool_nodes(profile) {
        for i in 0..pool.nodes {
            let name = format!("{}-{i}", pool.pool);
            let mut labels: Map<String, Value> = pool
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            labels.insert("kubernetes.io/hostname".into(), Value::String(name.clone()));
            // What every kubelet stamps besides the hostname.
            for (k, v) in [
                ("kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "amd64"),
            ] {
                labels.entry(k).or_insert_with(|| Value::String(v.into()));
            }
            labels.insert("type".into(), Value::String("kwok".into()));
            let mut resources = Map::new();
            if let Some((cpu, memory, gpus)) = &pool.allocatable {
                resources.insert("cpu".into(), Value::String(cpu.clone()));
                resources.insert("memory".into(), Value::String(memory.clone()));
                if *gpus > 0 {
                    resources.insert("nvidia.com/gpu".into(), Value::String(gpus.to_string()));
                }
            } else {
                // An instance type the catalogue lacks: room enough that placement, not size,
                // decides.
                resources.insert("cpu".into(), Value::String("64".into()));
                resources.insert("memory".into(), Value::String("256Gi".into()));
            }
            resources.insert("pods".into(), Value::String(MAX_PODS.into()));
            out.push(json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {KWOK_ANNOTATION: "fake"},
                    "labels": labels,
                },
                "spec": {"taints": pool.taints},
                "status": {
                    "allocatable": resources.clone(),
                    "capacity": resources,
                    "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "fake"},
                },
            }));
        }
    }
    out
}
