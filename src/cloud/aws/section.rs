//! The `aws:` profile section: an EKS cluster made by eksctl from one ClusterConfig, its managed
//! node groups, the Cluster Autoscaler that scales them (EKS runs none by default) and the EKS
//! Pod Identity association of the Ray service account.
//!
//! Field names follow eksctl's ClusterConfig (`instanceType`, `amiFamily`, `volumeSize`), so a
//! reader of eksctl's documentation finds the same words here.

use crate::profile::limits;
use crate::profile::names::name_type;
use crate::profile::names::{ChartRef, ChartVersion, KubernetesVersion, LabelValue, QualifiedName};
use crate::profile::pools::{Autoscale, PoolSize, Taint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

name_type!(
    /// AWS region (`us-west-2`).
    AwsRegion,
    "^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]+$",
    9,
    32,
    "an AWS region such as us-west-2"
);
name_type!(
    /// EKS cluster name, as the EKS API's `CreateCluster` constrains it (botocore 1.43.11 eks
    /// model, shape `ClusterName`: 1 to 100, `^[0-9A-Za-z][A-Za-z0-9\-_]*`).
    EksClusterName,
    "^[0-9A-Za-z][A-Za-z0-9_-]*$",
    1,
    100,
    "an EKS cluster name: 1 to 100 letters, digits, '-' and '_', starting with a letter or digit"
);
name_type!(
    /// Managed node group name. The EKS API gives no pattern; eksctl puts the name into
    /// CloudFormation stack names and Kubernetes label values, so it is held to a label
    /// value's characters and length.
    NodeGroupName,
    "^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$",
    1,
    63,
    "a node group name: 1 to 63 letters, digits, '-' and '_', starting and ending with a letter or digit"
);
name_type!(
    /// EC2 instance type (`g5.xlarge`).
    Ec2InstanceType,
    "^[a-z][a-z0-9-]*\\.[a-z0-9-]+$",
    4,
    64,
    "an EC2 instance type such as g5.xlarge"
);
name_type!(
    /// ARN of an IAM managed policy (`arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess`).
    IamPolicyArn,
    "^arn:aws(-cn|-us-gov)?:iam::([0-9]{12}|aws):policy/[A-Za-z0-9+=,.@_/-]+$",
    20,
    2048,
    "an IAM policy ARN such as arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"
);

/// EKS infrastructure provisioned by `infra/up.sh` (`eksctl create cluster -f`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Aws {
    /// AWS region, e.g. `us-west-2`.
    pub region: AwsRegion,
    pub cluster: EksCluster,
    /// eksctl managed node groups, created with the cluster (`nodePools` as in every provider
    /// section).
    #[schemars(length(min = 1, max = 100))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 100>")]
    pub node_pools: Vec<NodeGroup>,
    /// The Cluster Autoscaler, installed with Helm. EKS runs no node autoscaler by default:
    /// without one, a node group with `autoscale.min: 0` never gets a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaler: Option<ClusterAutoscaler>,
    /// AWS permissions of the Ray service account, by EKS Pod Identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<PodIdentity>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EksCluster {
    pub name: EksClusterName,
    /// Kubernetes version (`"1.34"`); eksctl's default when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<KubernetesVersion>,
}

/// eksctl's `amiFamily` for a managed node group. Both install the NVIDIA driver on GPU
/// instance types; Ubuntu and Windows AMIs ship none (eksctl `userdocs/src/usage/gpu-support.md`),
/// so they are not offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AmiFamily {
    /// eksctl's default (`AL2023_x86_64_NVIDIA` on GPU types). eksctl installs the NVIDIA
    /// device plugin as a DaemonSet that tolerates only the `nvidia.com/gpu` taint.
    #[default]
    AmazonLinux2023,
    /// `BOTTLEROCKET_x86_64_NVIDIA` on GPU types (the guide's choice); the device plugin runs
    /// on the host, so no DaemonSet has to tolerate the group's taints.
    Bottlerocket,
}

