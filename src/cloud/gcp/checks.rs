//! What `gcloud container clusters create` / `node-pools create` would refuse, or what GKE would
//! refuse only once the request reaches it (gcloud checks neither machine/accelerator pairs nor
//! autoscale ranges on the client), beyond the checks every cloud shares.

use super::{DEFAULT_POOL, Gcp, catalogue};
use crate::base::codes;
use crate::base::diagnostic::Findings;
use crate::profile::Profile;

pub(super) fn run(g: &Gcp, _p: &Profile, out: &mut Findings) {
    if let Some(first) = g.node_pools.first()
        && first.name.as_str() != DEFAULT_POOL
    {
        out.report(
            &codes::FIRST_POOL_NAME,
            "/gcp/nodePools/0/name",
            format!(
                "node pool `{}` is the one `gcloud container clusters create` makes, and GKE names it `{DEFAULT_POOL}`: verify.sh and the operators' node selector would look for a pool that does not exist",
                first.name
            ),
            Some(format!("rename it `{DEFAULT_POOL}`, and add `{}` as a second pool if you want that name", first.name)),
        );
    }
    for (i, n) in g.node_pools.iter().enumerate() {
        let Some((a, (kind, count))) = n
            .accelerator
            .as_ref()
            .zip(catalogue::accelerator(&n.machine_type))
        else {
            continue;
        };
        if a.kind.as_str() != kind {
            out.report(
                &codes::ACCELERATOR_MISMATCH,
                &format!("/gcp/nodePools/{i}/accelerator/type"),
                format!(
                    "machine type `{}` comes with {count} × `{kind}`, not `{}`: GKE refuses the pool",
                    n.machine_type, a.kind
                ),
                Some(format!("set `type: {kind}`, or pick a machine type that carries `{}`", a.kind)),
            );
        } else if a.count != count {
            out.report(
                &codes::ACCELERATOR_MISMATCH,
                &format!("/gcp/nodePools/{i}/accelerator/count"),
                format!(
                    "machine type `{}` comes with {count} × `{kind}`, not {}: the GPUs of G2, A2 and A3 types are fixed",
                    n.machine_type, a.count
                ),
                Some(format!("set `count: {count}`, or pick the machine type with {} GPUs", a.count)),
            );
        }
    }
}
