/// See `Cargo.toml`: the compile allocates many small, short-lived nodes.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    raykueue::api::cli::main()
}
