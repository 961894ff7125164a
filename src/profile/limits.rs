//! The schema's size and range limits, enforced by the typed deserializer as well, so that a
//! profile that deserializes is one the JSON Schema accepts and the schema validator is only
//! compiled when there is an error to explain (`input::schema::typed`).
//!
//! Each helper sits next to the `#[schemars(...)]` attribute that states the same limit in
//! the schema; `tests/it/fastpath.rs` mutates profiles at every node and checks that the two
//! never disagree, so a limit written on one side only fails a test.

use serde::de::{Deserialize, Deserializer, Error};
use std::collections::BTreeMap;

fn count_error<E: Error>(n: usize, min: usize, max: usize, what: &str) -> E {
    if n < min {
        E::custom(format!("expected at least {min} {what}, found {n}"))
    } else {
        E::custom(format!("expected at most {max} {what}, found {n}"))
    }
}

/// A list of `MIN..=MAX` items (`minItems`/`maxItems`).
pub(crate) fn items<'de, D, T, const MIN: usize, const MAX: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v = Vec::<T>::deserialize(d)?;
    if (MIN..=MAX).contains(&v.len()) {
        Ok(v)
    } else {
        Err(count_error(v.len(), MIN, MAX, "items"))
    }
}

/// A map of at most `MAX` entries (`maxProperties`).
pub(crate) fn entries<'de, D, K, V, const MAX: usize>(d: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    let m = BTreeMap::<K, V>::deserialize(d)?;
    if m.len() <= MAX {
        Ok(m)
    } else {
        Err(count_error(m.len(), 0, MAX, "entries"))
    }
}

/// An integer in `MIN..=MAX` (`minimum`/`maximum`).
pub(crate) fn range<'de, D, T, const MIN: i64, const MAX: i64>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy + Into<i64>,
{
    let v = T::deserialize(d)?;
    let n: i64 = v.into();
    if (MIN..=MAX).contains(&n) {
        Ok(v)
    } else {
        Err(D::Error::custom(format!(
            "expected a number from {MIN} to {MAX}, found {n}"
        )))
    }
}

/// An optional integer in `MIN..=MAX`; absent stays absent (with `#[serde(default)]`).
pub(crate) fn opt_range<'de, D, T, const MIN: i64, const MAX: i64>(
    d: D,
) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Copy + Into<i64>,
{
    range::<D, T, MIN, MAX>(d).map(Some)
}

/// An optional text of at most `MAX` characters (`maxLength` counts characters).
pub(crate) fn opt_text<'de, D, const MAX: usize>(d: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    let s = String::deserialize(d)?;
    let n = s.chars().count();
    if n <= MAX {
        Ok(Some(s))
    } else {
        Err(D::Error::custom(format!(
            "expected at most {MAX} characters, found {n}"
        )))
    }
}
