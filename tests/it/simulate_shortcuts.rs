//! The simulator takes shortcuts (`run`): heads that surely cannot be admitted are turned
//! away without assigning flavors (`flavors::surely_turned_away`), preemption searches that
//! surely find nothing are skipped (`fair_sharing::surely_none`), the flavor assigner's
//! preemption oracle keeps its answers across cycles, and under fair sharing a cycle's
//! tournament is kept between picks and decides only while the order of the entries can
//! matter, without the heads that can neither move usage nor shape the order. The reference
//! run (`simulate::run_reference`) takes none of them. Here the two must give the same events
//! on every scenario fixture and on random queue set-ups they would not otherwise meet:
//! random ClusterQueues in one cohort (or, with fair sharing, in a random Cohort tree with
//! random weights and strategies) with every preemption policy, borrowing and lending limits,
//! flavor fungibility, one or two flavors and an optional GPU group, and random workloads with
//! priorities and one or two pod sets, enough to queue, borrow and preempt. In release builds
//! as in debug ones (debug builds also check each use of a shortcut where it is taken).

use serde_json::{Value, json};

use std::fmt::Write as _;

/// The first line where two renderings differ, both ways.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map_or_else(
            || "one is a prefix of the other".to_owned(),
            |(i, (x, y))| format!("line {}: {x}\n  reference: {y}", i + 1),
        )
}

/// A fixed linear congruential sequence: the same cases on every machine.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[usize::try_from(self.below(from.len() as u64)).unwrap_or(0)]
    }
}

