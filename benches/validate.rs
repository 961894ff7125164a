//! What output validation costs (`cargo bench --bench validate`): `compile` of the team
//! profile with and without it, the validation of its bundle alone, and one RayJob with pod
//! templates (the heaviest kind). Warm numbers: the schema table and CEL programs are loaded
//! once per process; the whole-process cost (cold start included) is measured with hyperfine,
//! see `docs/performance.md`, "Output validation".

#![allow(clippy::unwrap_used)]

// The binary's allocator (see `Cargo.toml`): the bench measures what `raykueue` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let resolved = raykueue::api::input::resolve::resolve("team").unwrap();
    c.bench_function("compile team (with validation)", |b| {
        b.iter(|| raykueue::api::compile::compile(black_box(&resolved), false).unwrap());
    });
    c.bench_function("compile team (without validation)", |b| {
        b.iter(|| raykueue::api::compile::render(black_box(&resolved)).unwrap());
    });
    let bundle = raykueue::api::compile::render(&resolved).unwrap();
    c.bench_function("validate team bundle", |b| {
        b.iter(|| assert!(raykueue::api::output::validate::bundle(black_box(&bundle)).is_empty()));
    });
    let text = include_str!("../tests/fixtures/valid-objects/rayjob.yaml");
    let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).unwrap();
    c.bench_function("validate RayJob with pod templates", |b| {
        b.iter(|| raykueue::api::output::validate::object(black_box(&docs[0])));
    });
}

criterion_group! {
    name = benches;
    // Two shared cores: short, steady runs rather than long ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
