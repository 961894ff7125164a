//! Leaf modules every stage may use: diagnostics and their codes, source text and positions,
//! JSON pointers, the one YAML writer, and the small parallelism helper. Nothing here imports
//! a stage.

pub(crate) mod codes;
pub(crate) mod diagnostic;
pub(crate) mod par;
pub(crate) mod pointer;
pub(crate) mod source;
pub(crate) mod yaml;

/// Every string of up to `max_len` characters over `alphabet`, the empty one first: what the
/// tests that hold a hand-written matcher or writer to a reference run it on.
#[cfg(test)]
pub(crate) fn every_string(alphabet: &[char], max_len: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut last = vec![String::new()];
    for _ in 0..max_len {
        last = last
            .iter()
            .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
            .collect();
        out.extend(last.iter().cloned());
    }
    out
}
