//! A regular file mapped into memory a window at a time, safe against its
//! truncation.
//!
//! Reading a file with `read` copies every byte from the page cache into a
//! buffer: on a warm 1 GB log that copy is a sixth of the CPU time, and the
//! parser then reads the copy. A mapping lets the parser read the page cache
//! where it lies. But a mapped page the file no longer holds (someone
//! truncated it, as `logrotate`'s copytruncate does) faults with SIGBUS, which
//! kills the process.
//!
//! Nothing here makes anyone wait: no lease is held while reading, so a
//! truncation or a writer goes through at once. Instead:
//! - a file someone has open for writing (a live log) is not mapped at all:
//!   a read lease, taken and given back at once, tells (Linux grants one only
//!   while no one has the file open for writing), and it is read as a stream;
//! - before each chunk is handed out the file's size is looked at, and a file
//!   that shrank below it is read no further ([`MappedFile::shrank`]);
//! - a chunk in flight when the file is cut under it (between that look and
//!   its reading, or while the process is stopped) faults: a SIGBUS handler
//!   puts zero-filled pages where the file's were, so the read goes on, and
//!   marks the file as cut. The reader then stops, and the report says the
//!   file shrank while it was read.
//!
//! Where no mapping is possible (another system, a file system without
//! leases or mappings) nothing is mapped and the caller reads a stream.

use std::fs::File;
use std::io;
use std::sync::Arc;

use memmap2::{Advice, Mmap, MmapOptions};

/// A regular file no one writes, open for mapping.
pub struct MappedFile {
    file: File,
    /// This file's entry in the fault registry: set when a window faulted.
    fault: fault::Flag,
}

impl MappedFile {
    /// `file`, if it can be mapped: no one has it open for writing.
    pub fn open(file: File) -> Result<Arc<MappedFile>, File> {
        if !no_writer(&file) {
            return Err(file);
        }
        match fault::Flag::new() {
            Some(fault) => Ok(Arc::new(MappedFile { file, fault })),
            None => Err(file),
        }
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    /// A window of the file faulted: its pages were gone.
    pub fn faulted(&self) -> bool {
        self.fault.raised()
    }

    /// The file is shorter than `end` bytes now, or a window of it faulted
    /// (its pages were gone): it was cut while it was read.
    pub fn shrank(&self, end: u64) -> bool {
        // The fault flag first: an atomic, before a system call.
        self.fault.raised() || self.file.metadata().map_or(true, |m| m.len() < end)
    }

    /// `len` bytes of the file from byte `at`.
    pub fn map(self: &Arc<Self>, at: u64, len: usize) -> io::Result<Window> {
        // SAFETY: a page the file loses while mapped (a truncation) faults,
        // and the fault handler puts a zero-filled page in its place (see the
        // module's doc), so the bytes stay readable memory for the window's
        // life; the window is registered with the handler before its bytes are
        // read and unregistered before it is unmapped.
        let map = unsafe { MmapOptions::new().offset(at).len(len).map(&self.file)? };
        let Some(slot) = fault::register(map.as_ptr() as usize, map.len(), &self.fault) else {
            return Err(io::Error::other("no room to register a mapped window"));
        };
        // Only the kernel's read-ahead hint: a failure changes nothing read.
        let _ = map.advise(Advice::Sequential);
        Ok(Window {
            map,
            at,
            slot,
            _file: Arc::clone(self),
        })
    }
}

/// Bytes of a mapped file.
pub struct Window {
    map: Mmap,
    /// The file offset of the first byte.
    at: u64,
    slot: usize,
    _file: Arc<MappedFile>,
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

    /// A window of the file faulted (its pages were gone): bytes read from
    /// it since may be zeros instead of the file's.
    pub fn faulted(&self) -> bool {
        self._file.fault.raised()
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // Before the mapping goes (the fields drop after this).
        fault::unregister(self.slot);
    }
}

/// Whether no one has `file` open for writing: a read lease is granted only
/// then. It is given back at once, so no writer or truncation waits on it.
#[cfg(target_os = "linux")]
fn no_writer(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    use std::sync::Once;
    static QUIET: Once = Once::new();
    // A lease's holder is told of a break with SIGIO, whose default action
    // ends the process; a break while the lease is held for the check needs
    // no answer (it is given back at once).
    // SAFETY: setting a signal's disposition to ignore runs no code of ours.
    QUIET.call_once(|| unsafe {
        libc::signal(libc::SIGIO, libc::SIG_IGN);
    });
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this `File` owns.
    unsafe {
        if libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) != 0 {
            return false;
        }
        libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
    }
    fault::install()
}

#[cfg(not(target_os = "linux"))]
fn no_writer(_: &File) -> bool {
    false
}

/// The windows mapped now, and what their faults raised; the SIGBUS handler
/// reads them (atomics only: a handler may not take a lock or allocate).
mod fault {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// Windows mapped at once, at most: the reader keeps a few in flight (the
    /// tests hold hundreds of small ones).
    const WINDOWS: usize = 1024;
    /// Files open for mapping at once, at most (one in the CLI; tests run several).
    const FILES: usize = 64;

