//! The pods a workload creates, grouped as Kueue counts them (pod sets: head, one per worker
//! group, and the RayJob submitter; a Job's one `main`), with what each pod requests, selects
//! and tolerates. The admission and placement rules both read this one model.

use crate::base::pointer::{Pointer, ptr};
use crate::profile::{
    ClusterQueue, HeadGroup, Profile, Quantity, SubmissionMode, Toleration, TopologyRequest,
    Workload, WorkloadKind,
};
use std::collections::{BTreeMap, HashMap};

/// Which pod set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Head,
    Worker(usize),
    Submitter,
    /// A Job's one pod set (kueue@v0.19.2 `pkg/controller/jobs/job/job_controller.go`
    /// `PodSets`: `kueue.DefaultPodSetName`, `main`).
    Main,
}

/// One Kueue pod set of a workload.
#[derive(Debug, Clone)]
pub(crate) struct PodSet<'a> {
    pub(crate) workload: &'a Workload,
    /// Index of the workload in the profile.
    pub(crate) index: usize,
    pub(crate) role: Role,
    /// Pods Kueue admits: 1 for head and submitter, `replicas × numOfHosts` for a worker group.
    pub(crate) count: u64,
    /// Pods at the largest size the group may scale to (`maxReplicas × numOfHosts`).
    pub(crate) max_count: u64,
    /// What one pod requests, all containers together (sidecars included).
    pub(crate) requests: BTreeMap<String, Quantity>,
    pub(crate) node_selector: BTreeMap<String, String>,
    pub(crate) tolerations: &'a [Toleration],
    /// What it asks of topology-aware scheduling (head and worker groups; the submitter's
    /// template is KubeRay's default, without annotations).
    pub(crate) topology: Option<&'a TopologyRequest>,
    /// JSON pointer of the `resources` map this pod set's requests come from (for the
    /// submitter: its `submitter.resources`, or the workload when the defaults apply).
    pub(crate) resources_pointer: Pointer,
    /// JSON pointer of the pod set itself (`/workloads/0/head`, `/workloads/0/workers/1`).
    pub(crate) pointer: Pointer,
}

impl PodSet<'_> {
    /// `head`, `worker group `gpu-group``, `submitter`: how messages name the pod set.
    pub(crate) fn describe(&self) -> String {
        let what = match self.role {
            Role::Head => "head".to_string(),
            Role::Worker(j) => format!(
                "worker group `{}`",
                self.workload
                    .workers
                    .get(j)
                    .map_or("?", |g| g.name.as_str())
            ),
            Role::Submitter => "submitter pod".to_string(),
            Role::Main => "pod set".to_string(),
        };
        format!(
            "the {what} of {} `{}`",
            self.workload.kind.as_str(),
            self.workload.name
        )
    }

    /// The pod set's name in the Workload: Kueue's RayJob/RayCluster integration names them
    /// `head`, each worker group by its name, and `submitter`; its Job integration `main`.
    pub(crate) fn kueue_name(&self) -> String {
        match self.role {
            Role::Head => "head".to_owned(),
            Role::Worker(j) => self
                .workload
                .workers
                .get(j)
                .map_or_else(String::new, |g| g.name.to_string()),
            Role::Submitter => "submitter".to_owned(),
            Role::Main => "main".to_owned(),
        }
    }

    /// The request of one pod for `resource` (zero when not requested).
    pub(crate) fn request(&self, resource: &str) -> Quantity {
        self.requests
            .get(resource)
            .copied()
            .unwrap_or_else(Quantity::zero)
    }

    /// Pointer of one requested resource, for diagnostics at that line.
    pub(crate) fn resource_pointer(&self, resource: &str) -> Pointer {
        self.resources_pointer.at(resource)
    }
}

/// KubeRay's submitter container requests (K8sJobMode pod, or SidecarMode container in the head).
pub(crate) const SUBMITTER_CPU: &str = "500m";
pub(crate) const SUBMITTER_MEMORY: &str = "200Mi";
/// The Ray autoscaler sidecar KubeRay adds to the head with in-tree autoscaling.
pub(crate) const AUTOSCALER_CPU: &str = "500m";
pub(crate) const AUTOSCALER_MEMORY: &str = "512Mi";

fn q(text: &str) -> Quantity {
    Quantity::parse(text).unwrap_or_else(|_| Quantity::zero())
}

fn add(map: &mut BTreeMap<String, Quantity>, resource: &str, amount: Quantity) {
    let e = map
        .entry(resource.to_string())
        .or_insert_with(Quantity::zero);
    *e = e.plus(amount);
}

/// The submission mode a RayJob uses (KubeRay's default is K8sJobMode).
pub(crate) fn submission_mode(w: &Workload) -> SubmissionMode {
    w.submission_mode.unwrap_or_default()
}

