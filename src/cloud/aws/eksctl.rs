//! The eksctl ClusterConfig (`eksctl.io/v1alpha5`) of an `aws:` section, built as data: the
//! cluster, its managed node groups with their GPU labels and taints, what the Cluster
//! Autoscaler needs to scale them from zero, and the Pod Identity association of the Ray
//! service account.
//!
//! Field names and enums: eksctl-io/eksctl@99984adb
//! `pkg/apis/eksctl.io/v1alpha5/assets/schema.json` (the file is checked against that schema
//! in tests/it/clouds.rs).

use super::{Aws, NodeGroup, config_labels, node_taints};
use serde_json::{Map, Value, json};

/// Where the file lands in the bundle.
pub(crate) const FILE: &str = "infra/eksctl-cluster.yaml";

/// The Cluster Autoscaler's service account: eksctl creates it with an IAM role (IRSA) before
/// Helm installs the chart, which is then told not to create its own.
pub(crate) const AUTOSCALER_NAMESPACE: &str = "kube-system";
pub(crate) const AUTOSCALER_SERVICE_ACCOUNT: &str = "cluster-autoscaler";

/// The Ray workloads' namespace and service account, for the Pod Identity association.
#[derive(Debug, Clone, Copy)]
pub struct RayIdentity<'a> {
    pub namespace: &'a str,
    pub service_account: &'a str,
}

/// The ClusterConfig. `ray` names the service account that `aws.identity` applies to; with
/// `aws.identity` set and no service account there is nothing to associate and the section is
/// left out (the rules report that case).
pub fn cluster_config(aws: &Aws, ray: Option<RayIdentity<'_>>) -> Value {
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(aws.cluster.name.as_str()));
    metadata.insert("region".into(), json!(aws.region.as_str()));
    if let Some(v) = &aws.cluster.kubernetes_version {
        metadata.insert("version".into(), json!(v.as_str()));
    }

    let mut config = Map::new();
    config.insert("apiVersion".into(), json!("eksctl.io/v1alpha5"));
    config.insert("kind".into(), json!("ClusterConfig"));
    config.insert("metadata".into(), Value::Object(metadata));

    let mut iam = Map::new();
    if aws.autoscaler.is_some() {
        // IRSA for the autoscaler: the Cluster Autoscaler README documents it, and eksctl's
        // `wellKnownPolicies.autoScaler` carries the policy it lists (autoscaling:Describe*,
        // SetDesiredCapacity, TerminateInstanceInAutoScalingGroup, ec2:Describe*, …).
        iam.insert("withOIDC".into(), json!(true));
        iam.insert(
            "serviceAccounts".into(),
            json!([{
                "metadata": {"name": AUTOSCALER_SERVICE_ACCOUNT, "namespace": AUTOSCALER_NAMESPACE},
                "wellKnownPolicies": {"autoScaler": true},
            }]),
        );
    }
    let association = aws.identity.as_ref().zip(ray);
    if let Some((identity, ray)) = association {
        iam.insert(
            "podIdentityAssociations".into(),
            json!([{
                "namespace": ray.namespace,
                "serviceAccountName": ray.service_account,
                "permissionPolicyARNs": identity.permission_policy_arns.iter().map(super::IamPolicyArn::as_str).collect::<Vec<_>>(),
            }]),
        );
    }
    if !iam.is_empty() {
        config.insert("iam".into(), Value::Object(iam));
    }
    if association.is_some() {
        // The agent that hands Pod Identity credentials to pods.
        config.insert("addons".into(), json!([{"name": "eks-pod-identity-agent"}]));
    }

    let cluster = aws.cluster.name.as_str();
    let groups: Vec<Value> = aws
        .node_pools
        .iter()
        .map(|g| node_group(cluster, g, aws.autoscaler.is_some()))
        .collect();
    config.insert("managedNodeGroups".into(), Value::Array(groups));
    Value::Object(config)
}

