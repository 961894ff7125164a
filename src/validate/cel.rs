//! The CRDs' `x-kubernetes-validations` rules, evaluated with the `cel` crate the way the API
//! server evaluates them on create: `self` is the node's value after schema defaulting.
//!
//! Transition rules (those that read `oldSelf`) are about updates and are skipped on purpose.
//! A rule this evaluator cannot run (a parse error, a Kubernetes library function the crate
//! does not have, a result that is not a bool) is reported as not evaluated, by its text:
//! never passed silently.

use super::schema::{NodeId, Rule, Table};
use cel::objects::{Key, Map as CelMap};
use cel::{Context, Env, ExecutionError, Program, Value as Cel};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What became of one rule.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Outcome {
    Pass,
    /// The object breaks the rule; the rule's message (or messageExpression's result).
    Fail(String),
    /// The rule could not be evaluated here; why.
    NotEvaluated(String),
    /// A transition rule (`oldSelf`): nothing to compare with on create.
    Transition,
}

/// A compiled rule: a program, or why it does not compile.
type Compiled = Result<Arc<Program>, String>;

/// Rules compile once per process, shared by every thread (tests compile many bundles at
/// once); the same rule text appears in several CRDs. Compiling them ahead on a second thread
/// was measured and dropped: it compiled rules no bundle reached and doubled the CPU time.
fn programs() -> &'static Mutex<HashMap<String, Compiled>> {
    static P: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    P.get_or_init(Mutex::default)
}

/// The Kubernetes CEL environment, as far as the crate has it: the standard library plus
/// the strings extension.
fn env() -> &'static Arc<Env> {
    static E: OnceLock<Arc<Env>> = OnceLock::new();
    E.get_or_init(|| {
        let mut env = Env::stdlib();
        // Declaring the extension into a fresh standard environment cannot clash.
        let _ = env.add_extension(cel::extensions::strings);
        Arc::new(env)
    })
}

fn compile(rule: &str) -> Compiled {
    if let Some(c) = cached(rule) {
        return c;
    }
    // Compiled outside the lock: two threads may compile one rule at once (a waste, never a
    // different result), and neither waits for the other's slow parse.
    let compiled = env()
        .compile(rule)
        .map(Arc::new)
        .map_err(|e| format!("does not parse: {e}"));
    programs()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(rule.to_owned())
        .or_insert(compiled)
        .clone()
}

fn cached(rule: &str) -> Option<Compiled> {
    programs()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(rule)
        .cloned()
}

/// Evaluate `rule` with `self` = `value` (defaulted by the schema at `node`).
pub(super) fn evaluate(table: &Table, rule: &Rule, node: NodeId, value: &Value) -> Outcome {
    let program = match compile(&rule.rule) {
        Ok(p) => p,
        Err(e) => return Outcome::NotEvaluated(e),
    };
    if program.references().has_variable("oldSelf") {
        return Outcome::Transition;
    }
    let this = to_cel(table, Some(node), value);
    let result = {
        let mut ctx = Context::with_env(env().clone());
        // CEL values share their contents (Arc): the clone is cheap.
        ctx.add_variable_from_value("self", this.clone());
        program.execute(&ctx)
    };
    match result {
        Ok(Cel::Bool(true)) => Outcome::Pass,
        Ok(Cel::Bool(false)) => Outcome::Fail(message(rule, this)),
        Ok(other) => Outcome::NotEvaluated(format!("returned {other:?}, not a bool")),
        Err(e) if is_data_error(&e) => {
            Outcome::Fail(format!("{} (evaluation error: {e})", message(rule, this)))
        }
        Err(e) => Outcome::NotEvaluated(e.to_string()),
    }
}

/// Errors that come from the data, as the API server would hit them too (it rejects the
/// object then); anything else means this evaluator lacks something.
fn is_data_error(e: &ExecutionError) -> bool {
    matches!(
        e,
        ExecutionError::NoSuchKey(_)
            | ExecutionError::IndexOutOfBounds(_)
            | ExecutionError::DivisionByZero(_)
            | ExecutionError::RemainderByZero(_)
            | ExecutionError::Overflow(..)
    )
}

