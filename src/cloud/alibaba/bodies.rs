//! The ACK OpenAPI requests of an `alibaba:` section, built as data: the VPC prerequisites
//! (`aliyun vpc CreateVpc` / `CreateVSwitch`, RPC style, flag per parameter) and the JSON
//! bodies of `aliyun cs POST /clusters` and `POST /clusters/{id}/nodepools` (ROA style).
//!
//! The `aliyun` CLI passes ROA bodies through unchecked, so the bodies are checked against
//! raykueue's own schemas, `assets/ack/*.schema.json`, written from the API reference
//! (CreateCluster, CreateClusterNodePool and the `nodepool` struct of ACK OpenAPI "CS"
//! 2015-12-15).
//!
//! IDs the cloud assigns (VPC, vSwitch, cluster) are parameters: `up.sh` learns them from the
//! responses and fills them in.

use super::{AckNodePool, Alibaba, RRSA_WEBHOOK_ADDON, config_labels, is_gpu_pool, node_taints};
use serde_json::{Map, Value, json};

/// The schema of a CreateCluster body.
pub const CREATE_CLUSTER_SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/ack/create-cluster.schema.json"
));
/// The schema of a CreateClusterNodePool body.
pub const CREATE_NODE_POOL_SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/ack/create-cluster-node-pool.schema.json"
));

/// The jq program `up.sh` runs on `ack/create-cluster.json` to add the VPC and vSwitch IDs
/// (`--arg vpc`, `--arg vsw`); tests run the same program.
pub const FILL_CLUSTER_IDS: &str = ".vpcid = $vpc | .vswitch_ids = [$vsw]";
/// The jq program `up.sh` runs on `ack/nodepool-<name>.json` to add the vSwitch ID.
pub const FILL_NODE_POOL_IDS: &str = ".scaling_group.vswitch_ids = [$vsw]";

/// The CreateCluster body: a managed cluster with no worker nodes of its own (the node pools
/// come next), Flannel networking, a public API endpoint for kubectl, SNAT so that nodes can
/// pull images, and RRSA when `identity` is set. KubeRay is not among the add-ons: Helm
/// installs it.
pub fn cluster_body(a: &Alibaba, vpc_id: &str, vswitch_id: &str) -> Value {
    let mut b = Map::new();
    b.insert("name".into(), json!(a.cluster.name.as_str()));
    b.insert("region_id".into(), json!(a.region.as_str()));
    b.insert("cluster_type".into(), json!("ManagedKubernetes"));
    b.insert(
        "cluster_spec".into(),
        json!(a.cluster.cluster_spec.as_str()),
    );
    if let Some(v) = &a.cluster.kubernetes_version {
        b.insert("kubernetes_version".into(), json!(v.as_str()));
    }
    b.insert("vpcid".into(), json!(vpc_id));
    b.insert("vswitch_ids".into(), json!([vswitch_id]));
    b.insert(
        "container_cidr".into(),
        json!(a.cluster.container_cidr.as_str()),
    );
    b.insert(
        "service_cidr".into(),
        json!(a.cluster.service_cidr.as_str()),
    );
    b.insert("snat_entry".into(), json!(true));
    b.insert("endpoint_public_access".into(), json!(true));
    let mut addons = vec![json!({"name": "flannel"})];
    if a.identity.is_some() {
        b.insert("enable_rrsa".into(), json!(true));
        addons.push(json!({"name": RRSA_WEBHOOK_ADDON}));
    }
    b.insert("addons".into(), Value::Array(addons));
    Value::Object(b)
}

/// The CreateCluster body as the bundle holds it: without the IDs only the cloud knows, which
/// `up.sh` adds with [`FILL_CLUSTER_IDS`].
pub fn cluster_body_file(a: &Alibaba) -> Value {
    let mut b = cluster_body(a, "", "");
    if let Some(m) = b.as_object_mut() {
        m.shift_remove("vpcid");
        m.shift_remove("vswitch_ids");
    }
    b
}

/// A CreateClusterNodePool body as the bundle holds it: without the vSwitch ID, which `up.sh`
/// adds with [`FILL_NODE_POOL_IDS`].
pub fn node_pool_body_file(pool: &AckNodePool) -> Value {
    let mut b = node_pool_body(pool, "");
    if let Some(m) = b["scaling_group"].as_object_mut() {
        m.shift_remove("vswitch_ids");
    }
    b
}

