//! Stage 8 (`lib.rs`), the output: text written from the model (`render` for scripts and Markdown; the
//! YAML writer is `base::yaml`), the bundle's files assembled (`bundle`), every object checked
//! against its upstream schema (`validate`), and the bundle written or compared (`emit`).

pub(crate) mod bundle;
pub(crate) mod emit;
pub(crate) mod render;
pub(crate) mod validate;
