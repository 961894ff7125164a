//! KubeRay and images: what the KubeRay controller rejects (it checks in the controller, so a
//! bad object is accepted by the API server and then marked `ValidationFailed`), and images
//! that cannot be what the workload needs (unpinned, CPU-only for GPU pods, a different Ray
//! version than `rayVersion`). A missing image or Ray version, and fields of the wrong kind
//! (`submitter` outside K8sJobMode), are the workload rules' (RK127, RK134, RK135).
//!
//! Image tags (ray-project's docker README): `rayproject/ray:{ray version}[-py3XX][-cpu|-cuXXX|-gpu]`;
//! on `rayproject/ray` no platform suffix means the CPU build. Other registries are read by
//! their markers: `cuXXX`, `cudaXX`, `gpu` (GPU) or `cpu` (CPU), and a Ray version written
//! `rayX.Y.Z` (`mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.55.1-cuda13.0`). An image
//! nothing can be read from gets no finding.

use super::Ctx;
use crate::base::codes;
use crate::cloud::GPU_RESOURCE;
use crate::facts::pods::{Role, pod_sets};
use crate::profile::{Workload, WorkloadKind};
// The KubeRay facts the output validation checks objects against: one definition each.
use crate::base::pointer::{Pointer, ptr};
use crate::facts::kuberay::{FORBIDDEN_RAY_START_PARAM, max_name_len, replicas_out_of_order};

/// An image reference split into repository, tag and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ImageRef<'a> {
    pub(crate) repository: &'a str,
    pub(crate) tag: Option<&'a str>,
    pub(crate) digest: Option<&'a str>,
}

pub(super) fn parse_image(image: &str) -> ImageRef<'_> {
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..])),
        None => (rest, None),
    };
    ImageRef {
        repository,
        tag,
        digest,
    }
}

impl ImageRef<'_> {
    /// The Docker Hub repository without registry prefix (`rayproject/ray`).
    fn hub_name(&self) -> &str {
        let r = self.repository;
        ["docker.io/", "index.docker.io/", "registry-1.docker.io/"]
            .iter()
            .find_map(|p| r.strip_prefix(p))
            .unwrap_or(r)
    }

    fn is_rayproject_ray(&self) -> bool {
        self.hub_name() == "rayproject/ray"
    }

    /// Why the image is not pinned, or `None` when it is.
    pub(super) fn unpinned(&self) -> Option<&'static str> {
        if self.digest.is_some() {
            return None;
        }
        match self.tag {
            None => Some("has no tag, so it means `latest`"),
            Some("latest") => Some("uses the moving tag `latest`"),
            Some(t) if t.starts_with("nightly") => Some("uses a nightly tag, rebuilt every day"),
            Some(_) => None,
        }
    }

    /// Whether the image carries CUDA: `Some(true)` GPU, `Some(false)` CPU-only, `None` unknown.
    pub(super) fn gpu_capable(&self) -> Option<bool> {
        let tag = self.tag?.to_ascii_lowercase();
        let parts: Vec<&str> = tag.split('-').collect();
        let gpu = parts.iter().any(|p| {
            *p == "gpu"
                || p.starts_with("cuda")
                || p.strip_prefix("cu")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        });
        if gpu {
            return Some(true);
        }
        if parts.contains(&"cpu") {
            return Some(false);
        }
        // rayproject/ray: no platform suffix is the CPU build.
        self.is_rayproject_ray().then_some(false)
    }

    /// The Ray version the image contains, when the tag says it.
    pub(super) fn ray_version(&self) -> Option<String> {
        let tag = self.tag?;
        for part in tag.split('-') {
            if let Some(v) = part.strip_prefix("ray").and_then(leading_version) {
                return Some(v);
            }
        }
        let name = self.repository.rsplit('/').next().unwrap_or("");
        if name.starts_with("ray") {
            return leading_version(tag);
        }
        None
    }
}

/// `2.57.0` from `2.57.0-gpu`, `2.49.2.deprecated`; `None` unless three numbers lead and the
/// next character ends the version.
fn leading_version(s: &str) -> Option<String> {
    let mut numbers = 0;
    let mut end = 0;
    let bytes = s.as_bytes();
    while numbers < 3 {
        let start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            return None;
        }
        numbers += 1;
        if numbers < 3 {
            if bytes.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
    }
    match bytes.get(end) {
        None | Some(b'-' | b'.' | b'_') => Some(s[..end].to_string()),
        _ => None,
    }
}