/// The CreateClusterNodePool body of one pool. Pay-as-you-go (`PostPaid`) instances: scale-in
/// of subscription instances removes them from the pool without releasing them (ACK "Enable
/// node auto scaling").
pub fn node_pool_body(pool: &AckNodePool, vswitch_id: &str) -> Value {
    let mut scaling = Map::new();
    scaling.insert("vswitch_ids".into(), json!([vswitch_id]));
    scaling.insert(
        "instance_types".into(),
        json!([pool.instance_type.as_str()]),
    );
    scaling.insert("instance_charge_type".into(), json!("PostPaid"));
    if let Some(size) = pool.system_disk_size {
        scaling.insert("system_disk_size".into(), json!(size));
    }
    if pool.autoscale.is_none() {
        scaling.insert("desired_size".into(), json!(pool.count.unwrap_or(0)));
    }

    let mut k8s = Map::new();
    k8s.insert("runtime".into(), json!("containerd"));
    let labels: Vec<Value> = config_labels(pool)
        .into_iter()
        .map(|(key, value)| json!({"key": key, "value": value}))
        .collect();
    if !labels.is_empty() {
        k8s.insert("labels".into(), Value::Array(labels));
    }
    let taints: Vec<Value> = node_taints(pool)
        .iter()
        .map(crate::profile::Taint::to_json)
        .collect();
    if !taints.is_empty() {
        k8s.insert("taints".into(), Value::Array(taints));
    }

    let mut b = Map::new();
    b.insert(
        "nodepool_info".into(),
        json!({"name": pool.name.as_str(), "type": "ess"}),
    );
    b.insert("scaling_group".into(), Value::Object(scaling));
    b.insert("kubernetes_config".into(), Value::Object(k8s));
    if let Some(a) = &pool.autoscale {
        b.insert(
            "auto_scaling".into(),
            json!({
                "enable": true,
                "min_instances": a.min,
                "max_instances": a.max,
                "type": if is_gpu_pool(pool) { "gpu" } else { "cpu" },
            }),
        );
    }
    Value::Object(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Alibaba {
        serde_json::from_value(json!({
            "region": "cn-hangzhou",
            "zone": "cn-hangzhou-k",
            "vpc": {"name": "kuberay-vpc", "vswitchName": "kuberay-vsw"},
            "cluster": {"name": "kuberay-gpu-cluster", "kubernetesVersion": "1.34"},
            "nodePools": [
                {"name": "cpu-pool", "instanceType": "ecs.g7.xlarge", "count": 1, "systemDiskSize": 120},
                {"name": "gpu-pool", "instanceType": "ecs.gn7i-c8g1.2xlarge", "autoscale": {"min": 0, "max": 1},
                 "driverVersion": "550.144.03"},
            ],
            "identity": {"roleName": "kuberay-data"},
        }))
        .unwrap()
    }

    fn validator(schema: &str) -> jsonschema::Validator {
        jsonschema::validator_for(&serde_json::from_str(schema).unwrap()).unwrap()
    }

    fn errors(v: &jsonschema::Validator, body: &Value) -> Vec<String> {
        v.iter_errors(body)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    #[test]
    fn the_gpu_pool_autoscales_from_zero_as_type_gpu_with_taint_and_driver_label() {
        let a = example();
        let body = node_pool_body(&a.node_pools[1], "vsw-1");
        assert_eq!(
            body["auto_scaling"],
            json!({"enable": true, "min_instances": 0, "max_instances": 1, "type": "gpu"})
        );
        assert_eq!(
            body["scaling_group"]["instance_types"],
            json!(["ecs.gn7i-c8g1.2xlarge"])
        );
        assert!(
            body["scaling_group"].get("desired_size").is_none(),
            "auto scaling sets the size"
        );
        assert_eq!(
            body["kubernetes_config"]["taints"],
            json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
        );
        assert_eq!(
            body["kubernetes_config"]["labels"],
            json!([
                {"key": "ack.aliyun.com/nvidia-driver-version", "value": "550.144.03"},
                {"key": "raykueue.io/node-pool", "value": "gpu-pool"},
            ])
        );
        let cpu = node_pool_body(&a.node_pools[0], "vsw-1");
        assert_eq!(cpu["scaling_group"]["desired_size"], 1);
        assert!(cpu.get("auto_scaling").is_none());
        assert!(cpu["kubernetes_config"].get("taints").is_none());
    }

    #[test]
    fn the_cluster_enables_rrsa_only_with_identity_and_never_installs_kuberay() {
        let mut a = example();
        let body = cluster_body(&a, "vpc-1", "vsw-1");
        assert_eq!(body["cluster_type"], "ManagedKubernetes");
        assert_eq!(body["enable_rrsa"], true);
        assert_eq!(
            body["addons"],
            json!([{"name": "flannel"}, {"name": "ack-pod-identity-webhook"}])
        );
        a.identity = None;
        let body = cluster_body(&a, "vpc-1", "vsw-1");
        assert!(body.get("enable_rrsa").is_none());
        assert_eq!(body["addons"], json!([{"name": "flannel"}]));
    }

    #[test]
    fn generated_bodies_pass_the_schemas() {
        let a = example();
        let cluster = validator(CREATE_CLUSTER_SCHEMA);
        let pool = validator(CREATE_NODE_POOL_SCHEMA);
        let body = cluster_body(&a, "vpc-bp1example", "vsw-bp1example");
        assert!(
            errors(&cluster, &body).is_empty(),
            "{:?}",
            errors(&cluster, &body)
        );
        for p in &a.node_pools {
            let body = node_pool_body(p, "vsw-bp1example");
            assert!(
                errors(&pool, &body).is_empty(),
                "{:?}",
                errors(&pool, &body)
            );
        }
    }

    #[test]
    fn the_schemas_refuse_what_the_api_refuses() {
        let a = example();
        let cluster = validator(CREATE_CLUSTER_SCHEMA);
        let pool = validator(CREATE_NODE_POOL_SCHEMA);
        let good = node_pool_body(&a.node_pools[1], "vsw-1");
        let broken = |path: &str, value: Value| {
            let mut b = good.clone();
            *b.pointer_mut(path).unwrap() = value;
            b
        };
        for bad in [
            broken("/auto_scaling/type", json!("gpu-share")),
            broken("/auto_scaling/min_instances", json!(-1)),
            broken("/kubernetes_config/taints/0/effect", json!("NO_SCHEDULE")),
            broken("/scaling_group/instance_types", json!([])),
            broken("/nodepool_info", json!({"type": "ess"})),
        ] {
            assert!(!pool.is_valid(&bad), "accepted {bad}");
        }
        let mut unknown = good.clone();
        unknown["auto_scaling"]["min_size"] = json!(0);
        assert!(!pool.is_valid(&unknown), "a misspelt key is refused");

        let good = cluster_body(&a, "vpc-1", "vsw-1");
        let mut wrong_type = good.clone();
        wrong_type["cluster_type"] = json!("Kubernetes");
        assert!(!cluster.is_valid(&wrong_type));
        let mut no_vpc = good.clone();
        no_vpc.as_object_mut().unwrap().remove("vpcid");
        assert!(!cluster.is_valid(&no_vpc));
        let mut kuberay_addon = good;
        kuberay_addon["addons"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "kuberay-operator"}));
        assert!(
            !cluster.is_valid(&kuberay_addon),
            "KubeRay comes from Helm, not the add-on"
        );
    }

    #[test]
    fn bundle_files_leave_out_only_the_cloud_assigned_ids() {
        let a = example();
        let file = cluster_body_file(&a);
        assert!(file.get("vpcid").is_none() && file.get("vswitch_ids").is_none());
        let mut filled = file.clone();
        filled["vpcid"] = json!("vpc-1");
        filled["vswitch_ids"] = json!(["vsw-1"]);
        assert_eq!(filled, cluster_body(&a, "vpc-1", "vsw-1"));
        let pool = node_pool_body_file(&a.node_pools[1]);
        assert!(pool["scaling_group"].get("vswitch_ids").is_none());
        assert!(pool["scaling_group"].get("instance_types").is_some());
    }
}
