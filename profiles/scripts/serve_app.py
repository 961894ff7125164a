"""Ray Serve app, imported by serveConfigV2 as `serve_app:app`.

The scripts folder must be on the app's PYTHONPATH (raykueue's shipped profiles set
`runtimeEnv.envVars.PYTHONPATH` to the scripts mount path). SERVE_NUM_GPUS (default 0) is the
GPUs each replica takes. GET or POST to the route prefix; the answer says where it ran.
"""

import os
import socket

import ray
from ray import serve


@serve.deployment(ray_actor_options={"num_gpus": float(os.environ.get("SERVE_NUM_GPUS", "0"))})
class Echo:
    async def __call__(self, request):
        body = (await request.body()).decode(errors="replace")
        return {
            "host": socket.gethostname(),
            "gpu_ids": ray.get_gpu_ids(),
            "storage_account": os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"),
            "echo": body or dict(request.query_params),
        }


app = Echo.bind()
