"""Data-parallel training: one Ray actor per shard computes gradients, the driver averages them.

A linear regression on generated data, with numpy only (shipped with Ray's images), so it runs
without pip installs. TRAIN_WORKERS (default: one per GPU, at least 1) and TRAIN_STEPS set the
size. Each actor takes a GPU when the cluster has them, as a real trainer's workers would.
"""

import os

import numpy as np
import ray

FEATURES = 8
TRUE_WEIGHTS = np.arange(1, FEATURES + 1, dtype=float)


@ray.remote
class Shard:
    def __init__(self, seed, rows=20_000):
        rng = np.random.default_rng(seed)
        self.x = rng.normal(size=(rows, FEATURES))
        self.y = self.x @ TRUE_WEIGHTS + rng.normal(scale=0.1, size=rows)

    def gradient(self, weights):
        error = self.x @ weights - self.y
        return self.x.T @ error / len(self.y), float(np.mean(error**2))


ray.init()
gpus = int(ray.cluster_resources().get("GPU", 0))
workers = int(os.environ.get("TRAIN_WORKERS") or max(gpus, 1))
steps = int(os.environ.get("TRAIN_STEPS", "100"))
options = {"num_gpus": 1} if gpus >= workers else {}
shards = [Shard.options(**options).remote(seed) for seed in range(workers)]
print(f"{workers} data-parallel worker(s), GPU each: {bool(options)}")

weights = np.zeros(FEATURES)
for step in range(steps):
    results = ray.get([s.gradient.remote(weights) for s in shards])
    weights -= 0.1 * np.mean([g for g, _ in results], axis=0)
    loss = float(np.mean([l for _, l in results]))
    if step % 20 == 0 or step == steps - 1:
        print(f"step {step:4d}  loss {loss:.5f}")
print("learned weights:", np.round(weights, 2))
if storage := os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"):
    print(f"storage account {storage} (containers: {os.environ.get('AZURE_STORAGE_CONTAINERS')})")
assert np.allclose(weights, TRUE_WEIGHTS, atol=0.05), "training did not converge"
