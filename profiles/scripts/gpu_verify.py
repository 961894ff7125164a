"""GPU verification for a plain Job: the GPUs the pod was given, then work on each of them.

Runs in an image with PyTorch and CUDA (the node's NVIDIA driver provides nvidia-smi). Exits 1
when the pod sees fewer GPUs than it requested (GPU_VERIFY_EXPECT, default: any) or a device
fails to run a kernel, so a broken node fails the Job instead of a long run later.
"""

import os
import subprocess
import sys

import torch

smi = subprocess.run(
    ["nvidia-smi", "--query-gpu=index,name,memory.total", "--format=csv,noheader"],
    capture_output=True,
    text=True,
    check=False,
)
print(smi.stdout.strip() or smi.stderr.strip())

count = torch.cuda.device_count()
expected = int(os.environ.get("GPU_VERIFY_EXPECT") or 1)
print(f"torch sees {count} GPU(s), {expected} expected")
if count < expected:
    sys.exit(1)

for i in range(count):
    a = torch.randn(4096, 4096, device=f"cuda:{i}")
    value = float((a @ a).sum())
    torch.cuda.synchronize(i)
    print(f"cuda:{i} {torch.cuda.get_device_name(i)}: matmul ran ({value:.3e})")
print("all GPUs ran a kernel")
