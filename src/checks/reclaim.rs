//! RK146: a queued workload that fits its ClusterQueue only by borrowing cannot reclaim the
//! queue's nominal quota from a cohort peer that borrows it (Kueue's classic preemption). The
//! finding comes from the simulator's standard scenarios (`simulate::standard::unreclaimable`),
//! so the rule and `SUMMARY.md`'s "Queue behaviour" section never disagree.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let found = crate::simulate::standard::unreclaimable(ctx.profile);
    for u in &found {
        let w = &ctx.profile.workloads[u.index];
        let pointer = if w.queue.is_some() {
            ptr!["workloads", u.index, "queue"]
        } else {
            ptr!["workloads", u.index]
        };
        let hint = format!(
            "make it fit `{}`'s nominal quota (fewer or smaller pods, or a larger nominalQuota), or give it a higher priority class and let the queue preempt lower priorities while borrowing with `preemption.borrowWithinCohort`",
            u.cq
        );
        ctx.report(&codes::CANNOT_RECLAIM, &pointer, u.message(), Some(hint));
    }
    ctx.unreclaimable = found;
}
