//! A regular file mapped into memory a window at a time, under a read lease.
//!
//! Reading a file with `read` copies every byte from the page cache into a
//! buffer: on a warm 1 GB log that copy is a sixth of the CPU time, and the
//! parser then reads the copy. A mapping lets the parser read the page cache
//! where it lies. But a mapped page the file no longer holds (someone
//! truncated it, as `logrotate`'s copytruncate does) kills the process with
//! SIGBUS. So a file is mapped only under a read lease (Linux's `F_SETLEASE`):
//! the kernel grants one only while no one has the file open for writing, and
//! holds any later opener for writing, and any truncation, until the lease is
//! given back. [`Lease::broken`] tells that someone is held; the reader then
//! maps no more and reads the rest with `read`, and the lease is given back
//! once the last window is unmapped (each window holds the lease, and is
//! unmapped before it lets go). Windows in flight take milliseconds to read;
//! the kernel waits for them up to `/proc/sys/fs/lease-break-time` (45 s by
//! default) before it breaks the lease by force.
//!
//! Where no lease is granted (a live log the server still writes, a file
//! someone else owns, a file system without leases, another system) nothing
//! is mapped and the caller reads the file as a stream.

use std::fs::File;
use std::io;
use std::sync::Arc;

use memmap2::{Advice, Mmap, MmapOptions};

/// A read lease on an open file; given back when dropped.
pub struct Lease {
    file: File,
}

impl Lease {
    /// A read lease on `file`, if the kernel grants one.
    pub fn take(file: File) -> Result<Arc<Lease>, File> {
        if grant(&file) {
            Ok(Arc::new(Lease { file }))
        } else {
            Err(file)
        }
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    /// Someone waits to open the file for writing or to truncate it (or the
    /// lease could not be checked): map no more.
    pub fn broken(&self) -> bool {
        !held(&self.file)
    }

    /// `len` bytes of the file from byte `at`.
    pub fn map(self: &Arc<Self>, at: u64, len: usize) -> io::Result<Window> {
        // SAFETY: the lease keeps every writer and truncation out while it is
        // held (see the module's doc), and the window holds the lease until
        // it is unmapped, so the mapped bytes stay the file's and in it.
        let map = unsafe { MmapOptions::new().offset(at).len(len).map(&self.file)? };
        // Only the kernel's read-ahead hint: a failure changes nothing read.
        let _ = map.advise(Advice::Sequential);
        Ok(Window {
            map,
            at,
            _lease: Arc::clone(self),
        })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        give_back(&self.file);
    }
}

/// Bytes of the leased file, mapped.
pub struct Window {
    // Declared before the lease, so dropped (unmapped) before it.
    map: Mmap,
    /// The file offset of the first byte.
    at: u64,
    _lease: Arc<Lease>,
}

impl Window {
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub fn at(&self) -> u64 {
        self.at
    }

    /// The file offset just past the last byte.
    pub fn end(&self) -> u64 {
        self.at + self.map.len() as u64
    }
}

#[cfg(target_os = "linux")]
fn grant(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    use std::sync::Once;
    static QUIET: Once = Once::new();
    // A lease's holder is told of a break with SIGIO, whose default action
    // ends the process; the reader polls instead (`broken`).
    // SAFETY: setting a signal's disposition to ignore runs no code of ours.
    QUIET.call_once(|| unsafe {
        libc::signal(libc::SIGIO, libc::SIG_IGN);
    });
    // SAFETY: fcntl on a descriptor this `File` owns.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) == 0 }
}

#[cfg(target_os = "linux")]
fn held(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // While a break is pending the lease reads as the type it is being broken
    // to (none, for a read lease).
    // SAFETY: fcntl on a descriptor this `File` owns.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLEASE) == libc::F_RDLCK }
}

#[cfg(target_os = "linux")]
fn give_back(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor this `File` owns.
    unsafe {
        libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK);
    }
}

#[cfg(not(target_os = "linux"))]
fn grant(_: &File) -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn held(_: &File) -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn give_back(_: &File) {}
