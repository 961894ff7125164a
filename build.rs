//! Embeds the templates: `templates.rs` in `OUT_DIR` lists every file under `templates/` by
//! its `/`-separated relative name, its text included at compile time. `render` hands them to
//! minijinja one by one, when a run first asks for them, instead of compiling them all at start.

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