/// The image a workload runs and where the profile says it.
fn image_of<'p>(ctx: &Ctx<'p>, i: usize, w: &'p Workload) -> Option<(&'p str, Pointer)> {
    if let Some(img) = &w.image {
        return Some((img.as_str(), ptr!["workloads", i, "image"]));
    }
    let ray = ctx.profile.ray.as_ref()?;
    Some((ray.image.as_str(), ptr!["ray", "image"]))
}

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    if let Some(ray) = &p.ray {
        pinned(ctx, ray.image.as_str(), &ptr!["ray", "image"]);
        let img = parse_image(&ray.image);
        if let (Some(given), Some(derived)) = (&ray.version, img.ray_version())
            && given.as_str() != derived
        {
            ctx.report(
                &codes::RAY_VERSION_MISMATCH,
                &ptr!["ray", "version"],
                format!(
                    "ray.version is {given}, but image `{}` contains Ray {derived}",
                    ray.image
                ),
                Some(format!(
                    "set `version: \"{derived}\"`, or use an image of Ray {given}"
                )),
            );
        }
    }
    // KubeRay's rules; a plain Job's image and pods are Kubernetes' own.
    for (i, w) in p
        .workloads
        .iter()
        .enumerate()
        .filter(|(_, w)| w.kind.is_ray())
    {
        let base = ptr!["workloads", i];
        names(ctx, &base, w);
        if let Some(img) = &w.image {
            pinned(ctx, img.as_str(), &base.at("image"));
        }
        versions(ctx, i, w);
        replicas(ctx, &base, w);
        for (ptr, params) in w
            .head
            .iter()
            .map(|h| (base.at("head"), &h.ray_start_params))
            .chain(
                w.workers
                    .iter()
                    .enumerate()
                    .map(|(j, g)| (ptr!(base; "workers", j), &g.ray_start_params)),
            )
        {
            if params.contains_key(FORBIDDEN_RAY_START_PARAM) {
                ctx.report(
                    &codes::RAY_START_LABELS,
                    &ptr!(ptr; "rayStartParams", FORBIDDEN_RAY_START_PARAM),
                    "`labels` in rayStartParams is forbidden: KubeRay marks the cluster ValidationFailed".into(),
                    Some("remove it; Ray node labels go in the group's `labels` field of the RayCluster spec".into()),
                );
            }
        }
        if let Some((image, image_ptr)) = image_of(ctx, i, w)
            && parse_image(image).gpu_capable() == Some(false)
        {
            for s in pod_sets(i, w) {
                if s.role == Role::Submitter || s.request(GPU_RESOURCE).is_zero() {
                    continue;
                }
                let where_set = if image_ptr.as_str() == "/ray/image" {
                    "ray.image"
                } else {
                    "its image"
                };
                ctx.report(
                    &codes::GPU_ON_CPU_IMAGE,
                    &s.resource_pointer(GPU_RESOURCE),
                    format!(
                        "{} requests `{GPU_RESOURCE}`, but {where_set} `{image}` is a CPU-only build: Ray finds no CUDA there",
                        s.describe()
                    ),
                    Some(gpu_image_hint(image)),
                );
            }
        }
    }
}

fn gpu_image_hint(image: &str) -> String {
    let img = parse_image(image);
    match (img.is_rayproject_ray(), img.ray_version()) {
        (true, Some(v)) => format!(
            "use a GPU build such as `{}:{v}-gpu` (or a `-cuXXX` tag)",
            img.repository
        ),
        _ => "use an image built with CUDA (a `-gpu` or `-cuXXX` tag)".into(),
    }
}

fn pinned(ctx: &mut Ctx<'_>, image: &str, pointer: &Pointer) {
    let img = parse_image(image);
    if let Some(why) = img.unpinned() {
        let example = if img.is_rayproject_ray() {
            format!("`{}:2.57.0-gpu`", img.repository)
        } else {
            "a release tag".to_string()
        };
        ctx.report(
            &codes::IMAGE_NOT_PINNED,
            pointer,
            format!("image `{image}` {why}: every pull may bring a different Ray"),
            Some(format!(
                "pin a version tag such as {example}, or a digest (`@sha256:...`)"
            )),
        );
    }
}

fn names(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let Some(limit) = max_name_len(w.kind.as_str()) else {
        return;
    };
    let len = w.name.chars().count();
    if len > limit {
        let why = if w.kind == WorkloadKind::RayCluster {
            "KubeRay derives Service and Pod names from it"
        } else {
            "KubeRay appends a 6-character suffix to name its RayCluster"
        };
        ctx.report(
            &codes::NAME_TOO_LONG,
            &base.at("name"),
            format!(
                "{} name `{}` has {len} characters; KubeRay allows at most {limit} ({why})",
                w.kind.as_str(),
                w.name
            ),
            Some(format!(
                "shorten it to {limit} characters or fewer ({} too many)",
                len - limit
            )),
        );
    }
}

