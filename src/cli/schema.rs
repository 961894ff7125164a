//! `raykueue schema`: the profile JSON Schema, generated from the Rust types.

use super::write_stdout;
use clap::Args;

#[derive(Args, Debug)]
pub struct SchemaCommand {}

pub fn run() -> u8 {
    write_stdout(&crate::schema_check::schema_text())
}