/// The pod sets of workload `index`, in Kueue's order: head, worker groups, submitter; a Job's
/// one. A Ray workload without a head (an error the workload rules report) has none for it.
pub(crate) fn pod_sets(index: usize, w: &Workload) -> Vec<PodSet<'_>> {
    let base = ptr!["workloads", index];
    if w.kind == WorkloadKind::Job {
        return w.pod.as_ref().map_or_else(Vec::new, |pod| {
            let count = u64::from(w.job_pod_count());
            vec![PodSet {
                workload: w,
                index,
                role: Role::Main,
                count,
                max_count: count,
                requests: selector_q(&pod.effective_requests()),
                node_selector: selector(&pod.node_selector),
                tolerations: &pod.tolerations,
                topology: pod.topology.as_ref(),
                resources_pointer: ptr!(
                    base;
                    "pod",
                    if pod.requests.is_empty() {
                        "limits"
                    } else {
                        "requests"
                    }
                ),
                pointer: base.at("pod"),
            }]
        });
    }
    let mut out = Vec::new();
    if let Some(head) = &w.head {
        out.push(head_pod_set(index, w, head));
    }
    for (j, g) in w.workers.iter().enumerate() {
        let hosts = u64::from(g.num_of_hosts);
        out.push(PodSet {
            workload: w,
            index,
            role: Role::Worker(j),
            count: u64::from(g.replicas) * hosts,
            max_count: u64::from(g.max().max(g.replicas)) * hosts,
            requests: selector_q(&g.resources),
            node_selector: selector(&g.node_selector),
            tolerations: &g.tolerations,
            topology: g.topology.as_ref(),
            resources_pointer: ptr!(base; "workers", j, "resources"),
            pointer: ptr!(base; "workers", j),
        });
    }
    // The submitter pod has no node selector or tolerations of its own (KubeRay's default
    // submitter template); Kueue's flavor labels and tolerations still apply to it.
    if w.kind == WorkloadKind::RayJob && submission_mode(w) == SubmissionMode::K8sJobMode {
        let (requests, resources_pointer) = if let Some(s) = &w.submitter {
            (
                s.resources
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
                ptr!(base; "submitter", "resources"),
            )
        } else {
            let mut m = BTreeMap::new();
            add(&mut m, "cpu", q(SUBMITTER_CPU));
            add(&mut m, "memory", q(SUBMITTER_MEMORY));
            (m, base.at("name"))
        };
        out.push(PodSet {
            workload: w,
            index,
            role: Role::Submitter,
            count: 1,
            max_count: 1,
            requests,
            node_selector: BTreeMap::new(),
            tolerations: &[],
            topology: None,
            resources_pointer,
            pointer: base.at("name"),
        });
    }
    out
}

/// The head's pod set: its resources, plus the submitter container of SidecarMode and the
/// autoscaler sidecar of an elastic workload.
fn head_pod_set<'a>(index: usize, w: &'a Workload, head: &'a HeadGroup) -> PodSet<'a> {
    let base = ptr!["workloads", index];
    let mut requests = selector_q(&head.resources);
    if w.kind == WorkloadKind::RayJob && submission_mode(w) == SubmissionMode::SidecarMode {
        add(&mut requests, "cpu", q(SUBMITTER_CPU));
        add(&mut requests, "memory", q(SUBMITTER_MEMORY));
    }
    if w.elastic {
        add(&mut requests, "cpu", q(AUTOSCALER_CPU));
        add(&mut requests, "memory", q(AUTOSCALER_MEMORY));
    }
    PodSet {
        workload: w,
        index,
        role: Role::Head,
        count: 1,
        max_count: 1,
        requests,
        node_selector: selector(&head.node_selector),
        tolerations: &head.tolerations,
        topology: head.topology.as_ref(),
        resources_pointer: ptr!(base; "head", "resources"),
        pointer: base.at("head"),
    }
}

fn selector_q<K: ToString>(m: &BTreeMap<K, Quantity>) -> BTreeMap<String, Quantity> {
    m.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn selector<K: ToString>(m: &BTreeMap<K, String>) -> BTreeMap<String, String> {
    m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// The profile's queues by name, for asking `QueueIndex::cluster_queue_of` about every workload: one
/// hash lookup each instead of two scans (a profile of 1,000 teams has 1,000 of each).
/// Where names repeat (an error the queue rules report), the first wins.
pub(crate) struct QueueIndex<'p> {
    profile: &'p Profile,
    /// (LocalQueue, namespace) → its ClusterQueue's name.
    local: HashMap<(&'p str, &'p str), &'p str>,
    cluster: HashMap<&'p str, usize>,
}

impl<'p> QueueIndex<'p> {
    pub(crate) fn new(profile: &'p Profile) -> Self {
        let mut local = HashMap::new();
        let mut cluster = HashMap::new();
        if let Some(queues) = &profile.queues {
            for lq in &queues.local_queues {
                local
                    .entry((lq.name.as_str(), lq.namespace_in(profile)))
                    .or_insert(lq.cluster_queue.as_str());
            }
            for (i, cq) in queues.cluster_queues.iter().enumerate() {
                cluster.entry(cq.name.as_str()).or_insert(i);
            }
        }
        Self {
            profile,
            local,
            cluster,
        }
    }

    /// The ClusterQueue a workload is submitted to, through the LocalQueue it is admitted by in
    /// its namespace (`Workload::admission`: its `queue`, or the `default` LocalQueue Kueue gives
    /// it). `None` when Kueue does not queue it as a whole or the queue names nothing (reported by
    /// the workload rules).
    pub(crate) fn cluster_queue_of(&self, w: &'p Workload) -> Option<(usize, &'p ClusterQueue)> {
        let p = self.profile;
        let queue = w.admission(p).queue()?;
        let cq = self.local.get(&(queue, w.namespace_in(p)))?;
        let i = *self.cluster.get(cq)?;
        Some((i, &p.queues.as_ref()?.cluster_queues[i]))
    }
}
