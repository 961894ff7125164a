//! Stage 2 (`lib.rs`), the input: find the profile a user named (`resolve`), read it with the
//! position of every node (`load`), merge `extends:` overlays (`overlay`), check it against the
//! profile schema and type it (`schema`), report deprecated fields (`deprecated`), and read the
//! local script files its workloads name (`scripts`).

pub(crate) mod deprecated;
pub(crate) mod fleet;
pub(crate) mod kind;
pub(crate) mod load;
pub(crate) mod overlay;
pub(crate) mod resolve;
pub(crate) mod schema;
pub(crate) mod scripts;
pub(crate) mod state;
