"""GPU check: what Ray sees, then one task per requested GPU that reports where it ran.

Needs nothing beyond the Ray image (the node's NVIDIA driver provides nvidia-smi).
GPU_CHECK_GPUS sets how many GPUs to ask for (default: the cluster's GPUs, at least 1); on an
autoscaled cluster the tasks bring up the GPU workers. Exits 1 when a task gets no GPU from Ray
or nvidia-smi lists none (no driver in the pod).
"""

import os
import socket
import subprocess
import sys

import ray


@ray.remote(num_gpus=1)
def probe(index):
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        devices = (smi.stdout or smi.stderr).strip()
    except (OSError, subprocess.SubprocessError) as e:
        devices = f"nvidia-smi failed: {e}"
    return index, socket.gethostname(), ray.get_gpu_ids(), devices


ray.init()
resources = ray.cluster_resources()
print("Ray cluster resources:", {k: v for k, v in sorted(resources.items()) if "node:" not in k})
wanted = int(os.environ.get("GPU_CHECK_GPUS") or max(int(resources.get("GPU", 0)), 1))
print(f"Running {wanted} task(s), one GPU each")
failed = 0
for index, host, gpu_ids, devices in ray.get([probe.remote(i) for i in range(wanted)]):
    print(f"task {index} on {host}: Ray GPU ids {gpu_ids}\n  {devices}")
    failed += not gpu_ids or not devices.startswith("GPU ")
sys.exit(1 if failed else 0)
