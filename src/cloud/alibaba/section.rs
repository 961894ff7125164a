//! The `alibaba:` profile section: an ACK managed cluster made through the ACK OpenAPI
//! (`aliyun cs POST /clusters`), the VPC and vSwitch it needs first, its node pools, and RRSA
//! for the Ray service account.
//!
//! Field names are the profile's camelCase of the API's snake_case (`instance_types` →
//! `instanceType`), so a reader of the API reference finds the same words.

use crate::profile::limits;
use crate::profile::names::name_type;
use crate::profile::names::{KubernetesVersion, LabelValue, QualifiedName};
use crate::profile::pools::{Autoscale, PoolSize, Taint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

name_type!(
    /// Alibaba Cloud region ID (`cn-hangzhou`, `ap-southeast-1`).
    AlibabaRegion,
    "^[a-z]{2}-[a-z]+(-[0-9]+)?$",
    5,
    32,
    "an Alibaba Cloud region ID such as cn-hangzhou"
);
name_type!(
    /// Alibaba Cloud zone ID (`cn-hangzhou-k`).
    AlibabaZone,
    "^[a-z]{2}-[a-z]+(-[0-9]+)?-[a-z0-9]+$",
    7,
    40,
    "an Alibaba Cloud zone ID such as cn-hangzhou-k"
);
name_type!(
    /// ACK cluster, VPC or vSwitch name. The VPC API takes 2 to 128 letters, digits, '_' and
    /// '-' starting with a letter (ROS `ALIYUN::ECS::VSwitch`, `VSwitchName`); held here to
    /// ASCII and 63 characters so that the same name is valid for all three.
    AlibabaName,
    "^[A-Za-z][A-Za-z0-9_-]{1,62}$",
    2,
    63,
    "a name of 2 to 63 letters, digits, '-' and '_', starting with a letter"
);
name_type!(
    /// ACK node pool name.
    AckNodePoolName,
    "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$",
    1,
    63,
    "a node pool name of 1 to 63 letters, digits, '-' and '_', starting with a letter or digit"
);
name_type!(
    /// ECS instance type (`ecs.gn7i-c8g1.2xlarge`).
    EcsInstanceType,
    "^ecs\\.[a-z0-9-]+\\.[a-z0-9-]+$",
    8,
    64,
    "an ECS instance type such as ecs.gn7i-c8g1.2xlarge"
);
name_type!(
    /// IPv4 CIDR block (`192.168.0.0/16`).
    Ipv4Cidr,
    "^((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])/([8-9]|[12][0-9]|3[0-2])$",
    9,
    18,
    "an IPv4 CIDR block such as 192.168.0.0/16"
);
name_type!(
    /// RAM role name.
    RamRoleName,
    "^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$",
    1,
    64,
    "a RAM role name: up to 64 letters, digits, '.' and '-'"
);
name_type!(
    /// NVIDIA driver version ACK installs on a pool's new nodes (`550.144.03`).
    DriverVersion,
    "^[0-9]{3}\\.[0-9]{1,3}(\\.[0-9]{1,3})?$",
    5,
    16,
    "an NVIDIA driver version such as 550.144.03"
);

/// ACK infrastructure provisioned by `infra/up.sh` (`aliyun vpc` and `aliyun cs`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Alibaba {
    /// Region ID, e.g. `cn-hangzhou`.
    pub region: AlibabaRegion,
    /// Zone of the vSwitch the nodes live in. GPU types are not sold in every zone.
    pub zone: AlibabaZone,
    /// The VPC and vSwitch ACK needs before the cluster (`CreateVpc`, `CreateVSwitch`).
    pub vpc: Vpc,
    pub cluster: AckCluster,
    /// Node pools, added after the cluster (`CreateClusterNodePool`).
    #[schemars(length(min = 1, max = 100))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 100>")]
    pub node_pools: Vec<AckNodePool>,
    /// RRSA: the RAM role the Ray service account assumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Rrsa>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Vpc {
    pub name: AlibabaName,
    /// The VPC's CIDR block.
    #[serde(default = "default_vpc_cidr")]
    pub cidr: Ipv4Cidr,
    pub vswitch_name: AlibabaName,
    /// The vSwitch's CIDR block, inside the VPC's.
    #[serde(default = "default_vswitch_cidr")]
    pub vswitch_cidr: Ipv4Cidr,
}

fn default_vpc_cidr() -> Ipv4Cidr {
    Ipv4Cidr("192.168.0.0/16".into())
}
fn default_vswitch_cidr() -> Ipv4Cidr {
    Ipv4Cidr("192.168.0.0/20".into())
}

/// ACK managed cluster edition (`cluster_spec`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ClusterSpec {
    /// ACK Pro.
    #[default]
    #[serde(rename = "ack.pro.small")]
    Pro,
    /// ACK Basic.
    #[serde(rename = "ack.standard")]
    Standard,
}

