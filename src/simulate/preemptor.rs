//! Which preemptor Kueue v0.19.2 runs (kubernetes-sigs/kueue@v0.19.2
//! `pkg/scheduler/preemption/preemption.go` `getTargets`): the fair-sharing one when the
//! Configuration has `fairSharing`, else the classical one. The scheduling cycle and the flavor
//! assigner's preemption oracle ask here.

use super::preemption::{self, Target};
use super::snapshot::Snapshot;
use super::world::{Fr, FrMap};

/// The preemption targets that make `requests` fit for `preemptor`, or none. `frs` are the
/// flavor/resources that need preemption. The snapshot is left as it was found.
pub(super) fn targets(
    snap: &mut Snapshot<'_>,
    preemptor: usize,
    frs: &[Fr],
    requests: &FrMap<i128>,
) -> Vec<Target> {
    match &snap.world.fair_sharing {
        Some(strategies) => {
            // Most searches of a backlog find nothing; when one flavor/resource already
            // shows it, skip the search (`fair_sharing::surely_none` says why that is exact).
            let hopeless = !snap.reference
                && frs.iter().any(|fr| {
                    requests.get(fr).is_some_and(|&v| {
                        super::fair_sharing::surely_none(snap, preemptor, *fr, v, frs, strategies)
                            .none
                    })
                });
            if hopeless {
                debug_assert!(
                    super::fair_sharing::targets(snap, preemptor, frs, requests, strategies)
                        .is_empty(),
                    "fair_sharing::surely_none was wrong for `{}`",
                    snap.world.workloads[preemptor].name
                );
                return Vec::new();
            }
            super::fair_sharing::targets(snap, preemptor, frs, requests, strategies)
        }
        None => preemption::classical(snap, preemptor, frs, requests),
    }
}
