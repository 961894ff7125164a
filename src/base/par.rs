//! Work on all cores, when there is enough of it. Starting the thread pool costs a small
//! profile more than it saves (`gen --profile team`, 51 objects: 3 ms of system time for
//! threads and their heaps, against a 10 ms run), so below `MIN_ITEMS` everything runs on the
//! calling thread and no pool is started.

use rayon::prelude::*;

/// Items (objects to write and validate, queues and workloads to check) from which other
/// threads pay off.
const MIN_ITEMS: usize = 200;

/// Whether `items` pieces of work are worth the other cores.
pub(crate) fn wide(items: usize) -> bool {
    items >= MIN_ITEMS
}

/// `f` over `items`, in order; on all cores when `wide`. `items` is a slice (`f` borrows each
/// item) or a `Vec` (`f` consumes each, and so frees it on the thread that used it).
pub(crate) fn map<I, T, R>(wide: bool, items: I, f: impl Fn(T) -> R + Sync + Send) -> Vec<R>
where
    I: IntoParallelIterator<Item = T> + IntoIterator<Item = T>,
    T: Send,
    R: Send,
{
    if wide {
        items.into_par_iter().map(f).collect()
    } else {
        items.into_iter().map(f).collect()
    }
}

/// Both closures, on two cores when `wide`.
pub(crate) fn join<A: Send, B: Send>(
    wide: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if wide { rayon::join(a, b) } else { (a(), b()) }
}