/// The rule's message: `messageExpression` when it evaluates to a string, else `message`,
/// else the API server's default wording.
fn message(rule: &Rule, this: Cel) -> String {
    if let Some(expr) = &rule.message_expression
        && let Ok(p) = compile(expr)
    {
        let out = {
            let mut ctx = Context::with_env(env().clone());
            ctx.add_variable_from_value("self", this);
            p.execute(&ctx)
        };
        if let Ok(Cel::String(s)) = out {
            return s.to_string();
        }
    }
    rule.message
        .clone()
        .unwrap_or_else(|| format!("failed rule: {}", rule.rule))
}

/// JSON → CEL, filling in schema defaults for absent fields (the API server defaults before
/// it validates, and the CRDs' rules are written for defaulted objects).
fn to_cel(table: &Table, node: Option<NodeId>, value: &Value) -> Cel {
    let schema = node.map(|n| table.node(n));
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map(Cel::Int)
            .or_else(|| n.as_u64().map(Cel::UInt))
            .unwrap_or_else(|| Cel::Float(n.as_f64().unwrap_or_default())),
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item = schema.and_then(|s| s.items);
            Cel::List(Arc::new(
                items.iter().map(|v| to_cel(table, item, v)).collect(),
            ))
        }
        Value::Object(map) => {
            let mut out: HashMap<Key, Cel> = HashMap::with_capacity(map.len());
            for (k, v) in map {
                let child = schema.and_then(|s| {
                    s.properties
                        .as_ref()
                        .and_then(|p| p.get(k).copied())
                        .or(s.values)
                });
                out.insert(Key::String(Arc::new(k.clone())), to_cel(table, child, v));
            }
            if let Some(props) = schema.and_then(|s| s.properties.as_ref()) {
                for (name, child) in props {
                    if map.contains_key(name) {
                        continue;
                    }
                    if let Some(d) = &table.node(*child).default {
                        out.insert(
                            Key::String(Arc::new(name.clone())),
                            to_cel(table, Some(*child), d),
                        );
                    }
                }
            }
            Cel::Map(CelMap { map: Arc::new(out) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::schema::table;
    use serde_json::json;

    fn rule(text: &str) -> Rule {
        Rule {
            rule: text.to_owned(),
            message: Some("no".to_owned()),
            message_expression: None,
            field_path: None,
        }
    }

    /// A node with no schema: plain conversion, no defaults.
    fn eval(text: &str, value: &Value) -> Outcome {
        let t = table().unwrap();
        let any = t.ids().find(|i| {
            let n = t.node(*i);
            n.ty.is_none() && n.properties.is_none() && !n.int_or_string
        });
        evaluate(t, &rule(text), any.unwrap(), value)
    }

    #[test]
    fn evaluates_what_the_crd_rules_use() {
        let v = json!({"a": [1, 2], "m": {"k": "v"}, "s": "Exists", "n": 3});
        for ok in [
            "has(self.a) && !has(self.b)",
            "size(self.a) == 2 && self.m.size() == 1",
            "self.a.all(x, x > 0) && self.a.exists(x, x == 2)",
            "self.s in ['Equal', 'Exists']",
            "has(self.b) ? false : true",
            "self.s.startsWith('Ex') && self.s.matches('^E.*s$') && self.s.contains('xis')",
            "self.s.lowerAscii() == 'exists'",
        ] {
            assert_eq!(eval(ok, &v), Outcome::Pass, "{ok}");
        }
        assert_eq!(eval("self.n > 5", &v), Outcome::Fail("no".into()));
        assert_eq!(eval("self == oldSelf", &v), Outcome::Transition);
        assert!(matches!(eval("self.a +", &v), Outcome::NotEvaluated(_)));
        assert!(matches!(
            eval("isQuantity(self.s)", &v),
            Outcome::NotEvaluated(_)
        ));
        assert!(matches!(eval("self.n", &v), Outcome::NotEvaluated(_)));
        // A missing field is the object's fault, as in the API server.
        assert!(matches!(eval("self.zzz == 1", &v), Outcome::Fail(_)));
    }

    #[test]
    fn every_embedded_rule_compiles() {
        let t = table().unwrap();
        let mut seen = 0;
        for id in t.ids() {
            for r in &t.node(id).rules {
                assert!(compile(&r.rule).is_ok(), "{}", r.rule);
                seen += 1;
            }
        }
        assert!(seen >= 12, "{seen}");
    }
}
