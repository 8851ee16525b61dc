//! The `isopredict` command line: parses arguments and calls the library (see `cli`).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
