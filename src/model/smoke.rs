//! The GPU smoke test (seed 004, step 4) as data: a one-GPU RayJob that runs the embedded
//! `gpu_check.py`, submitted by `infra/smoke.sh` through the profile's queue (directly when the
//! profile has no Kueue). It is built by the same code as the profile's own workloads, so it is
//! rendered and validated like them, and it lands in `infra/smoke/`, not `workloads/`: it is a
//! check of the cluster, not a workload to keep.

use super::Object;
use super::workloads;
use crate::base::diagnostic::Diagnostic;
use crate::cloud::GPU_RESOURCE;
use crate::profile::{Profile, Workload};
use serde_json::json;

/// The RayJob's name; `smoke.sh` deletes it (and its ConfigMap) when it ends.
pub(crate) const SMOKE_JOB: &str = "raykueue-smoke";
pub(crate) const SMOKE_DIR: &str = "infra/smoke";

/// Whether a bundle file holds the smoke job (objects `smoke.sh` applies and deletes itself).
pub(crate) fn is_smoke_file(file: &str) -> bool {
    file.strip_prefix(SMOKE_DIR)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// What `smoke.sh` needs to know about the job it submits.
#[derive(Debug, serde::Serialize)]
pub(crate) struct SmokeJob {
    pub(crate) name: &'static str,
    pub(crate) namespace: String,
    /// The LocalQueue it is submitted to; `None` without Kueue.
    pub(crate) queue: Option<String>,
    /// Files to apply, in order, relative to the bundle (`infra/smoke/configmap.yaml`, ...).
    pub(crate) files: Vec<String>,
}

/// The smoke job of a profile that installs KubeRay and names a Ray image; `None` otherwise.
/// The queue is the first LocalQueue whose ClusterQueue covers `nvidia.com/gpu` (else the
/// first LocalQueue), so that Kueue admits the GPU it asks for.
pub(crate) fn smoke_job(p: &Profile) -> Option<(Workload, SmokeJob)> {
    // A fleet's manager runs no pods, and its jobs' logs stay on the worker that ran them
    // (kubernetes-sigs/kueue#3526): `fleet/verify.sh` checks the fleet instead.
    if p.managed_fleet().is_some() {
        return None;
    }
    p.operators.kuberay.as_ref()?;
    p.ray.as_ref()?;
    let queues = p
        .queues
        .as_ref()
        .filter(|_| p.operators.kueue.is_some())
        .and_then(|q| {
            let covers_gpu = |cq: &str| {
                q.cluster_queues.iter().any(|c| {
                    c.name.as_str() == cq
                        && c.resource_groups.iter().any(|g| {
                            g.covered_resources
                                .iter()
                                .any(|r| r.as_str() == GPU_RESOURCE)
                        })
                })
            };
            q.local_queues
                .iter()
                .find(|l| covers_gpu(l.cluster_queue.as_str()))
                .or_else(|| q.local_queues.first())
        });
    let namespace = queues
        .map_or(p.namespace.as_str(), |l| l.namespace_in(p))
        .to_owned();
    let queue = queues.map(|l| l.name.to_string());
    let workload: Workload = serde_json::from_value(json!({
        "kind": "RayJob",
        "name": SMOKE_JOB,
        "namespace": namespace,
        "queue": queue,
        "entrypoint": "python3 /home/ray/scripts/gpu_check.py",
        "runtimeEnv": { "envVars": { "GPU_CHECK_GPUS": "1" } },
        "scripts": ["scripts/gpu_check.py"],
        "ttlSecondsAfterFinished": 300,
        "head": {
            "resources": { "cpu": "1", "memory": "4Gi" },
            "rayStartParams": { "num-cpus": "0" },
        },
        "workers": [{
            "name": "gpu",
            "replicas": 1,
            "resources": { "cpu": "2", "memory": "8Gi", GPU_RESOURCE: "1" },
            "rayStartParams": { "num-gpus": "1" },
        }],
    }))
    .ok()?;
    let job = SmokeJob {
        name: SMOKE_JOB,
        namespace,
        queue,
        // The ConfigMap of its script, then the RayJob that mounts it (`smoke_objects`).
        files: vec![
            format!("{SMOKE_DIR}/{}", workloads::CONFIGMAP_FILE),
            format!("{SMOKE_DIR}/{}", workloads::object_file_name(workload.kind)),
        ],
    };
    Some((workload, job))
}

/// The smoke job's objects, filed under `infra/smoke/` (none when there is no smoke job).
pub(crate) fn smoke_objects(p: &Profile) -> Result<Vec<Object>, Diagnostic> {
    let Some((workload, job)) = smoke_job(p) else {
        return Ok(Vec::new());
    };
    // The embedded gpu_check.py: no folder to read from.
    let read: Vec<_> = workload
        .scripts
        .iter()
        .map(|rel| crate::input::scripts::read(None, rel))
        .collect();
    let mut objects = workloads::workload(p, &workload, &read)?;
    for o in &mut objects {
        let file = o.file.rsplit('/').next().unwrap_or_default().to_owned();
        o.file = format!("{SMOKE_DIR}/{file}");
        debug_assert!(job.files.contains(&o.file));
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(queues: &str) -> Profile {
        let text = format!(
            "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: p\nnamespace: ray\n\
             operators: {{kuberay: {{version: 1.7.0}}, kueue: {{version: 0.19.2, frameworks: [ray.io/rayjob]}}}}\n\
             ray: {{image: rayproject/ray:2.57.0-gpu}}\nflavors: [{{name: default}}]\n{queues}"
        );
        let resolved = crate::input::resolve::Resolved {
            source: crate::base::source::Source::new("p.yaml", text),
            base_dir: None,
        };
        let (typed, diags) = crate::compile::check_profile(&resolved);
        typed.unwrap_or_else(|| panic!("{diags:?}")).1
    }

    const TWO_QUEUES: &str = "queues:\n  mode: team\n  clusterQueues:\n\
        \x20   - name: cpu-cq\n      resourceGroups: [{coveredResources: [cpu], flavors: [{name: default, resources: [{name: cpu, nominalQuota: \"4\"}]}]}]\n\
        \x20   - name: gpu-cq\n      resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: default, resources: [{name: cpu, nominalQuota: \"4\"}, {name: nvidia.com/gpu, nominalQuota: \"1\"}]}]}]\n\
        \x20 localQueues:\n    - {name: cpu, clusterQueue: cpu-cq}\n    - {name: gpu, namespace: gpu-team, clusterQueue: gpu-cq}\n";

    #[test]
    fn the_job_goes_to_the_first_queue_that_covers_gpus_in_its_namespace() {
        let (w, job) = smoke_job(&profile(TWO_QUEUES)).unwrap();
        assert_eq!(job.queue.as_deref(), Some("gpu"));
        assert_eq!(job.namespace, "gpu-team");
        assert_eq!(
            w.namespace.as_ref().map(ToString::to_string).as_deref(),
            Some("gpu-team")
        );
        let files: Vec<String> = smoke_objects(&profile(TWO_QUEUES))
            .unwrap()
            .into_iter()
            .map(|o| o.file)
            .collect();
        assert_eq!(
            files, job.files,
            "smoke.sh applies exactly the rendered files"
        );
        assert!(files.iter().all(|f| is_smoke_file(f)));
        assert!(!is_smoke_file("infra/smoke.sh") && !is_smoke_file("infra/smokey/x.yaml"));
    }

    #[test]
    fn without_kueue_or_kuberay_or_an_image_there_is_no_job_or_no_queue() {
        let direct = smoke_job(&profile("")).unwrap().1;
        assert_eq!((direct.queue, direct.namespace.as_str()), (None, "ray"));
        let mut p = profile(TWO_QUEUES);
        p.operators.kueue = None;
        assert_eq!(smoke_job(&p).unwrap().1.queue, None, "queues without Kueue");
        p.operators.kuberay = None;
        assert!(smoke_job(&p).is_none());
        let mut p = profile("");
        p.ray = None;
        assert!(smoke_job(&p).is_none());
    }
}