fn cluster_queue(r: &mut Lcg, i: usize) -> Value {
    let mut cq = json!({"name": format!("cq{i}"), "cohortName": "all"});
    if r.chance(30) {
        cq["queueingStrategy"] = r.pick(&["StrictFIFO", "BestEffortFIFO"]).into();
    }
    let mut preemption = json!({});
    if r.chance(80) {
        preemption["withinClusterQueue"] = r
            .pick(&["Never", "LowerPriority", "LowerOrNewerEqualPriority"])
            .into();
    }
    if r.chance(80) {
        preemption["reclaimWithinCohort"] = r.pick(&["Never", "LowerPriority", "Any"]).into();
    }
    let reclaims = preemption
        .get("reclaimWithinCohort")
        .is_some_and(|v| v != "Never");
    if reclaims && r.chance(30) {
        let mut b = json!({"policy": r.pick(&["Never", "LowerPriority"])});
        if r.chance(50) {
            b["maxPriorityThreshold"] = json!(r.below(3) as i64 - 1);
        }
        preemption["borrowWithinCohort"] = b;
    }
    cq["preemption"] = preemption;
    if r.chance(30) {
        let try_next = r.chance(50);
        let mut ff = json!({
            "whenCanBorrow": if try_next { "TryNextFlavor" } else { r.pick(&["MayStopSearch", "TryNextFlavor"]) },
            "whenCanPreempt": if try_next { "TryNextFlavor" } else { "MayStopSearch" },
        });
        if try_next && r.chance(50) {
            ff["preference"] = r
                .pick(&["BorrowingOverPreemption", "PreemptionOverBorrowing"])
                .into();
        }
        cq["flavorFungibility"] = ff;
    }
    let flavors: &[&str] = match r.below(3) {
        0 => &["f1"],
        1 => &["f2"],
        _ => &["f1", "f2"],
    };
    let mut group = json!({"coveredResources": ["cpu", "memory"], "flavors": []});
    for f in flavors {
        let mut resources = Vec::new();
        for (name, unit) in [("cpu", ""), ("memory", "Gi")] {
            let nominal = r.below(9);
            let mut q = json!({"name": name, "nominalQuota": format!("{nominal}{unit}")});
            if r.chance(40) {
                q["borrowingLimit"] = format!("{}{unit}", r.below(7)).into();
            }
            if r.chance(30) {
                q["lendingLimit"] = format!("{}{unit}", r.below(nominal.min(4) + 1)).into();
            }
            resources.push(q);
        }
        if let Some(list) = group["flavors"].as_array_mut() {
            list.push(json!({"name": f, "resources": resources}));
        }
    }
    let mut groups = vec![group];
    if r.chance(50) {
        let mut gpu = json!({"name": "nvidia.com/gpu", "nominalQuota": r.below(5).to_string()});
        if r.chance(50) {
            gpu["borrowingLimit"] = r.below(5).to_string().into();
        }
        groups.push(json!({"coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "gpu", "resources": [gpu]}]}));
    }
    cq["resourceGroups"] = groups.into();
    cq
}

/// With fair sharing: a root Cohort `org` (sometimes with a pool of its own) and up to three
/// Cohorts below it, each with a random weight (0 included: such a node that borrows weighs
/// more than any other), one of the strategy lists Kueue accepts
/// (kubernetes-sigs/kueue@v0.19.2 `pkg/config/validation.go` `validStrategySets`), and the
/// queues spread over the tree with random weights.
fn fair_sharing_setup(r: &mut Lcg, queues: &mut [Value]) -> String {
    let weights = ["0", "0.5", "1", "1", "2", "3"];
    let strategies = match r.below(3) {
        0 => "[LessThanOrEqualToFinalShare]",
        1 => "[LessThanInitialShare]",
        _ => "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
    };
    let mut cohorts = String::from("  cohorts:\n  - name: org\n");
    if r.chance(40) {
        let _ = writeln!(
            cohorts,
            "    resourceGroups: [{{coveredResources: [cpu, memory], flavors: [{{name: f1, \
             resources: [{{name: cpu, nominalQuota: \"{}\"}}, {{name: memory, nominalQuota: {}Gi}}]}}]}}]",
            r.below(6),
            r.below(6)
        );
    }
    let groups = r.below(4);
    for g in 0..groups {
        let _ = writeln!(
            cohorts,
            "  - {{name: g{g}, parentName: org, fairSharingWeight: \"{}\"}}",
            r.pick(&weights)
        );
    }
    for q in queues.iter_mut() {
        let at = r.below(groups + 1);
        q["cohortName"] = if at == groups {
            "org".into()
        } else {
            format!("g{at}").into()
        };
        if r.chance(80) {
            q["fairSharingWeight"] = r.pick(&weights).into();
        }
        // `borrowWithinCohort` plays no part under fair sharing.
        if let Some(p) = q["preemption"].as_object_mut() {
            p.remove("borrowWithinCohort");
        }
    }
    format!(
        "operators:\n  kueue:\n    version: 0.19.2\n    frameworks: [batch/job]\n    configuration:\n      fairSharing: \
         {{preemptionStrategies: {strategies}}}\n{cohorts}"
    )
}

fn case(seed: u64, fair: bool) -> (String, String) {
    let mut r = Lcg(seed);
    let mut queues: Vec<Value> = (0..2 + r.below(if fair { 7 } else { 4 }))
        .map(|i| cluster_queue(&mut r, usize::try_from(i).unwrap_or(0)))
        .collect();
    let fair_sharing = if fair {
        fair_sharing_setup(&mut r, &mut queues)
    } else {
        String::new()
    };
    let (operators, cohorts) = fair_sharing
        .split_once("  cohorts:")
        .map_or((String::new(), String::new()), |(o, c)| {
            (o.to_owned(), format!("  cohorts:{c}"))
        });
    let mut profile = format!(
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: shortcut-{seed}\nnamespace: ray\n\
         {operators}flavors: [{{name: f1}}, {{name: f2}}, {{name: gpu}}]\nqueues:\n  mode: team\n\
         {cohorts}  clusterQueues:\n"
    );
    for q in &queues {
        let _ = writeln!(profile, "  - {q}");
    }
    profile.push_str("  localQueues:\n");
    for q in &queues {
        let _ = writeln!(profile, "  - {{name: {0}, clusterQueue: {0}}}", q["name"]);
    }
    let mut scenario = format!(
        "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: shortcut-{seed}\nworkloads:\n"
    );
    for w in 0..60 {
        let q = &queues[usize::try_from(r.below(queues.len() as u64)).unwrap_or(0)];
        let gpu_group = q["resourceGroups"].as_array().is_some_and(|g| g.len() > 1);
        let mut wl = json!({"name": format!("w{w:03}"), "queue": q["name"],
            "submitAt": r.below(30), "runFor": 1 + r.below(40)});
        if r.chance(60) {
            wl["priority"] = json!(r.below(4) as i64 - 1);
        }
        let pod_sets: Vec<Value> = (0..=r.below(2))
            .map(|p| {
                let mut req = json!({"cpu": (1 + r.below(4)).to_string(),
                    "memory": format!("{}Gi", 1 + r.below(4))});
                if gpu_group && r.chance(60) {
                    req["nvidia.com/gpu"] = (1 + r.below(2)).to_string().into();
                }
                json!({"name": format!("p{p}"), "count": 1 + r.below(2), "requests": req})
            })
            .collect();
        wl["podSets"] = pod_sets.into();
        let _ = writeln!(scenario, "  - {wl}");
    }
    (profile, scenario)
}

#[test]
fn the_shortcuts_change_no_event_on_random_queues() {
    run_cases(false);
}

#[test]
fn the_shortcuts_change_no_event_on_random_fair_sharing_trees() {
    run_cases(true);
}

/// `run` and `run_reference` on one world: the same events, or the first difference.
fn same_as_reference(
    world: &raykueue::api::simulate::world::World,
    until: Option<u64>,
) -> Result<String, String> {
    let outcome = raykueue::api::simulate::run(world, until);
    let json = raykueue::api::simulate::events::render_json(world, &outcome.events);
    let reference = raykueue::api::simulate::run_reference(world, until);
    let reference = raykueue::api::simulate::events::render_json(world, &reference.events);
    if json == reference {
        Ok(json)
    } else {
        Err(first_difference(&json, &reference))
    }
}

#[test]
fn the_shortcuts_change_no_event_on_any_scenario_fixture() {
    let root = crate::common::repo().join("tests/fixtures/simulate");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("scenario.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() > 50, "only {} scenario fixtures", dirs.len());
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let profile = if dir.join("profile.yaml").is_file() {
            dir.join("profile.yaml").display().to_string()
        } else {
            std::fs::read_to_string(dir.join("profile-name"))
                .unwrap()
                .trim()
                .to_owned()
        };
        let args = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        let words: Vec<&str> = args.split_whitespace().collect();
        let until = words
            .iter()
            .position(|w| *w == "--until")
            .and_then(|i| words.get(i + 1)?.parse().ok());
        let resolved = raykueue::api::input::resolve::resolve(&profile)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let (typed, diagnostics) = raykueue::api::compile::check_profile(&resolved);
        let Some((_, profile)) = typed else {
            panic!("{name}: the profile does not check: {diagnostics:?}");
        };
        let (_, scenario) = raykueue::api::simulate::scenario::read(
            &dir.join("scenario.yaml").display().to_string(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let world = raykueue::api::simulate::world::build(&profile, &scenario);
        if let Err(d) = same_as_reference(&world, until) {
            panic!("{name}: the shortcuts changed the events\n{d}");
        }
    }
}

/// Run the 100 cases (the events must be the reference run's), and check that they exercise
/// what the shortcuts decide on: preemption, and workloads that waited past the last
/// submission for quota to be released.
fn run_cases(fair: bool) {
    let mut preempted = 0;
    let mut backlog = 0;
    for seed in 0..100 {
        let (profile_text, scenario_text) = case(seed, fair);
        let source = raykueue::api::input::load::decode("random.yaml", profile_text.as_bytes())
            .unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        let (typed, diagnostics) =
            raykueue::api::compile::check_profile(&raykueue::api::input::resolve::Resolved {
                source,
                base_dir: None,
            });
        let Some((_, profile)) = typed else {
            panic!(
                "seed {seed}: the generator made an invalid profile: {diagnostics:?}\n{profile_text}"
            );
        };
        assert_eq!(profile.fair_sharing().is_some(), fair, "seed {seed}");
        let source = raykueue::api::input::load::decode("scenario.yaml", scenario_text.as_bytes())
            .unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        let (loaded, scenario) = raykueue::api::simulate::scenario::parse(&source)
            .unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        let problems =
            raykueue::api::simulate::scenario::against_profile(&profile, &loaded, &scenario);
        assert!(problems.is_empty(), "seed {seed}: {problems:?}");
        let world = raykueue::api::simulate::world::build(&profile, &scenario);
        let json = same_as_reference(&world, None)
            .unwrap_or_else(|d| panic!("seed {seed}: the shortcuts changed the events\n{d}"));
        preempted += json.matches("\"Preempted\"").count();
        backlog += usize::from(json.lines().any(|l| {
            l.contains("\"Admitted\"")
                && serde_json::from_str::<Value>(l)
                    .is_ok_and(|v| v["time"].as_u64().unwrap_or(0) > 40)
        }));
    }
    assert!(preempted > 500, "only {preempted} preemptions in 100 cases");
    assert!(
        backlog > 60,
        "only {backlog} cases admitted anything after t=40"
    );
}