fn versions(ctx: &mut Ctx<'_>, i: usize, w: &Workload) {
    let base = ptr!["workloads", i];
    let Some((image, _)) = image_of(ctx, i, w) else {
        return;
    };
    let derived = parse_image(image).ray_version();
    match (&w.ray_version, &derived) {
        (Some(given), Some(derived)) if given.as_str() != derived => {
            ctx.report(
                &codes::RAY_VERSION_MISMATCH,
                &base.at("rayVersion"),
                format!(
                    "rayVersion is {given}, but image `{image}` contains Ray {derived}: KubeRay would run the autoscaler and features of the wrong version"
                ),
                Some(format!(
                    "set `rayVersion: \"{derived}\"`, or use an image of Ray {given}"
                )),
            );
        }
        // No version to compare: RK135 (workload rules) asks for one when none can be read.
        _ => {}
    }
}

fn replicas(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    for (j, g) in w.workers.iter().enumerate() {
        let gp = ptr!(base; "workers", j);
        // Unset bounds default to `replicas`, so only bounds the profile gives can be broken.
        let (min, max) = (g.min_replicas, g.max_replicas);
        if let (Some(min), Some(max)) = (min, max)
            && replicas_out_of_order(i64::from(min), i64::from(max))
        {
            ctx.report(
                &codes::REPLICAS_RANGE,
                &gp.at("minReplicas"),
                format!(
                    "worker group `{}` has minReplicas {min} > maxReplicas {max}: KubeRay marks the cluster ValidationFailed",
                    g.name
                ),
                Some("make minReplicas ≤ maxReplicas".into()),
            );
        } else if let Some(min) = min.filter(|m| g.replicas < *m) {
            ctx.report(
                &codes::REPLICAS_RANGE,
                &gp.at("replicas"),
                format!(
                    "worker group `{}` has replicas {} < minReplicas {min}",
                    g.name, g.replicas
                ),
                Some(format!(
                    "set replicas to at least {min}, or lower minReplicas"
                )),
            );
        } else if let Some(max) = max.filter(|m| g.replicas > *m) {
            ctx.report(
                &codes::REPLICAS_RANGE,
                &gp.at("replicas"),
                format!(
                    "worker group `{}` has replicas {} > maxReplicas {max}",
                    g.name, g.replicas
                ),
                Some(format!(
                    "set replicas to at most {max}, or raise maxReplicas"
                )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_of_the_seeds() {
        let seed = parse_image("rayproject/ray:2.57.0-gpu");
        assert_eq!(seed.repository, "rayproject/ray");
        assert_eq!(seed.ray_version().as_deref(), Some("2.57.0"));
        assert_eq!(seed.gpu_capable(), Some(true));
        assert_eq!(seed.unpinned(), None);

        let mcr = parse_image("mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.55.1-cuda13.0");
        assert_eq!(mcr.repository, "mcr.microsoft.com/aks/ai-runtime/ray");
        assert_eq!(mcr.ray_version().as_deref(), Some("2.55.1"));
        assert_eq!(mcr.gpu_capable(), Some(true));
    }

    #[test]
    fn reads_the_tag_grammar() {
        let cases = [
            ("rayproject/ray:2.52.0", Some(false), Some("2.52.0")),
            ("rayproject/ray:2.58.0-py312", Some(false), Some("2.58.0")),
            (
                "rayproject/ray:2.57.0-py310-cpu",
                Some(false),
                Some("2.57.0"),
            ),
            (
                "rayproject/ray:2.57.0-py310-cu128",
                Some(true),
                Some("2.57.0"),
            ),
            (
                "docker.io/rayproject/ray:2.57.0",
                Some(false),
                Some("2.57.0"),
            ),
            (
                "rayproject/ray-llm:2.56.0-py312-cu130",
                Some(true),
                Some("2.56.0"),
            ),
            (
                "rayproject/ray-ml:2.49.2.deprecated-py311-gpu",
                Some(true),
                Some("2.49.2"),
            ),
            ("example.com/team/trainer:1.4.0", None, None),
            ("localhost:5000/ray:2.50.1-cpu", Some(false), Some("2.50.1")),
        ];
        for (image, gpu, version) in cases {
            let img = parse_image(image);
            assert_eq!(img.gpu_capable(), gpu, "{image}");
            assert_eq!(img.ray_version().as_deref(), version, "{image}");
        }
    }

    #[test]
    fn pinned_means_a_fixed_tag_or_a_digest() {
        assert!(parse_image("rayproject/ray").unpinned().is_some());
        assert!(parse_image("rayproject/ray:latest").unpinned().is_some());
        assert!(
            parse_image("rayproject/ray:nightly-gpu")
                .unpinned()
                .is_some()
        );
        assert!(parse_image("localhost:5000/ray").unpinned().is_some());
        assert!(
            parse_image("rayproject/ray@sha256:abc")
                .unpinned()
                .is_none()
        );
        assert!(
            parse_image("rayproject/ray:latest@sha256:abc")
                .unpinned()
                .is_none()
        );
    }
}
