//! `sse-replay`: the binary. Turns arguments into one action; all logic lives in the library.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    #[cfg(feature = "gui")]
    sse_replay::app::mark_process_start();
    let cli = sse_replay::cli::Cli::parse();
    sse_replay::cli::run(cli, open_app)
}

#[cfg(feature = "gui")]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    sse_replay::app::run(file)
}

#[cfg(not(feature = "gui"))]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    // Without the GUI, show the check report of the file (or the bundled seed example).
    let file = file.unwrap_or_else(|| std::path::PathBuf::from("recordings/seed-example.ron"));
    let cli = sse_replay::cli::Cli::parse_from(["sse-replay", "check", &file.to_string_lossy()]);
    sse_replay::cli::run(cli, |_| ExitCode::SUCCESS)
}
