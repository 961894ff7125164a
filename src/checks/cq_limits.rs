//! The ClusterQueue webhook rules the schema cannot say (kueue@v0.19.2
//! `pkg/webhooks/clusterqueue_webhook.go`): totals across resource groups, and the fair-sharing
//! weight Kueue refuses because it would collapse to zero.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::profile::Quantity;

const MAX_FLAVORS: usize = 256;
const MAX_COVERED: usize = 256;
const MAX_PAIRS_PER_GROUP: usize = 512;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let Some(q) = &ctx.profile.queues else { return };
    for (i, cq) in q.cluster_queues.iter().enumerate() {
        let base = ptr!["queues", "clusterQueues", i];
        let flavors: usize = cq.resource_groups.iter().map(|g| g.flavors.len()).sum();
        let covered: usize = cq
            .resource_groups
            .iter()
            .map(|g| g.covered_resources.len())
            .sum();
        for (count, limit, what) in [
            (flavors, MAX_FLAVORS, "flavors"),
            (covered, MAX_COVERED, "covered resources"),
        ] {
            if count > limit {
                ctx.report(
                    &codes::QUEUE_TOTALS,
                    &base.at("resourceGroups"),
                    format!(
                        "ClusterQueue `{}` has {count} {what} across its resource groups; Kueue allows at most {limit}",
                        cq.name
                    ),
                    Some("split the queue, or merge flavors that select the same nodes".into()),
                );
            }
        }
        for (g, group) in cq.resource_groups.iter().enumerate() {
            let pairs = group.flavors.len() * group.covered_resources.len();
            if pairs > MAX_PAIRS_PER_GROUP {
                ctx.report(
                    &codes::QUEUE_TOTALS,
                    &ptr!(base; "resourceGroups", g),
                    format!(
                        "resource group {g} of ClusterQueue `{}` has {} flavors × {} covered resources = {pairs} quotas; Kueue allows at most {MAX_PAIRS_PER_GROUP} per group",
                        cq.name,
                        group.flavors.len(),
                        group.covered_resources.len()
                    ),
                    Some("move some resources into another resource group, or use fewer flavors".into()),
                );
            }
        }
        if let Some(w) = cq.fair_sharing_weight
            && !w.is_zero()
            && w <= Quantity::from_nanos(1)
        {
            ctx.report(
                &codes::FAIR_SHARING_WEIGHT,
                &base.at("fairSharingWeight"),
                format!(
                    "fairSharingWeight {w} is above 0 but not above 1n: Kueue refuses it because the share would collapse to zero"
                ),
                Some("use 0 (the queue borrows only what nobody else wants) or a weight such as 1".into()),
            );
        }
    }
}
