//! The checks every cloud shares, run once over whichever cloud the profile names: one cloud
//! section only (RK400), pool names (RK402), pool sizes (RK404), autoscale ranges (RK452),
//! taints the CLI cannot write (RK450), the Kubernetes version Kueue needs (RK410), and
//! workload identity on either side (RK453, RK454). Then the cloud's own checks
//! (`cloud/<name>/checks.rs`).

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::cloud::Cloud;
use std::collections::BTreeMap;

/// Kueue v0.19 needs Kubernetes 1.29 or newer.
const KUEUE_MIN_MINOR: u32 = 29;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let clouds = p.clouds();
    if let [first, second, ..] = clouds.as_slice() {
        ctx.report(
            &codes::TWO_PROVIDERS,
            &ptr![second.section()],
            format!(
                "the profile has both `{}` and `{}`: a profile provisions one cluster on one cloud",
                first.section(),
                second.section()
            ),
            Some(format!(
                "keep one section; for the same queues on another cloud, write a second profile that `extends` this one and sets `{}: null`",
                first.section()
            )),
        );
    }
    identity(ctx, clouds.first().copied());
    let Some(cloud) = clouds.first().copied() else {
        return;
    };
    pools(ctx, cloud);
    if let Some(v) = cloud.kubernetes_version()
        && p.operators.kueue.is_some()
        && minor(v).is_some_and(|m| m < KUEUE_MIN_MINOR)
    {
        ctx.report(
            &codes::KUBERNETES_TOO_OLD,
            &ptr![cloud.section(), "cluster", "kubernetesVersion"],
            format!("Kueue needs Kubernetes 1.{KUEUE_MIN_MINOR} or newer; the cluster runs {v}"),
            Some(format!(
                "use a current {} version, e.g. {}",
                cloud.words().service,
                cloud.words().version_example
            )),
        );
    }
    cloud.own_checks(p, &mut ctx.out);
}

/// The minor version of a Kubernetes version string (`"1.34"`, `"1.34.2"` → 34).
fn minor(v: &str) -> Option<u32> {
    v.strip_prefix("1.")?.split('.').next()?.parse().ok()
}

/// RK402, RK404, RK450, RK452 over the cloud's pools.
fn pools(ctx: &mut Ctx<'_>, cloud: &dyn Cloud) {
    let section = cloud.section();
    let words = cloud.words();
    let pool = words.pool;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for g in cloud.node_groups() {
        let base = ptr![section, "nodePools", g.index];
        if let Some(first) = seen.insert(g.name, g.index) {
            ctx.report(
                &codes::POOL_NAME_TWICE,
                &base.at("name"),
                format!(
                    "{pool} `{}` is defined twice (first at nodePools[{first}])",
                    g.name
                ),
                Some(format!(
                    "{} names are unique within a cluster; rename or remove one",
                    words.pool_short
                )),
            );
        }
        if g.count.is_none() && g.autoscale.is_none() {
            let silently = words.default_count.map_or_else(String::new, |n| {
                format!("; {} would pick {n} nodes silently", words.cli)
            });
            ctx.report(
                &codes::POOL_SIZE_MISSING,
                &base.at("name"),
                format!("{pool} `{}` gives neither `count` nor `autoscale`", g.name),
                Some(format!(
                    "add `count: N`, or `autoscale: {{min: A, max: B}}`{silently}"
                )),
            );
        }
        if let Some(s) = g.autoscale {
            if s.min > s.max {
                ctx.report(
                    &codes::AUTOSCALE_RANGE,
                    &ptr!(base; "autoscale", "min"),
                    format!(
                        "{pool} `{}` autoscales from {} to {}: min is larger than max",
                        g.name, s.min, s.max
                    ),
                    Some("swap them, or lower min".into()),
                );
            } else if let Some(c) = g.count.filter(|c| !(s.min..=s.max).contains(c))
                && words.count_within_autoscale
            {
                let drop = words.default_count.map_or_else(
                    || "drop it (up.sh then starts the pool at min)".to_owned(),
                    |n| format!("drop count (up.sh then starts the pool at {}'s default of {n} nodes, or at min when {n} is outside the range)", words.cli),
                );
                ctx.report(
                    &codes::AUTOSCALE_RANGE,
                    &base.at("count"),
                    format!(
                        "{pool} `{}` starts with {c} nodes, outside its autoscale range {}–{}",
                        g.name, s.min, s.max
                    ),
                    Some(format!("{drop}, or pick a count inside the range")),
                );
            }
        }
        if let Some(refusal) = words.taint_refusal {
            for (j, t) in g.pool_taints.iter().enumerate() {
                if t.value.as_ref().is_none_or(|v| v.is_empty()) {
                    ctx.report(
                        &codes::TAINT_WITHOUT_VALUE,
                        &ptr!(base; "taints", j),
                        format!(
                            "taint `{}:{}` of {pool} `{}` has no value; {refusal}",
                            t.key,
                            t.effect.as_str(),
                            g.name,
                        ),
                        Some(format!(
                            "give it a value, e.g. {{key: {}, value: present, effect: {}}}",
                            t.key,
                            t.effect.as_str()
                        )),
                    );
                }
            }
        }
    }
}

/// RK453: the service account asks for workload identity, and the cloud section wires none;
/// RK454: the cloud section wires an identity, and there is no service account to carry it.
fn identity(ctx: &mut Ctx<'_>, cloud: Option<&dyn Cloud>) {
    let p = ctx.profile;
    let wired = cloud.is_some_and(crate::cloud::Cloud::has_identity);
    // Without a cloud section the messages name Azure, raykueue's first cloud.
    let (section, words) = cloud.map_or(("azure", &crate::cloud::azure::WORDS), |c| {
        (c.section(), c.words())
    });
    match (&p.service_account, cloud) {
        (Some(sa), _) if sa.workload_identity && !wired => ctx.report(
            &codes::IDENTITY_WITHOUT_PROVIDER_IDENTITY,
            &ptr!["serviceAccount", "workloadIdentity"],
            format!(
                "service account `{}` is marked for workload identity, but the profile has no {section}.identity: {}",
                sa.name, words.identity_missing.0
            ),
            Some(words.identity_missing.1.into()),
        ),
        (None, Some(c)) if wired => ctx.report(
            &codes::IDENTITY_WITHOUT_SERVICE_ACCOUNT,
            &ptr![c.section(), "identity"],
            words.identity_unused.0.into(),
            Some(words.identity_unused.1.into()),
        ),
        _ => {}
    }
}
