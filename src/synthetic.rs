//! Synthetic profiles of N teams (each a ClusterQueue in one cohort, a LocalQueue and a RayJob),
//! for benchmarks and scale tests. Deterministic: the same N gives the same text.

use std::fmt::Write as _;

/// A valid profile with `teams` teams sharing one cohort on a GPU pool sized for them.
pub fn teams_profile(teams: usize) -> String {
    let gpu_nodes = teams.div_ceil(8).max(1);
    let mut p = format!(
        "apiVersion: raykueue.io/v1alpha1
kind: Profile
name: synthetic-{teams}
azure:
  location: eastus2
  resourceGroup: rg-synthetic
  cluster: {{name: synthetic, kubernetesVersion: \"1.35\", oidcIssuer: true, workloadIdentity: true}}
  nodePools:
    - {{name: system, mode: System, vmSize: Standard_D4ds_v6, count: 2, criticalAddonsOnly: true}}
    - {{name: gpupool, vmSize: Standard_ND96amsr_A100_v4, autoscale: {{min: 0, max: {gpu_nodes}}}}}
  identity: {{name: ray-workload-identity, federatedCredential: ray-workload-federated}}
operators:
  kueue: {{version: 0.19.2, frameworks: [batch/job, pod, ray.io/rayjob]}}
  kuberay: {{version: 1.7.0}}
namespace: ray
serviceAccount: {{name: ray-workload, workloadIdentity: true}}
flavors:
  - name: default
  - {{name: gpu, nodeLabels: {{accelerator: nvidia}}}}
ray: {{image: \"mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.55.1-cuda13.0\", version: \"2.55.1\"}}
queues:
  mode: team
  clusterQueues:
"
    );
    for t in 0..teams {
        let _ = write!(
            p,
            "    - name: team-{t}-cq
      cohortName: shared
      preemption: {{withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}}
      resourceGroups:
        - coveredResources: [cpu, memory]
          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: \"8\", borrowingLimit: \"8\"}}, {{name: memory, nominalQuota: 64Gi, borrowingLimit: 64Gi}}]}}]
        - coveredResources: [nvidia.com/gpu]
          flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: \"1\", borrowingLimit: \"1\"}}]}}]
"
        );
    }
    p.push_str("  localQueues:\n");
    for t in 0..teams {
        let _ = writeln!(p, "    - {{name: team-{t}, clusterQueue: team-{t}-cq}}");
    }
    p.push_str("workloads:\n");
    for t in 0..teams {
        let _ = write!(
            p,
            "  - kind: RayJob
    name: job-{t}
    queue: team-{t}
    entrypoint: python3 -c 'import ray; ray.init()' --team {t}
    ttlSecondsAfterFinished: 300
    head: {{resources: {{cpu: \"1\", memory: 4Gi}}, rayStartParams: {{num-cpus: \"0\"}}}}
    workers:
      - {{name: gpu-workers, replicas: 1, resources: {{cpu: \"4\", memory: 32Gi, nvidia.com/gpu: \"1\"}}, rayStartParams: {{num-gpus: \"1\"}}}}
"
        );
    }
    p
}
