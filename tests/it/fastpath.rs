//! The schema check's fast path: a profile that deserializes into the typed `Profile` is
//! accepted without compiling the JSON-Schema validator (`schema_check::check`). That is only
//! sound if the typed deserializer refuses everything the schema refuses, which these tests
//! check by mutating valid profiles at every node: whenever the fast path accepts a mutant, the
//! schema must accept it too; and every limit the schema states (pattern, length, item count,
//! range) must be broken by some mutant, which the fast path then refuses.

use crate::common::{repo, shipped_text};
use raykueue::api::input::schema::{fast, schema_violations};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The keywords that state a limit serde does not know by itself.
const LIMITS: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "maxProperties",
    "minimum",
    "maximum",
];

fn value_of(name: &str, text: &str) -> Value {
    let source = raykueue::api::input::load::decode(name, text.as_bytes()).unwrap();
    raykueue::api::input::load::flatten(raykueue::api::input::load::parse_tree(&source).unwrap())
        .value
}

/// Valid profiles that between them set every field that has a limit: the shipped ones and
/// one fixture with the fields they leave out.
fn sources() -> Vec<(String, Value)> {
    // A shipped overlay (`extends:`) is no profile by itself. The limited fields it sets (the
    // operators' chart versions) are set by the complete shipped profiles too.
    let mut out: Vec<(String, Value)> = raykueue::api::input::resolve::SHIPPED
        .iter()
        .filter(|(n, _)| !shipped_text(n).contains("\nextends: "))
        .map(|(n, _)| ((*n).to_owned(), value_of(n, shipped_text(n))))
        .collect();
    // Every profile of the folder: `every-limit.yaml`, and one per provider section the
    // shipped profiles leave fields of out (`every-limit-gke.yaml`).
    let mut extra: Vec<_> = std::fs::read_dir(repo().join("tests/fixtures/fastpath"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    extra.sort();
    for path in extra {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((
            file.trim_end_matches(".yaml").to_owned(),
            value_of(&file, &text),
        ));
    }
    for (name, v) in &out {
        assert!(fast(v).is_some(), "{name} is a valid profile");
        assert_eq!(schema_violations(v), Vec::<String>::new(), "{name}");
    }
    out
}

/// Replacements tried at a node: values around every limit the schema uses.
fn mutants(v: &Value) -> Vec<Value> {
    let mut out = vec![
        json!(""),
        json!("x"),
        json!("Bad Name!"),
        json!("a;b$(c)"),
        json!("a\nb"),
        json!("-a"),
        json!("1.2"),
        json!("x".repeat(13)),
        json!("a".repeat(64)),
        json!("a".repeat(121)),
        json!("a".repeat(254)),
        json!("a".repeat(2049)),
        json!(-1),
        json!(0),
        json!(1001),
        json!(10001),
        json!(65),
        json!(65536),
        json!(2_147_483_648_i64),
        json!(-2_147_483_649_i64),
        json!(-0.5),
        json!(true),
        json!([]),
        json!({}),
    ];
    match v {
        Value::Array(items) if !items.is_empty() => {
            for n in [9, 17, 65, 101, 1001] {
                out.push(Value::Array(vec![items[0].clone(); n]));
            }
        }
        Value::Object(map) => {
            for key in map.keys() {
                let mut fewer = map.clone();
                fewer.remove(key);
                out.push(Value::Object(fewer));
            }
            let mut more = map.clone();
            for i in 0..9 {
                more.insert(format!("k{i}.example.com/x"), json!("v"));
            }
            out.push(Value::Object(more));
        }
        _ => {}
    }
    out
}

fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                pointers(x, &format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, x) in map {
                let k = k.replace('~', "~0").replace('/', "~1");
                pointers(x, &format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// Every limit keyword of the generated schema, by its location.
fn limits_in_schema(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                // A zero lower bound on a length cannot be broken.
                let zero = matches!(k.as_str(), "minLength" | "minItems") && x == &json!(0);
                if LIMITS.contains(&k.as_str()) && !zero {
                    // jsonschema reports a failed `anyOf` (Quantity: a string or a number)
                    // at the `anyOf`, not at the limit inside it.
                    out.insert(match here.find("/anyOf/") {
                        Some(i) => here[..i + "/anyOf".len()].to_owned(),
                        None => here.clone(),
                    });
                }
                limits_in_schema(x, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                limits_in_schema(x, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_fast_path_never_accepts_what_the_schema_refuses_and_every_limit_is_exercised() {
    let mut broken = BTreeSet::new();
    let mut tried = 0usize;
    for (name, original) in sources() {
        let mut at = Vec::new();
        pointers(&original, "", &mut at);
        for pointer in at.iter().filter(|p| !p.is_empty()) {
            let node = original.pointer(pointer).unwrap().clone();
            for m in mutants(&node) {
                let mut v = original.clone();
                *v.pointer_mut(pointer).unwrap() = m.clone();
                tried += 1;
                let violations = schema_violations(&v);
                let accepted = fast(&v).is_some();
                assert!(
                    !accepted || violations.is_empty(),
                    "{name}: the fast path accepts {pointer} = {m}, the schema refuses it: {violations:?}"
                );
                broken.extend(violations.into_iter().filter(|s| {
                    s.ends_with("/anyOf")
                        || s.ends_with("/oneOf")
                        || LIMITS.iter().any(|k| s.ends_with(&format!("/{k}")))
                }));
            }
        }
    }
    let mut all = BTreeSet::new();
    limits_in_schema(raykueue::api::input::schema::schema(), "", &mut all);
    let schema = raykueue::api::input::schema::schema();
    let missed: Vec<&String> = all
        .difference(&broken)
        .filter(|limit| !broken_through_one_of(schema, limit, &broken))
        .collect();
    assert!(
        missed.is_empty(),
        "{tried} mutants broke {} of the schema's {} limits; never broken (add the field to \
         tests/fixtures/fastpath/every-limit.yaml): {missed:#?}",
        broken.len(),
        all.len()
    );
}

/// jsonschema reports a value that fails every branch of a `oneOf` (a GKE pool's capacity: a
/// word or a reservation) at the `oneOf`, not at the limit of the definition a branch refers
/// to: such a limit (`/$defs/X/…`) is broken when a broken `oneOf` reaches `X` through `$ref`s.
fn broken_through_one_of(schema: &Value, limit: &str, broken: &BTreeSet<String>) -> bool {
    let Some(def) = limit
        .strip_prefix("/$defs/")
        .and_then(|rest| rest.split('/').next())
    else {
        return false;
    };
    broken
        .iter()
        .filter(|b| b.ends_with("/oneOf"))
        .filter_map(|b| schema.pointer(b))
        .any(|one_of| reaches(schema, one_of, def, &mut BTreeSet::new()))
}

/// Whether `node` refers to `#/$defs/<def>`, itself or through the definitions it refers to.
fn reaches(schema: &Value, node: &Value, def: &str, seen: &mut BTreeSet<String>) -> bool {
    match node {
        Value::Object(map) => map.iter().any(|(k, v)| {
            if let (true, Some(target)) = (k == "$ref", v.as_str()) {
                let name = target.trim_start_matches("#/$defs/").to_owned();
                name == def
                    || (seen.insert(name.clone())
                        && schema
                            .pointer(&format!("/$defs/{name}"))
                            .is_some_and(|d| reaches(schema, d, def, seen)))
            } else {
                reaches(schema, v, def, seen)
            }
        }),
        Value::Array(items) => items.iter().any(|x| reaches(schema, x, def, seen)),
        _ => false,
    }
}

/// The corpus of profiles the tests use: on each, the fast path and the schema agree.
#[test]
fn the_fast_path_and_the_schema_agree_on_every_fixture_profile() {
    let mut checked = 0;
    for entry in walkdir(&repo().join("tests/fixtures")) {
        let Ok(text) = std::fs::read_to_string(&entry) else {
            continue;
        };
        if !text.contains("kind: Profile") || text.contains("extends:") {
            continue;
        }
        let Ok(source) = raykueue::api::input::load::decode("profile.yaml", text.as_bytes()) else {
            continue;
        };
        let Ok(tree) = raykueue::api::input::load::parse_tree(&source) else {
            continue;
        };
        let v = raykueue::api::input::load::flatten(tree).value;
        let accepted_fast = fast(&v).is_some();
        let schema = schema_violations(&v).is_empty();
        assert!(
            !accepted_fast || schema,
            "{}: fast path accepts, schema refuses",
            entry.display()
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} fixture profiles found");
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
    out.sort();
    out
}
