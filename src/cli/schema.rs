//! `raykueue schema`: the JSON Schema of a profile, or with `--fleet` of a fleet file, generated
//! from the Rust types (the files `profiles/profile.schema.json` and
//! `profiles/fleet.schema.json` are these, for editors).

use super::write_stdout;
use clap::Args;

#[derive(Args, Debug)]
pub(super) struct SchemaCommand {
    /// The schema of a fleet file (`kind: Fleet`) instead of a profile's.
    #[arg(long)]
    fleet: bool,
}

impl SchemaCommand {
    pub(super) fn run(self) -> u8 {
        write_stdout(&if self.fleet {
            super::reference::fleet_schema()
        } else {
            crate::input::schema::schema_text()
        })
    }
}
