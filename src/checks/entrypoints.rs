//! Whether a workload can start (RK150–RK151): every file its RayJob entrypoint, Job command or
//! Serve import names under `scriptsMountPath` is one of its `scripts` (the ConfigMap mounted there), and a
//! RayService head with GPUs says how much of itself Ray may use.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::{Pointer, ptr};
use crate::cloud::GPU_RESOURCE;
use crate::input::scripts;
use crate::profile::{ServeApplication, Workload, WorkloadKind};
use std::collections::BTreeSet;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    for (i, w) in ctx.profile.workloads.iter().enumerate() {
        let base = ptr!["workloads", i];
        let keys: BTreeSet<&str> = w.scripts.iter().map(scripts::key).collect();
        let mount = w.scripts_mount_path.trim_end_matches('/');
        if let Some(entrypoint) = w.entrypoint.as_deref()
            && w.kind == WorkloadKind::RayJob
        {
            for file in mounted_files(entrypoint, mount) {
                if !keys.contains(file) {
                    dangling(ctx, &base.at("entrypoint"), w, &keys, file, mount);
                }
            }
        }
        for (j, word) in w.command.iter().enumerate() {
            for file in mounted_files(word, mount) {
                if !keys.contains(file) {
                    dangling(ctx, &ptr!(base; "command", j), w, &keys, file, mount);
                }
            }
        }
        if let Some(serve) = w
            .serve
            .as_ref()
            .filter(|_| w.kind == WorkloadKind::RayService)
        {
            for (j, app) in serve.applications.iter().enumerate() {
                let pointer = ptr!(base; "serve", "applications", j, "importPath");
                serve_import(ctx, &pointer, w, app, &keys, mount);
            }
        }
        if w.kind == WorkloadKind::RayService {
            head_params(ctx, &base, w);
        }
    }
}

/// The files an entrypoint names below `mount`, as ConfigMap keys would name them: words of
/// the command (and the values of `--flag=PATH` words), without quotes, starting `mount/`.
fn mounted_files<'a>(entrypoint: &'a str, mount: &str) -> Vec<&'a str> {
    entrypoint
        .split_whitespace()
        .map(|w| w.rsplit_once('=').map_or(w, |(_, v)| v))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .filter_map(|w| w.strip_prefix(mount)?.strip_prefix('/'))
        .filter(|f| !f.is_empty())
        .collect()
}

fn dangling(
    ctx: &mut Ctx<'_>,
    pointer: &Pointer,
    w: &Workload,
    keys: &BTreeSet<&str>,
    file: &str,
    mount: &str,
) {
    let hint = if keys.is_empty() {
        format!(
            "add the file to the workload's `scripts:` (a path next to the profile); it is mounted at {mount}/<file name>"
        )
    } else {
        format!(
            "the scripts mounted at {mount} are {}; add the file to `scripts:` or name one of them",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    ctx.report(
        &codes::DANGLING_SCRIPT,
        pointer,
        format!(
            "`{mount}/{file}` is not in workload `{}`'s scripts, so nothing provides it and the workload fails at start",
            w.name
        ),
        Some(hint),
    );
}

/// A Serve import is resolved through Python's path: a module packed from `scripts` is found
/// only when the application's runtime environment puts the mount on `PYTHONPATH` (or is its
/// `working_dir`); a path that points at the mount with no scripts finds nothing there.
/// Imports of installed packages are not checked.
fn serve_import(
    ctx: &mut Ctx<'_>,
    pointer: &Pointer,
    w: &Workload,
    app: &ServeApplication,
    keys: &BTreeSet<&str>,
    mount: &str,
) {
    let module = app
        .import_path
        .split_once(':')
        .map_or_else(
            || app.import_path.rsplit_once('.').map_or("", |(m, _)| m),
            |(m, _)| m,
        )
        .split('.')
        .next()
        .unwrap_or_default();
    let env = app.runtime_env.as_ref();
    let on_path = env.is_some_and(|e| {
        e.working_dir.as_deref().map(|d| d.trim_end_matches('/')) == Some(mount)
            || e.env_vars
                .get("PYTHONPATH")
                .is_some_and(|p| p.split(':').any(|d| d.trim_end_matches('/') == mount))
    });
    let file = format!("{module}.py");
    if keys.contains(file.as_str()) && !on_path {
        ctx.report(
            &codes::DANGLING_SCRIPT,
            pointer,
            format!(
                "`{}` imports `{module}` from the scripts mounted at {mount}, but Python does not look there",
                app.import_path
            ),
            Some(format!(
                "add `runtimeEnv: {{envVars: {{PYTHONPATH: {mount}}}}}` to Serve application `{}`",
                app.name
            )),
        );
    } else if on_path && keys.is_empty() && !module.is_empty() {
        dangling(ctx, pointer, w, keys, &file, mount);
    }
}

/// KubeRay starts Ray with `num-cpus` and `num-gpus` from the container limits when
/// rayStartParams omit them (ray-project/kuberay@v1.7.0
/// ray-operator/controllers/ray/common/pod.go, generateRayStartCommand and
/// addWellKnownAcceleratorResources): a GPU head of a RayService then offers all its CPUs to
/// tasks and replicas, next to the Serve controller and proxy. The upstream Azure example says
/// `num-cpus: "4"`, `num-gpus: "1"` on its Serve head.
fn head_params(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let Some(head) = &w.head else { return };
    let Some(gpus) = head.resources.get(GPU_RESOURCE) else {
        return;
    };
    let missing: Vec<&str> = ["num-cpus", "num-gpus"]
        .into_iter()
        .filter(|k| !head.ray_start_params.contains_key(*k))
        .collect();
    if missing.is_empty() {
        return;
    }
    let cpus = head
        .resources
        .get("cpu")
        .map_or_else(|| "all".to_owned(), ToString::to_string);
    ctx.report(
        &codes::HEAD_GPU_PARAMS,
        &ptr!(base; "head", "resources", GPU_RESOURCE),
        format!(
            "the head of RayService `{}` requests {gpus} GPU(s) but its rayStartParams do not set {}: KubeRay starts Ray with the container's limits ({cpus} CPUs, {gpus} GPU(s)), so tasks and replicas crowd the Serve controller",
            w.name,
            missing.join(" and ")
        ),
        Some(
            "say how much Ray may use on the head, e.g. `rayStartParams: {num-cpus: \"4\", num-gpus: \"1\"}` (the upstream example) or `num-cpus: \"0\"` to keep tasks off it"
                .into(),
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::mounted_files;

    #[test]
    fn entrypoint_files_are_the_words_below_the_mount() {
        let m = "/home/ray/scripts";
        assert_eq!(
            mounted_files(
                "python3 /home/ray/scripts/train.py --config=/home/ray/scripts/c.yaml",
                m
            ),
            ["train.py", "c.yaml"]
        );
        assert_eq!(
            mounted_files("python3 \"/home/ray/scripts/x.py\"", m),
            ["x.py"]
        );
        assert!(mounted_files("python3 -c 'import ray'", m).is_empty());
        assert!(mounted_files("python3 /home/ray/scriptsx/a.py", m).is_empty());
        assert_eq!(
            mounted_files("python3 /home/ray/scripts/sub/a.py", m),
            ["sub/a.py"]
        );
    }
}
