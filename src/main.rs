//! `sse-replay`: the binary. Turns arguments into one action and an exit code; the logic lives in
//! the libraries (`sse-replay-core`, `-net`, `-app`). This crate is the only place that exits the
//! process or listens for OS signals.

mod cli;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    #[cfg(feature = "gui")]
    sse_replay_app::mark_process_start();
    let args = cli::Cli::parse();
    cli::run(args, open_app)
}

#[cfg(feature = "gui")]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    match sse_replay_app::run(file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            sse_replay_core::log_line!("sse-replay: cannot start the app: {e}");
            ExitCode::from(cli::EXIT_INPUT)
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    // Without the GUI, show the check report of the file (or the bundled seed example).
    let file = file.unwrap_or_else(|| std::path::PathBuf::from("recordings/seed-example.ron"));
    let args = cli::Cli::parse_from(["sse-replay", "check", &file.to_string_lossy()]);
    cli::run(args, |_| ExitCode::SUCCESS)
}