    static START: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
    static LEN: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
    /// The file (its flag) of each window.
    static OWNER: [AtomicUsize; WINDOWS] = [const { AtomicUsize::new(0) }; WINDOWS];
    static TAKEN: [AtomicBool; WINDOWS] = [const { AtomicBool::new(false) }; WINDOWS];
    static FILE_TAKEN: [AtomicBool; FILES] = [const { AtomicBool::new(false) }; FILES];
    static FAULTED: [AtomicBool; FILES] = [const { AtomicBool::new(false) }; FILES];

    /// A file's fault flag, freed when dropped.
    pub struct Flag(usize);

    impl Flag {
        pub fn new() -> Option<Flag> {
            let k = (0..FILES).find(|&k| {
                FILE_TAKEN[k]
                    .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })?;
            FAULTED[k].store(false, Ordering::Release);
            Some(Flag(k))
        }

        pub fn raised(&self) -> bool {
            FAULTED[self.0].load(Ordering::Acquire)
        }
    }

    impl Drop for Flag {
        fn drop(&mut self) {
            FILE_TAKEN[self.0].store(false, Ordering::Release);
        }
    }

    /// Registers a window of `len` bytes at `start` of the file of `flag`: its slot.
    pub fn register(start: usize, len: usize, flag: &Flag) -> Option<usize> {
        let k = (0..WINDOWS).find(|&k| {
            TAKEN[k]
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        OWNER[k].store(flag.0, Ordering::Relaxed);
        LEN[k].store(len, Ordering::Relaxed);
        START[k].store(start, Ordering::Release);
        Some(k)
    }

    pub fn unregister(k: usize) {
        START[k].store(0, Ordering::Release);
        LEN[k].store(0, Ordering::Relaxed);
        TAKEN[k].store(false, Ordering::Release);
    }

    /// The window holding `addr`: its start, length and file.
    fn window_of(addr: usize) -> Option<(usize, usize, usize)> {
        (0..WINDOWS).find_map(|k| {
            let start = START[k].load(Ordering::Acquire);
            let len = LEN[k].load(Ordering::Relaxed);
            (start != 0 && addr >= start && addr - start < len)
                .then(|| (start, len, OWNER[k].load(Ordering::Relaxed)))
        })
    }

    #[cfg(target_os = "linux")]
    mod handler {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Once;

        use super::{window_of, FAULTED};

        static mut PREVIOUS: Option<libc::sigaction> = None;
        static INSTALLED: AtomicBool = AtomicBool::new(false);

        /// A fault in a mapped window: the rest of the window from the page
        /// that faulted becomes zero-filled memory, and its file is marked as
        /// cut. Any other fault is the previous handler's (Rust's own, which
        /// tells a stack overflow, or the default, which ends the process).
        extern "C" fn on_bus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
            // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
            let addr = unsafe { (*info).si_addr() } as usize;
            if let Some((start, len, file)) = window_of(addr) {
                // SAFETY: sysconf and mmap are async-signal-safe; the range lies in
                // a window this process mapped and still holds.
                unsafe {
                    let page = libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize;
                    let from = addr & !(page - 1);
                    let to = (start + len).div_ceil(page) * page;
                    let zeros = libc::mmap(
                        from as *mut libc::c_void,
                        to - from,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    );
                    if zeros != libc::MAP_FAILED {
                        FAULTED[file].store(true, Ordering::Release);
                        return;
                    }
                }
            }
            // SAFETY: PREVIOUS was written once, before this handler was installed.
            unsafe {
                let previous = &*std::ptr::addr_of!(PREVIOUS);
                match previous {
                    Some(p)
                        if p.sa_flags & libc::SA_SIGINFO != 0
                            && p.sa_sigaction != libc::SIG_DFL
                            && p.sa_sigaction != libc::SIG_IGN =>
                    {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(p.sa_sigaction);
                        f(sig, info, ctx);
                    }
                    Some(p) => {
                        // The fault repeats on return, under the previous action.
                        libc::sigaction(sig, p, std::ptr::null_mut());
                    }
                    None => {
                        libc::signal(sig, libc::SIG_DFL);
                    }
                }
            }
        }

        /// Installs the SIGBUS handler (once); whether it is in place.
        pub fn install() -> bool {
            static ONCE: Once = Once::new();
            ONCE.call_once(|| {
                // SAFETY: a zeroed sigaction is a valid value to fill; the handler
                // only touches atomics and async-signal-safe calls.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                        return;
                    }
                    PREVIOUS = Some(old);
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_bus as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    if libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) == 0 {
                        INSTALLED.store(true, Ordering::Release);
                    }
                }
            });
            INSTALLED.load(Ordering::Acquire)
        }
    }

    #[cfg(target_os = "linux")]
    pub use handler::install;
}
