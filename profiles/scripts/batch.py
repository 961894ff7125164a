"""Batch job: Ray Data over generated records, scored in parallel batches.

Uses Ray Data (in Ray's images) on data it makes itself, so it runs without pip installs or
input files. BATCH_ROWS sets the size. With AZURE_STORAGE_ACCOUNT_NAME set (raykueue passes the
profile's azure.storage) and the Azure SDK installed, the summary is uploaded with workload
identity to the first of AZURE_STORAGE_CONTAINERS; without the SDK it is only printed.
"""

import json
import os

import numpy as np
import ray


def score(batch):
    x = batch["id"].astype(float)
    batch["score"] = np.sin(x / 1000.0) ** 2
    return batch


ray.init()
rows = int(os.environ.get("BATCH_ROWS", "1000000"))
ds = ray.data.range(rows).map_batches(score, batch_format="numpy")
summary = {
    "rows": ds.count(),
    "mean_score": round(ds.mean("score"), 6),
    "max_score": round(ds.max("score"), 6),
}
print(json.dumps(summary))

account = os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
containers = [c for c in os.environ.get("AZURE_STORAGE_CONTAINERS", "").split(",") if c]
if account and containers:
    try:
        from azure.identity import DefaultAzureCredential
        from azure.storage.blob import BlobServiceClient
    except ImportError:
        print(f"azure SDK not installed: not uploading to {account}/{containers[0]}")
    else:
        client = BlobServiceClient(f"https://{account}.blob.core.windows.net", DefaultAzureCredential())
        blob = client.get_blob_client(containers[0], "raykueue-batch/summary.json")
        blob.upload_blob(json.dumps(summary), overwrite=True)
        print(f"uploaded {blob.url}")
