//! The Cohort tree of a profile's queues, as Kueue v0.19.2's hierarchy manager builds it
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/hierarchy/manager.go`, `cycle.go`): every Cohort
//! of `queues.cohorts` is a node with the parent its `parentName` names; a name that no Cohort
//! declares (a bare `cohortName`, or a `parentName` that names nothing) is an implicit Cohort:
//! a root without quota. A Cohort on or below a cycle of `parentName`s belongs to no tree
//! (Kueue deactivates its ClusterQueues: `ErrCohortHasCycle`); its parent is cut here so that
//! every walk up the tree ends, and it is marked `cyclic`.
//!
//! Shared by the rules (unknown parents, cycles, team mode, the arithmetic of `quota`), the
//! summary (the Mermaid tree) and the simulator's world (its cohort indices), so all three see
//! one tree.

use crate::profile::{Cohort, Queues};
use std::collections::HashMap;

/// One Cohort of the tree.
#[derive(Clone, Debug)]
pub(crate) struct Node<'q> {
    pub(crate) name: &'q str,
    /// The Cohort object, or none for an implicit one.
    pub(crate) spec: Option<&'q Cohort>,
    /// Index in `profile.queues.cohorts`, for pointers.
    pub(crate) declared_at: Option<usize>,
    /// The parent Cohort, none for a root (and for a Cohort on a cycle).
    pub(crate) parent: Option<usize>,
    /// On or below a cycle of `parentName`s.
    pub(crate) cyclic: bool,
    /// Child Cohorts and ClusterQueues, by name.
    pub(crate) child_cohorts: Vec<usize>,
    pub(crate) child_cqs: Vec<usize>,
}

/// The tree (a forest) of the profile's Cohorts and ClusterQueues.
#[derive(Clone, Debug, Default)]
pub(crate) struct CohortTree<'q> {
    pub(crate) cohorts: Vec<Node<'q>>,
    /// Per ClusterQueue (profile order), its Cohort.
    pub(crate) cq_parent: Vec<Option<usize>>,
    index: HashMap<&'q str, usize>,
}

impl<'q> CohortTree<'q> {
    pub(crate) fn new(queues: &'q Queues) -> Self {
        let mut t = CohortTree::default();
        // Declared Cohorts first, in profile order; the first of two with one name wins
        // (the second is RK108's finding).
        for (i, c) in queues.cohorts.iter().enumerate() {
            if t.index.contains_key(c.name.as_str()) {
                continue;
            }
            t.index.insert(c.name.as_str(), t.cohorts.len());
            t.cohorts.push(Node {
                name: c.name.as_str(),
                spec: Some(c),
                declared_at: Some(i),
                parent: None,
                cyclic: false,
                child_cohorts: Vec::new(),
                child_cqs: Vec::new(),
            });
        }
        let declared = t.cohorts.len();
        for i in 0..declared {
            let parent = t.cohorts[i]
                .spec
                .and_then(|s| s.parent_name.as_ref())
                .map(|p| t.implicit(p.as_str()));
            t.cohorts[i].parent = parent;
        }
        for cq in &queues.cluster_queues {
            let parent = cq.cohort_name.as_ref().map(|c| t.implicit(c.as_str()));
            t.cq_parent.push(parent);
        }
        // Kueue's `HasCycle`: walk up; a name seen twice is a cycle, and so is every node
        // whose walk enters one.
        for i in 0..t.cohorts.len() {
            let mut seen = vec![i];
            let mut at = i;
            while let Some(p) = t.cohorts[at].parent {
                if seen.contains(&p) {
                    t.cohorts[i].cyclic = true;
                    break;
                }
                seen.push(p);
                at = p;
            }
        }
        for i in 0..t.cohorts.len() {
            if t.cohorts[i].cyclic {
                t.cohorts[i].parent = None;
            }
        }
        for i in 0..t.cohorts.len() {
            if let Some(p) = t.cohorts[i].parent {
                t.cohorts[p].child_cohorts.push(i);
            }
        }
        for (c, p) in t.cq_parent.iter().enumerate() {
            if let Some(p) = *p {
                t.cohorts[p].child_cqs.push(c);
            }
        }
        let names: Vec<&str> = t.cohorts.iter().map(|n| n.name).collect();
        for n in &mut t.cohorts {
            n.child_cohorts.sort_by_key(|&k| names[k]);
            n.child_cqs
                .sort_by_key(|&c| queues.cluster_queues[c].name.as_str());
        }
        t
    }

    /// The Cohort named `name`, made implicit (a root without quota) when nothing declares it.
    fn implicit(&mut self, name: &'q str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.index.insert(name, self.cohorts.len());
        self.cohorts.push(Node {
            name,
            spec: None,
            declared_at: None,
            parent: None,
            cyclic: false,
            child_cohorts: Vec::new(),
            child_cqs: Vec::new(),
        });
        self.cohorts.len() - 1
    }

    /// The Cohorts above `cohort`, itself first, up to its root.
    pub(crate) fn path_to_root(&self, cohort: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(cohort), |&c| self.cohorts[c].parent)
    }

    pub(crate) fn root(&self, cohort: usize) -> usize {
        self.path_to_root(cohort).last().unwrap_or(cohort)
    }

    /// The root of a ClusterQueue's tree, none without a cohort.
    pub(crate) fn cq_root(&self, cq: usize) -> Option<usize> {
        self.cq_parent
            .get(cq)
            .copied()
            .flatten()
            .map(|c| self.root(c))
    }

    /// Whether a ClusterQueue sits in (or below) a cycle: Kueue admits nothing through it.
    pub(crate) fn cq_cyclic(&self, cq: usize) -> bool {
        self.cq_parent
            .get(cq)
            .copied()
            .flatten()
            .is_some_and(|c| self.path_to_root(c).any(|n| self.cohorts[n].cyclic))
    }

    /// Kueue's `getNodeHeight`: 1 for a Cohort with only ClusterQueues below it, one more per
    /// level of Cohorts (`pkg/scheduler/preemption/classical/hierarchical_preemption.go`).
    pub(crate) fn height(&self, cohort: usize) -> u32 {
        let n = &self.cohorts[cohort];
        let own = u32::from(!(n.child_cohorts.is_empty() && n.child_cqs.is_empty()));
        n.child_cohorts
            .iter()
            .map(|&k| self.height(k) + 1)
            .fold(own, u32::max)
    }

    /// The ClusterQueues of the subtree under `cohort`, in profile order.
    pub(crate) fn subtree_cqs(&self, cohort: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![cohort];
        while let Some(c) = stack.pop() {
            out.extend(&self.cohorts[c].child_cqs);
            stack.extend(&self.cohorts[c].child_cohorts);
        }
        out.sort_unstable();
        out
    }

    /// The ClusterQueues that share a tree with ClusterQueue `cq` (itself excluded), in
    /// profile order: its cohort peers, wherever they hang in the tree.
    pub(crate) fn peers(&self, cq: usize) -> Vec<usize> {
        self.cq_root(cq).map_or_else(Vec::new, |r| {
            self.subtree_cqs(r)
                .into_iter()
                .filter(|&o| o != cq)
                .collect()
        })
    }
}
