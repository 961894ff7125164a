//! Name types: each a string with the pattern and length the target system enforces, so that a
//! bad name is refused by the schema check with its position, before anything is generated.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $pattern:expr, $min:expr, $max:expr, $what:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub const PATTERN: &'static str = $pattern;
            pub const DESCRIPTION: &'static str = $what;
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "pattern": $pattern,
                    "minLength": $min,
                    "maxLength": $max,
                    "description": $what,
                })
            }
        }
    };
}
pub(crate) use name_type;

name_type!(
    /// Kubernetes DNS-1123 label (namespaces, LocalQueues, ConfigMap keys).
    Dns1123Label,
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    1,
    63,
    "a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
);
name_type!(
    /// Kubernetes DNS-1123 subdomain (ResourceFlavors, ClusterQueues, cohorts, priority classes).
    Dns1123Subdomain,
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    1,
    253,
    "a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
);
name_type!(
    /// DNS-1035 label: what KubeRay requires of RayCluster/RayJob/RayService names.
    Dns1035Label,
    "^[a-z]([-a-z0-9]*[a-z0-9])?$",
    1,
    63,
    "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
);
name_type!(
    /// Kubernetes label or annotation key, or resource name (`nvidia.com/gpu`).
    QualifiedName,
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
    1,
    316,
    "a Kubernetes qualified name: an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' and '.'"
);
name_type!(
    /// Kubernetes label value (may be empty).
    LabelValue,
    "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
    0,
    63,
    "a Kubernetes label value: up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
);
name_type!(
    /// Semantic version of a Helm chart, without a leading `v` (`0.19.2`).
    ChartVersion,
    "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$",
    5,
    64,
    "a chart version such as 0.19.2 (no leading 'v', pinned: no ranges)"
);
name_type!(
    /// Kubernetes minor or patch version for AKS (`1.35` or `1.35.1`).
    KubernetesVersion,
    "^1\\.[0-9]{1,3}(\\.[0-9]{1,3})?$",
    3,
    16,
    "a Kubernetes version such as \"1.35\" (quote it: YAML reads 1.30 as the number 1.3)"
);
name_type!(
    /// Container image reference (`registry/repo:tag` or with a digest).
    Image,
    "^[a-z0-9]+([._/:@-][A-Za-z0-9_.-]+)*$",
    1,
    512,
    "a container image reference such as rayproject/ray:2.57.0-gpu"
);
name_type!(
    /// Ray version (`2.55.1`).
    RayVersion,
    "^[0-9]+\\.[0-9]+\\.[0-9]+$",
    5,
    32,
    "a Ray version such as \"2.55.1\""
);
name_type!(
    /// Helm release name.
    ReleaseName,
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    1,
    53,
    "a Helm release name: at most 53 lowercase letters, digits and '-'"
);
name_type!(
    /// Helm chart reference: an `oci://` or `https://` URL, or a chart name.
    ChartRef,
    "^(oci://|https://)?[A-Za-z0-9][A-Za-z0-9._/-]*$",
    1,
    512,
    "a Helm chart reference: oci://registry/path/chart, https://repo/url or a chart name"
);
name_type!(
    /// Path relative to the profile (a script to pack into a ConfigMap).
    RelativePath,
    "^[A-Za-z0-9_][A-Za-z0-9_./-]*$",
    1,
    255,
    "a path relative to the profile file, without '..'"
);
name_type!(
    /// Environment variable name.
    EnvName,
    "^[A-Za-z_][A-Za-z0-9_]*$",
    1,
    128,
    "an environment variable name: letters, digits and '_', not starting with a digit"
);
name_type!(
    /// A UUID (Azure client and tenant IDs).
    Uuid,
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    36,
    36,
    "a UUID such as 00000000-0000-0000-0000-000000000000"
);
name_type!(
    /// A Git repository URL (https, ssh).
    GitUrl,
    "^(https://|ssh://|git@)[A-Za-z0-9._~:/@%+-]+$",
    8,
    512,
    "a Git repository URL such as https://github.com/org/platform.git"
);
name_type!(
    /// A Git branch or tag.
    GitRevision,
    "^[A-Za-z0-9._/-]+$",
    1,
    255,
    "a Git branch or tag such as main"
);
name_type!(
    /// A Go duration (`10m`, `1h30m`).
    GoDuration,
    "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$",
    2,
    32,
    "a duration such as 10m or 1h"
);
name_type!(
    /// A `ray start` option name in `rayStartParams` (`num-cpus`).
    RayParamName,
    "^[a-z][a-z0-9-]*$",
    1,
    64,
    "a `ray start` option name such as num-cpus: lowercase letters, digits and '-'"
);
name_type!(
    /// A `rayStartParams` value. KubeRay pastes it unquoted into the container's `ray start`
    /// shell command, so characters that start a shell command or redirect are refused.
    RayParamValue,
    "^[^$`;&|<>()\\\\\n\r]*$",
    0,
    1024,
    "a `ray start` option value without $, `, ;, &, |, <, >, (, ), \\ or line breaks (KubeRay puts it into a shell command)"
);
