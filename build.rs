//! Embeds the templates: `templates.rs` in `OUT_DIR` lists every file under `templates/` by
//! its `/`-separated relative name, its text included at compile time. `render` hands them to
//! minijinja one by one, when a run first asks for them, instead of compiling them all at start.
//!
//! Outlines the schema table: `schema_spans.rs` holds where `assets/schemas.json`'s head ends
//! and where each of its nodes (one a line, as the importer writes them) begins and ends, so
//! that a run finds a node without scanning the table's lines (`output::validate::schema`,
//! whose tests hold these spans to a reading of the text).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=templates");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut code = String::from("&[\n");
    for path in &files {
        let name = path
            .strip_prefix(&root)
            .expect("under templates/")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        writeln!(code, "    ({name:?}, include_str!({:?})),", path.display()).expect("write");
    }
    code.push(']');
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("templates.rs");
    std::fs::write(out, code).expect("write templates.rs");
    schema_spans();
}

/// `(head_end, &[(start, end)])` of the schema table's nodes, as Rust source.
fn schema_spans() {
    const NODES: &str = "\"nodes\":[\n";
    println!("cargo:rerun-if-changed=assets/schemas.json");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/schemas.json");
    let text = std::fs::read_to_string(&path).expect("assets/schemas.json is readable");
    let head_end = text.find(NODES).expect("the schema table has a node list");
    let body_start = head_end + NODES.len();
    let body_end = text
        .len()
        .checked_sub("]}\n".len())
        .filter(|&e| text[e..] == *"]}\n" && e >= body_start)
        .expect("the node list ends the schema table");
    let mut code = format!("({head_end}, &[\n");
    let mut start = body_start;
    while start < body_end {
        let len = text[start..body_end]
            .find('\n')
            .expect("every node ends its line");
        let line_end = start + len;
        let last = line_end + 1 == body_end;
        let end = if last {
            line_end
        } else {
            assert!(
                text[..line_end].ends_with(','),
                "node at byte {start} is not one line"
            );
            line_end - 1
        };
        writeln!(code, "    ({start}, {end}),").expect("write");
        start = line_end + 1;
    }
    code.push_str("])");
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("schema_spans.rs");
    std::fs::write(out, code).expect("write schema_spans.rs");
}

/// Every file below `dir`, hidden ones (editor droppings) left out.
fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("templates/ is readable") {
        let path = entry.expect("directory entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
