//! What Kueue counts against quota of a pod's requests: Kueue v0.19.2 drops the resources
//! `resources.excludeResourcePrefixes` names, then applies `resources.transformations`, before
//! flavor assignment, quota and fair sharing (kueue@v0.19.2 `pkg/workload/workload.go`
//! `totalRequestsFromPodSets`, `dropExcludedResources`, `applyResourceTransformations`). The
//! node side (TAS, the kube-scheduler, the capacity rules) still sees the pod's own requests.

use crate::profile::{Profile, Quantity, QuotaResources, TransformationStrategy};
use std::collections::BTreeMap;

/// One unit: what a quantity's nano-units are counted in.
const NANO: i128 = 1_000_000_000;

/// The profile's `operators.kueue.configuration.resources`, ready to apply to a pod's requests.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QuotaView<'p> {
    resources: Option<&'p QuotaResources>,
}

impl<'p> QuotaView<'p> {
    pub(crate) fn new(p: &'p Profile) -> Self {
        Self {
            resources: p
                .operators
                .kueue
                .as_ref()
                .and_then(|k| k.configuration.as_ref())
                .and_then(|c| c.resources.as_ref()),
        }
    }

    /// Whether Kueue counts every request as it is (no exclusion, no transformation).
    pub(crate) fn is_identity(self) -> bool {
        self.resources
            .is_none_or(|r| r.exclude_resource_prefixes.is_empty() && r.transformations.is_empty())
    }

    /// Whether Kueue drops `resource` before counting.
    pub(crate) fn excludes(self, resource: &str) -> bool {
        self.resources.is_some_and(|r| {
            r.exclude_resource_prefixes
                .iter()
                .any(|p| resource.starts_with(p.as_str()))
        })
    }

    /// One pod's requests as Kueue counts them: excluded resources dropped; a transformed
    /// input replaced by (or, with `Retain`, kept beside) its outputs, each output the input's
    /// amount (times the `multiplyBy` resource's, when the pod requests it) times its factor;
    /// the outputs of all inputs summed, a negative sum counted as zero.
    pub(crate) fn apply(self, per_pod: &BTreeMap<String, Quantity>) -> BTreeMap<String, Quantity> {
        let Some(r) = self.resources.filter(|_| !self.is_identity()) else {
            return per_pod.clone();
        };
        let input: BTreeMap<&str, Quantity> = per_pod
            .iter()
            .filter(|(k, _)| !self.excludes(k))
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        let mut retained: BTreeMap<String, Quantity> = BTreeMap::new();
        let mut generated: BTreeMap<String, Quantity> = BTreeMap::new();
        for (&name, &amount) in &input {
            let Some(t) = r.transformations.iter().find(|t| t.input.as_str() == name) else {
                retained.insert(name.to_owned(), amount);
                continue;
            };
            let base = match t.multiply_by.as_ref().and_then(|m| input.get(m.as_str())) {
                Some(&m) => product(amount, m),
                None => amount,
            };
            for (out, factor) in &t.outputs {
                let e = generated
                    .entry(out.to_string())
                    .or_insert_with(|| factor.with_nanos(0));
                *e = e.plus(product(base, *factor));
            }
            if t.strategy == TransformationStrategy::Retain {
                retained.insert(name.to_owned(), amount);
            }
        }
        for (name, amount) in generated {
            let amount = amount.with_nanos(amount.nanos().max(0));
            let e = retained.entry(name).or_insert_with(|| amount.with_nanos(0));
            *e = e.plus(amount);
        }
        retained
    }
}

/// `a × b` in exact nano-units (Kueue multiplies decimals), in `a`'s spelling; saturating.
fn product(a: Quantity, b: Quantity) -> Quantity {
    let n = a
        .nanos()
        .checked_mul(b.nanos())
        .map_or(i128::MAX, |p| p / NANO);
    a.with_nanos(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{QualifiedName, ResourcePrefix, ResourceTransformation};

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("quantity")
    }

    fn view(r: &QuotaResources) -> QuotaView<'_> {
        QuotaView { resources: Some(r) }
    }

    fn requests(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), q(v))).collect()
    }

    #[test]
    fn excluded_prefixes_are_dropped_and_transformations_replace_or_retain() {
        let r = QuotaResources {
            quota_check_strategy: None,
            exclude_resource_prefixes: vec![ResourcePrefix("ephemeral-storage".into())],
            transformations: vec![
                ResourceTransformation {
                    input: QualifiedName("nvidia.com/mig-1g.10gb".into()),
                    strategy: TransformationStrategy::Replace,
                    multiply_by: None,
                    outputs: BTreeMap::from([
                        (QualifiedName("example.com/gpu-share".into()), q("500m")),
                        (QualifiedName("memory".into()), q("1Gi")),
                    ]),
                },
                ResourceTransformation {
                    input: QualifiedName("cpu".into()),
                    strategy: TransformationStrategy::Retain,
                    multiply_by: None,
                    outputs: BTreeMap::from([(
                        QualifiedName("example.com/credits".into()),
                        q("2"),
                    )]),
                },
            ],
        };
        let got = view(&r).apply(&requests(&[
            ("cpu", "4"),
            ("memory", "8Gi"),
            ("ephemeral-storage", "10Gi"),
            ("nvidia.com/mig-1g.10gb", "2"),
        ]));
        assert_eq!(
            got,
            requests(&[
                ("cpu", "4"),
                ("example.com/credits", "8"),
                ("example.com/gpu-share", "1"),
                ("memory", "10Gi"),
            ])
        );
    }

    #[test]
    fn multiply_by_scales_the_outputs_not_the_retained_input() {
        let r = QuotaResources {
            quota_check_strategy: None,
            exclude_resource_prefixes: Vec::new(),
            transformations: vec![ResourceTransformation {
                input: QualifiedName("example.com/slices".into()),
                strategy: TransformationStrategy::Retain,
                multiply_by: Some(QualifiedName("cpu".into())),
                outputs: BTreeMap::from([(QualifiedName("example.com/units".into()), q("3"))]),
            }],
        };
        let got = view(&r).apply(&requests(&[("cpu", "2"), ("example.com/slices", "5")]));
        assert_eq!(
            got,
            requests(&[
                ("cpu", "2"),
                ("example.com/slices", "5"),
                ("example.com/units", "30")
            ])
        );
    }
}