fn node_group(cluster: &str, group: &NodeGroup, autoscaler: bool) -> Value {
    let mut g = Map::new();
    g.insert("name".into(), json!(group.name.as_str()));
    g.insert("instanceType".into(), json!(group.instance_type.as_str()));
    // eksctl picks the NVIDIA variant of the family for a GPU type (`amitype.go` GetAMIType).
    g.insert("amiFamily".into(), json!(group.ami_family.as_str()));
    if let Some(size) = group.volume_size {
        g.insert("volumeSize".into(), json!(size));
    }
    let size = group.size();
    if size.given {
        g.insert("desiredCapacity".into(), json!(size.initial));
        g.insert("minSize".into(), json!(size.min));
        g.insert("maxSize".into(), json!(size.max));
    }
    let labels = config_labels(group);
    if !labels.is_empty() {
        g.insert("labels".into(), json!(labels));
    }
    let taints = node_taints(group);
    if !taints.is_empty() {
        // eksctl's YAML takes the Kubernetes spelling (`NoSchedule`), not the EKS API's
        // `NO_SCHEDULE` (botocore's `TaintEffect`); eksctl passes its YAML's spelling on.
        let list: Vec<Value> = taints.iter().map(crate::profile::Taint::to_json).collect();
        g.insert("taints".into(), Value::Array(list));
    }
    if autoscaler && size.autoscaled {
        // Auto-discovery tags, and the labels and taints as ASG tags
        // (`k8s.io/cluster-autoscaler/node-template/...`): scaling up from zero nodes, the
        // autoscaler knows a new node's labels and taints only from these (autoscaler
        // `cloudprovider/aws/README.md`, "Auto-Discovery Setup" and "Scaling a node group to 0").
        let mut tags = Map::new();
        tags.insert("k8s.io/cluster-autoscaler/enabled".into(), json!("true"));
        tags.insert(
            format!("k8s.io/cluster-autoscaler/{cluster}"),
            json!("owned"),
        );
        g.insert("tags".into(), Value::Object(tags));
        g.insert("propagateASGTags".into(), json!(true));
    }
    Value::Object(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guide() -> Aws {
        serde_json::from_value(json!({
            "region": "us-west-2",
            "cluster": {"name": "kuberay-gpu-cluster", "kubernetesVersion": "1.34"},
            "nodePools": [
                {"name": "cpu-node-group", "instanceType": "m5.xlarge", "volumeSize": 256,
                 "count": 1, "autoscale": {"min": 0, "max": 1}},
                {"name": "gpu-node-group", "instanceType": "g5.xlarge", "volumeSize": 1024,
                 "count": 1, "autoscale": {"min": 0, "max": 1}},
            ],
            "autoscaler": {"version": "9.50.1"},
            "identity": {"permissionPolicyArns": ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]},
        }))
        .unwrap()
    }

    const RAY: RayIdentity<'static> = RayIdentity {
        namespace: "ray",
        service_account: "ray-worker",
    };

    #[test]
    fn the_guides_node_groups_scale_from_zero_with_gpu_label_and_taint() {
        let c = cluster_config(&guide(), Some(RAY));
        assert_eq!(
            c["metadata"],
            json!({"name": "kuberay-gpu-cluster", "region": "us-west-2", "version": "1.34"})
        );
        let gpu = &c["managedNodeGroups"][1];
        assert_eq!(gpu["instanceType"], "g5.xlarge");
        assert_eq!(gpu["amiFamily"], "AmazonLinux2023");
        assert_eq!(
            (
                &gpu["volumeSize"],
                &gpu["desiredCapacity"],
                &gpu["minSize"],
                &gpu["maxSize"]
            ),
            (&json!(1024), &json!(1), &json!(0), &json!(1))
        );
        assert_eq!(
            gpu["labels"],
            json!({"k8s.amazonaws.com/accelerator": "nvidia-a10g"})
        );
        assert_eq!(
            gpu["taints"],
            json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
        );
        assert_eq!(gpu["propagateASGTags"], true);
        assert_eq!(
            gpu["tags"]["k8s.io/cluster-autoscaler/kuberay-gpu-cluster"],
            "owned"
        );
        let cpu = &c["managedNodeGroups"][0];
        assert_eq!(cpu["volumeSize"], 256);
        assert!(cpu.get("taints").is_none() && cpu.get("labels").is_none());
    }

    #[test]
    fn identity_wiring_follows_the_profile() {
        let c = cluster_config(&guide(), Some(RAY));
        assert_eq!(c["iam"]["withOIDC"], true);
        assert_eq!(
            c["iam"]["serviceAccounts"][0]["metadata"]["name"],
            AUTOSCALER_SERVICE_ACCOUNT
        );
        assert_eq!(
            c["iam"]["serviceAccounts"][0]["wellKnownPolicies"]["autoScaler"],
            true
        );
        let assoc = &c["iam"]["podIdentityAssociations"][0];
        assert_eq!(
            (&assoc["namespace"], &assoc["serviceAccountName"]),
            (&json!("ray"), &json!("ray-worker"))
        );
        assert_eq!(c["addons"], json!([{"name": "eks-pod-identity-agent"}]));

        // Without a service account there is nothing to associate; without an autoscaler no
        // IRSA and no ASG tags.
        let mut aws = guide();
        aws.autoscaler = None;
        let c = cluster_config(&aws, None);
        assert!(c.get("iam").is_none() && c.get("addons").is_none());
        assert!(c["managedNodeGroups"][1].get("tags").is_none());
        assert!(c["managedNodeGroups"][1].get("propagateASGTags").is_none());
    }

    #[test]
    fn a_fixed_group_gets_no_autoscaler_tags() {
        let mut aws = guide();
        aws.node_pools[1].autoscale = None;
        aws.node_pools[1].count = Some(2);
        let c = cluster_config(&aws, None);
        let gpu = &c["managedNodeGroups"][1];
        assert_eq!(
            (&gpu["desiredCapacity"], &gpu["minSize"], &gpu["maxSize"]),
            (&json!(2), &json!(2), &json!(2))
        );
        assert!(gpu.get("tags").is_none());
    }
}