impl AmiFamily {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AmazonLinux2023 => "AmazonLinux2023",
            Self::Bottlerocket => "Bottlerocket",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeGroup {
    pub name: NodeGroupName,
    pub instance_type: Ec2InstanceType,
    #[serde(default)]
    pub ami_family: AmiFamily,
    /// Root volume in GiB (eksctl's default: 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 16384))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 1, 16384>")]
    pub volume_size: Option<u32>,
    /// Fixed node count, or the starting count of an autoscaled group (`desiredCapacity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 1000>")]
    pub count: Option<u32>,
    /// Range the Cluster Autoscaler moves the group in (`minSize`, `maxSize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
    /// Node labels. A GPU group also gets `k8s.amazonaws.com/accelerator` (see `docs/providers.md`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<QualifiedName, LabelValue>,
    /// Node taints. A GPU group also gets `nvidia.com/gpu=present:NoSchedule`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
}

impl NodeGroup {
    /// The group's size. With neither `count` nor `autoscale` (RK431) it is taken as 0 nodes
    /// (`given: false`): eksctl's own default is not restated here. An autoscaled group
    /// without `count` starts at `min`.
    pub fn size(&self) -> PoolSize {
        PoolSize::of(self.autoscale.as_ref(), self.count, 0)
    }
}

/// The Cluster Autoscaler's Helm chart (`cluster-autoscaler` from
/// `https://kubernetes.github.io/autoscaler`), run with ASG auto-discovery.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterAutoscaler {
    /// Helm repository of the chart.
    #[serde(default = "default_autoscaler_repo")]
    pub repo: ChartRef,
    #[serde(default = "default_autoscaler_chart")]
    pub chart: ChartRef,
    /// Pinned chart version (no leading `v`). Omitted, raykueue picks the release for the
    /// cluster's `kubernetesVersion` (`AUTOSCALER_RELEASES`): the newest chart shipping that
    /// Kubernetes minor's autoscaler, running that minor's newest patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<ChartVersion>,
}

fn default_autoscaler_repo() -> ChartRef {
    ChartRef("https://kubernetes.github.io/autoscaler".into())
}
fn default_autoscaler_chart() -> ChartRef {
    ChartRef("cluster-autoscaler".into())
}

/// An EKS Pod Identity association for the profile's service account: eksctl creates the IAM
/// role with these policies and associates it; the `eks-pod-identity-agent` add-on hands the
/// credentials to the pods. Unlike IRSA, the service account needs no role annotation, so
/// GitOps can own it unchanged.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodIdentity {
    /// IAM managed policies the role gets (`permissionPolicyARNs`).
    #[schemars(length(min = 1, max = 20))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 20>")]
    pub permission_policy_arns: Vec<IamPolicyArn>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_eksctl_words_and_refuses_unknown_keys() {
        let aws: Aws = serde_json::from_value(serde_json::json!({
            "region": "us-west-2",
            "cluster": {"name": "kuberay-gpu-cluster"},
            "nodePools": [{"name": "gpu-node-group", "instanceType": "g5.xlarge",
                            "amiFamily": "Bottlerocket", "autoscale": {"min": 0, "max": 1}}],
        }))
        .unwrap();
        assert_eq!(aws.node_pools[0].ami_family, AmiFamily::Bottlerocket);
        let size = aws.node_pools[0].size();
        assert_eq!(
            (size.initial, size.min, size.max, size.autoscaled),
            (0, 0, 1, true)
        );
        let err = serde_json::from_value::<Aws>(serde_json::json!({
            "region": "us-west-2", "cluster": {"name": "c"}, "nodePools": [{"name": "g", "instanceType": "m5.xlarge", "count": 1}], "vpc": {}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `vpc`"), "{err}");
    }

    #[test]
    fn name_patterns_accept_real_names_and_refuse_others() {
        let schema = schemars::schema_for!(Aws);
        let validator = jsonschema::validator_for(&serde_json::to_value(&schema).unwrap()).unwrap();
        let base = |region: &str, cluster: &str, itype: &str| {
            serde_json::json!({
                "region": region, "cluster": {"name": cluster},
                "nodePools": [{"name": "cpu", "instanceType": itype, "count": 1}],
            })
        };
        assert!(validator.is_valid(&base("us-west-2", "kuberay-gpu-cluster", "m5.xlarge")));
        assert!(validator.is_valid(&base("us-gov-west-1", "c_1", "p4de.24xlarge")));
        assert!(!validator.is_valid(&base("westus2", "c", "m5.xlarge")));
        assert!(!validator.is_valid(&base("us-west-2", "-c", "m5.xlarge")));
        assert!(!validator.is_valid(&base("us-west-2", "c", "Standard_D4s_v3")));
        assert!(!validator.is_valid(&base("us-west-2", "c;rm", "m5.xlarge")));
    }
}
