//! Writing to stdout and stderr.
//!
//! The report on stdout is the program's result: a failed write is an error
//! (exit 1 with a message), except a closed pipe (`| head`), which ends
//! quietly. Messages on stderr are a courtesy: a stderr that cannot be written
//! (`2>/dev/full`, a closed descriptor) changes nothing, and the exit code
//! stays the one the input deserves.
//!
//! Rust's own `stdout()` treats a closed descriptor (EBADF) as a sink that
//! takes everything, and its start-up code reopens a closed descriptor 1 on
//! `/dev/null` before `main` runs: a report written there would be lost with
//! exit 0. So the report goes to descriptor 1 directly, and whether it was
//! open when the process started is looked at before the runtime's start-up.

use std::io::{self, Write};

use crate::{Failure, EXIT_INTERNAL};

/// A message on stderr, prefixed with `batchlens: `; a failure to write it is ignored.
pub fn warn(message: &str) {
    let mut line = String::with_capacity(message.len() + 12);
    line.push_str("batchlens: ");
    line.push_str(message);
    line.push('\n');
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Text on stderr as it is (clap's messages); a failure to write it is ignored.
pub fn stderr_text(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Writes the report (or any result) to stdout.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    if closed_at_start() {
        return Err(Failure {
            code: EXIT_INTERNAL,
            message: "could not write to stdout: it is closed".to_string(),
        });
    }
    match raw_stdout(bytes) {
        Ok(()) => Ok(()),
        Err(e) => Err(write_failure(&e, "stdout")),
    }
}

/// What a failed write of the result means: quiet for a closed pipe, else an
/// error naming `what` was written to.
pub fn write_failure(e: &io::Error, what: &str) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return Failure {
            code: 0,
            message: String::new(),
        };
    }
    Failure {
        code: EXIT_INTERNAL,
        message: format!("could not write to {what}: {e}"),
    }
}

/// A writer of descriptor 1 that reports every error (unlike `io::stdout()`).
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if closed_at_start() {
            return Err(io::Error::other("stdout is closed"));
        }
        raw_write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn raw_stdout(mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match raw_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn raw_write(buf: &[u8]) -> io::Result<usize> {
    use std::os::fd::FromRawFd;
    // Descriptor 1 is the process's; the `File` must not close it when dropped.
    // SAFETY: fd 1 stays open for the process' life (or the write fails with EBADF).
    let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });
    f.write(buf)
}

#[cfg(not(unix))]
fn raw_write(buf: &[u8]) -> io::Result<usize> {
    let mut out = io::stdout().lock();
    let n = out.write(buf)?;
    out.flush()?;
    Ok(n)
}

#[cfg(target_os = "linux")]
mod probe {
    use std::sync::atomic::{AtomicBool, Ordering};

    pub static CLOSED: AtomicBool = AtomicBool::new(false);

    /// Runs before the Rust runtime's start-up (an ELF initialiser), so it sees
    /// descriptor 1 as the process was given it.
    extern "C" fn look() {
        // SAFETY: F_GETFD on a descriptor number only queries it.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            CLOSED.store(true, Ordering::Relaxed);
        }
    }

    #[used]
    #[link_section = ".init_array"]
    static LOOK: extern "C" fn() = look;

    pub fn closed() -> bool {
        CLOSED.load(Ordering::Relaxed)
    }
}

/// Whether descriptor 1 was closed when the process started (`>&-`).
fn closed_at_start() -> bool {
    #[cfg(target_os = "linux")]
    {
        probe::closed()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}
