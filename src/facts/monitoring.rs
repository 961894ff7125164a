//! Whether a profile is monitored, and how: its `monitoring` section with every default filled
//! in. One definition, read by the model (`monitoring/`) and the docs' reasoning
//! (`docs/monitoring.md`): without the section, a profile with GPUs (a node pool with NVIDIA GPUs,
//! or ClusterQueue quota of `nvidia.com/gpu`) is monitored with its cloud's default collector,
//! the way the upstream Azure example installs GPU monitoring with its GPU pool; a CPU-only
//! profile is not.

use crate::cloud::{GPU_RESOURCE, ManagedFlavour};
use crate::profile::{Alerts, Collector, GpuMetrics, Monitoring, Profile};

/// The monitoring a profile gets, defaults filled in.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) collector: Collector,
    /// The cloud's managed Prometheus, with `collector: managed` on a profile with a cloud.
    pub(crate) managed: Option<ManagedFlavour>,
    pub(crate) gpu_metrics: GpuMetrics,
    pub(crate) kueue_viz: bool,
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) alerts: Alerts,
}

/// Whether the profile has GPUs: a node pool whose nodes advertise `nvidia.com/gpu`, or a
/// ClusterQueue with quota of it.
pub(crate) fn has_gpus(p: &Profile) -> bool {
    let pools = p
        .cloud()
        .is_some_and(|c| c.node_groups().iter().any(|g| g.gpu));
    let quota = p.queues.as_ref().is_some_and(|q| {
        q.cluster_queues.iter().any(|cq| {
            cq.resource_groups.iter().any(|rg| {
                rg.covered_resources
                    .iter()
                    .any(|r| r.as_str() == GPU_RESOURCE)
            })
        })
    });
    pools || quota
}

/// The profile's monitoring, or `None` when it is off (`collector: none`, or no section and no
/// GPUs).
pub(crate) fn resolve(p: &Profile) -> Option<Resolved> {
    let default;
    let m = match &p.monitoring {
        Some(m) => m,
        None if has_gpus(p) => {
            default = Monitoring::default();
            &default
        }
        None => return None,
    };
    let collector = m.collector.unwrap_or_else(|| {
        p.cloud().map_or(Collector::PrometheusOperator, |c| {
            c.prometheus().default_collector
        })
    });
    if collector == Collector::None {
        return None;
    }
    let gpu_metrics = m.gpu_metrics.unwrap_or(if has_gpus(p) {
        GpuMetrics::DcgmExporter
    } else {
        GpuMetrics::None
    });
    let managed = (collector == Collector::Managed)
        .then(|| p.cloud().map(|c| c.prometheus().flavour))
        .flatten();
    Some(Resolved {
        collector,
        managed,
        gpu_metrics,
        kueue_viz: m.kueue_viz,
        namespace: m.namespace.to_string(),
        release: m.release.to_string(),
        alerts: m.alerts.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::resolve::SHIPPED;

    fn typed(name: &str) -> Profile {
        let resolved = crate::input::resolve::resolve(name).unwrap();
        crate::compile::check_profile(&resolved).0.unwrap().1
    }

    #[test]
    fn shipped_gpu_profiles_get_their_clouds_default_and_the_dcgm_exporter() {
        for (name, _) in SHIPPED {
            let p = typed(name);
            let m = resolve(&p);
            assert_eq!(m.is_some(), has_gpus(&p), "{name}");
            if let (Some(m), Some(cloud)) = (m, p.cloud()) {
                assert_eq!(m.collector, cloud.prometheus().default_collector, "{name}");
                let gpu_pools = cloud.node_groups().iter().any(|g| g.gpu);
                assert_eq!(
                    m.gpu_metrics == GpuMetrics::DcgmExporter,
                    gpu_pools,
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn collector_none_turns_monitoring_off_and_a_section_turns_it_on() {
        let mut p = typed("team");
        p.monitoring = Some(Monitoring {
            collector: Some(Collector::None),
            ..Monitoring::default()
        });
        assert!(resolve(&p).is_none());
        p.monitoring = Some(Monitoring {
            collector: Some(Collector::Managed),
            gpu_metrics: Some(GpuMetrics::None),
            ..Monitoring::default()
        });
        let m = resolve(&p).unwrap();
        assert_eq!(
            (m.collector, m.gpu_metrics),
            (Collector::Managed, GpuMetrics::None)
        );
    }

    #[test]
    fn every_cloud_names_its_managed_prometheus_and_a_flavour_of_its_own() {
        let mut flavours = std::collections::BTreeMap::new();
        for (name, _) in SHIPPED {
            if let Some(c) = typed(name).cloud() {
                let f = c.prometheus();
                assert!(f.managed.contains("Prometheus"), "{name}");
                flavours.insert(c.section(), format!("{:?}", f.flavour));
            }
        }
        let distinct: std::collections::BTreeSet<&String> = flavours.values().collect();
        assert_eq!((flavours.len(), distinct.len()), (4, 4), "{flavours:?}");
    }
}
