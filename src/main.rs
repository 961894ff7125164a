fn main() -> std::process::ExitCode {
    raykueue::cli::main()
}
