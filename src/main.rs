//! `sse-replay`: the binary. Turns arguments into one action and an exit code; the logic lives in
//! the libraries (`sse-replay-core`, `-net`, `-app`). This crate is the only place that exits the
//! process or listens for OS signals.

mod cli;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    #[cfg(feature = "gui")]
    sse_replay_app::mark_process_start();
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = cli::preflight(&raw) {
        return code;
    }
    let args = cli::Cli::parse_from(raw);
    cli::run(args, open_app)
}

#[cfg(feature = "gui")]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    if let Some(why) = no_display() {
        sse_replay_core::log_line!(
            "sse-replay: cannot start the app: {why}; without it: sse-replay check FILE"
        );
        return ExitCode::from(cli::EXIT_INPUT);
    }
    match sse_replay_app::run(file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            sse_replay_core::log_line!("sse-replay: cannot start the app: {e}");
            ExitCode::from(cli::EXIT_INPUT)
        }
    }
}

/// Why no window can open here, said plainly (winit's own error names a source file): on Linux
/// and the BSDs, neither an X display nor a Wayland socket is set.
#[cfg(feature = "gui")]
fn no_display() -> Option<&'static str> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    let any = set("DISPLAY") || set("WAYLAND_DISPLAY") || set("WAYLAND_SOCKET");
    (!any).then_some("no display (DISPLAY and WAYLAND_DISPLAY are not set)")
}

#[cfg(not(feature = "gui"))]
fn open_app(file: Option<std::path::PathBuf>) -> ExitCode {
    // Without the GUI, show the check report of the file (or the bundled seed example).
    let file = file.unwrap_or_else(|| std::path::PathBuf::from("recordings/seed-example.ron"));
    let args = cli::Cli::parse_from(["sse-replay", "check", &file.to_string_lossy()]);
    cli::run(args, |_| ExitCode::SUCCESS)
}
