//! The `isopredict` command line: parses arguments and calls the library.

fn main() {
    eprintln!(
        "isopredict {}: commands arrive with the formats module",
        env!("CARGO_PKG_VERSION")
    );
    std::process::exit(2);
}