impl ClusterSpec {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pro => "ack.pro.small",
            Self::Standard => "ack.standard",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AckCluster {
    pub name: AlibabaName,
    #[serde(default)]
    pub cluster_spec: ClusterSpec,
    /// Kubernetes version; ACK's default when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<KubernetesVersion>,
    /// Pod CIDR of the Flannel network; must not overlap the VPC.
    #[serde(default = "default_container_cidr")]
    pub container_cidr: Ipv4Cidr,
    /// Service CIDR; must not overlap the VPC or the pod CIDR.
    #[serde(default = "default_service_cidr")]
    pub service_cidr: Ipv4Cidr,
}

fn default_container_cidr() -> Ipv4Cidr {
    Ipv4Cidr("172.20.0.0/16".into())
}
fn default_service_cidr() -> Ipv4Cidr {
    Ipv4Cidr("172.21.0.0/20".into())
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AckNodePool {
    pub name: AckNodePoolName,
    pub instance_type: EcsInstanceType,
    /// System disk in GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 20, max = 2048))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 20, 2048>")]
    pub system_disk_size: Option<u32>,
    /// Fixed node count (`desired_size`). Give either `count` or `autoscale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 1000>")]
    pub count: Option<u32>,
    /// Node pool auto scaling (`auto_scaling.min_instances`/`max_instances`). It works only once
    /// node scaling is enabled for the cluster, a console step `up.sh` prints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
    /// Node labels (`kubernetes_config.labels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<QualifiedName, LabelValue>,
    /// Node taints (`kubernetes_config.taints`). A GPU pool also gets
    /// `nvidia.com/gpu=present:NoSchedule` (ACK taints nothing itself).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Pin the NVIDIA driver of new nodes (the pool label
    /// `ack.aliyun.com/nvidia-driver-version`); ACK's default for the cluster version when
    /// omitted. An unsupported version silently falls back to the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<DriverVersion>,
}

impl AckNodePool {
    /// The pool's size. With neither `count` nor `autoscale` (RK441) it is taken as 0 nodes
    /// (`given: false`); an autoscaled pool starts at `min`, and ACK moves it from there.
    pub fn size(&self) -> PoolSize {
        PoolSize::of(self.autoscale.as_ref(), self.count, 0)
    }
}

/// RRSA (RAM Roles for Service Accounts): the cluster's OIDC provider (`enable_rrsa`), the
/// `ack-pod-identity-webhook` add-on, and the service account annotated with the role.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rrsa {
    /// The RAM role the service account assumes; it must trust the cluster's OIDC provider.
    pub role_name: RamRoleName,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator() -> jsonschema::Validator {
        let schema = schemars::schema_for!(Alibaba);
        jsonschema::validator_for(&serde_json::to_value(&schema).unwrap()).unwrap()
    }

    fn section(region: &str, zone: &str, itype: &str, cidr: &str) -> serde_json::Value {
        serde_json::json!({
            "region": region, "zone": zone,
            "vpc": {"name": "kuberay-vpc", "vswitchName": "kuberay-vsw", "cidr": cidr},
            "cluster": {"name": "kuberay-gpu-cluster"},
            "nodePools": [{"name": "gpu-pool", "instanceType": itype, "autoscale": {"min": 0, "max": 1}}],
        })
    }

    #[test]
    fn the_section_reads_with_defaults() {
        let a: Alibaba = serde_json::from_value(section(
            "cn-hangzhou",
            "cn-hangzhou-k",
            "ecs.gn7i-c8g1.2xlarge",
            "10.0.0.0/8",
        ))
        .unwrap();
        assert_eq!(a.cluster.cluster_spec, ClusterSpec::Pro);
        assert_eq!(a.vpc.vswitch_cidr.as_str(), "192.168.0.0/20");
        assert_eq!(a.cluster.container_cidr.as_str(), "172.20.0.0/16");
    }

    #[test]
    fn name_patterns_accept_real_names_and_refuse_others() {
        let v = validator();
        assert!(v.is_valid(&section(
            "cn-hangzhou",
            "cn-hangzhou-k",
            "ecs.gn7i-c8g1.2xlarge",
            "192.168.0.0/16"
        )));
        assert!(v.is_valid(&section(
            "ap-southeast-1",
            "ap-southeast-1-a",
            "ecs.g7.xlarge",
            "10.0.0.0/8"
        )));
        assert!(!v.is_valid(&section(
            "cn hangzhou",
            "cn-hangzhou-k",
            "ecs.g7.xlarge",
            "10.0.0.0/8"
        )));
        assert!(!v.is_valid(&section(
            "cn-hangzhou",
            "cn-hangzhou-k",
            "g5.xlarge",
            "10.0.0.0/8"
        )));
        assert!(!v.is_valid(&section(
            "cn-hangzhou",
            "cn-hangzhou-k",
            "ecs.g7.xlarge",
            "10.0.0.300/8"
        )));
        assert!(!v.is_valid(&section(
            "cn-hangzhou",
            "cn-hangzhou-k",
            "ecs.g7.xlarge",
            "10.0.0.0/33"
        )));
    }
}
