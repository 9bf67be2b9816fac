//! The process's one listener for Ctrl+C (SIGINT) and SIGTERM. Both mean "stop and save", so a
//! service manager's or `kill`'s polite stop finishes recordings the way Ctrl+C does. Only the
//! binary listens for OS signals: the libraries take a stop channel instead.

use std::process::ExitCode;

use super::{EXIT_FAILED, fail};

/// Ctrl+C and, on Unix, SIGTERM, registered. The handlers are installed when this is made
/// ([`ShutdownSignal::install_in`]), so a command installs them *before* it prints
/// `listening on …`: a signal sent right after that line is never the default "terminate at once".
pub struct ShutdownSignal {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl ShutdownSignal {
    /// Installs the handlers now, inside `rt`'s context, before anything runs on it.
    pub fn install_in(rt: &tokio::runtime::Runtime) -> std::io::Result<Self> {
        let _context = rt.enter();
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                int: signal(SignalKind::interrupt())?,
                term: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Resolves on the first of the signals with the exit code its default action would give
    /// (130 for SIGINT, 143 for SIGTERM).
    pub async fn recv(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => 130,
                _ = self.term.recv() => 143,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            130
        }
    }

    /// Spawns a task on the current runtime that turns the first signal into `stop = true`.
    pub fn stop_on_signal(mut self, stop: tokio::sync::watch::Sender<bool>) {
        tokio::spawn(async move {
            self.recv().await;
            stop.send(true).ok();
        });
    }
}

/// Installs the handlers on `rt` before a command prints anything a script waits for
/// (`listening on …`), or the exit code for "cannot watch for them".
pub fn install(rt: &tokio::runtime::Runtime) -> Result<ShutdownSignal, ExitCode> {
    ShutdownSignal::install_in(rt).map_err(|e| {
        fail(
            EXIT_FAILED,
            format!("cannot watch for Ctrl+C or SIGTERM: {e}"),
        )
    })
}

/// For commands that write for a while and have no Ctrl+C handling of their own (`export -o`):
/// on Ctrl+C or SIGTERM, remove the temporary files of unfinished output files, then exit with
/// 130 (143 for SIGTERM), as the default action would have — but with no temporary file left
/// behind. Installed once; later calls do nothing.
pub fn remove_temp_files_on_interrupt() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            return;
        };
        // Register the handlers before returning, so an interrupt right after is caught.
        let Ok(mut signals) = ShutdownSignal::install_in(&rt) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("sse-replay-interrupt".into())
            .spawn(move || {
                let code = rt.block_on(signals.recv());
                sse_replay_core::recording::remove_pending_temps();
                #[allow(
                    clippy::exit,
                    reason = "Ctrl+C during export: the temporary files are gone, the process ends with the signal's code"
                )]
                std::process::exit(code);
            });
        drop(spawned);
    });
}

/// What a command that stops its own work when asked (`test`) gets from
/// [`stop_on_signal_flag`]: the flag the first Ctrl+C or SIGTERM sets, and the exit code that
/// signal's default action would have given.
pub struct StopFlag {
    /// Set on the first signal.
    pub flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    code: std::sync::Arc<std::sync::atomic::AtomicI32>,
}

impl StopFlag {
    /// The signal's exit code (130 for SIGINT, 143 for SIGTERM), once one arrived.
    pub fn code(&self) -> Option<u8> {
        if !self.flag.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        u8::try_from(self.code.load(std::sync::atomic::Ordering::SeqCst)).ok()
    }
}

/// Installs the handlers (before returning) on a thread of their own, which turns the first
/// Ctrl+C or SIGTERM into [`StopFlag::flag`]; the command then stops its work and exits with
/// [`StopFlag::code`].
pub fn stop_on_signal_flag() -> Result<StopFlag, ExitCode> {
    let cannot = |e: std::io::Error| {
        fail(
            EXIT_FAILED,
            format!("cannot watch for Ctrl+C or SIGTERM: {e}"),
        )
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(cannot)?;
    let mut signals = ShutdownSignal::install_in(&rt).map_err(cannot)?;
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let code = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let (f, c) = (flag.clone(), code.clone());
    std::thread::Builder::new()
        .name("sse-replay-signals".into())
        .spawn(move || {
            let got = rt.block_on(signals.recv());
            c.store(got, std::sync::atomic::Ordering::SeqCst);
            f.store(true, std::sync::atomic::Ordering::SeqCst);
        })
        .map_err(cannot)?;
    Ok(StopFlag { flag, code })
}
