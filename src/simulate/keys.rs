//! The keys and values the simulator keeps quota and usage under, apart from the world so that
//! the modules that compute over them (`tree`) need nothing else of it.

use std::collections::HashMap;

/// A (flavor, resource) pair: the unit Kueue keeps quota and usage in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Fr {
    pub(crate) flavor: usize,
    pub(crate) resource: usize,
}

/// A map keyed by flavor/resource with a fast hasher: the simulator looks these up on every
/// flavor and preemption check.
pub(crate) type FrMap<V> = HashMap<Fr, V, foldhash::fast::FixedState>;

/// One ClusterQueue's quota for one flavor and resource, in nano-units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuotaSpec {
    pub(crate) nominal: i128,
    pub(crate) borrowing_limit: Option<i128>,
    pub(crate) lending_limit: Option<i128>,
}
