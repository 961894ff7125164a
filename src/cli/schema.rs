//! `raykueue schema`: the profile JSON Schema, generated from the Rust types.

use super::write_stdout;
use clap::Args;

#[derive(Args, Debug)]
pub(super) struct SchemaCommand {}

pub(super) fn run() -> u8 {
    write_stdout(&crate::input::schema::schema_text())
}
