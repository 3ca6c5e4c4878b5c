//! Following a growing log file as `tail -F` does: appends are read as they
//! come, a file renamed away (rotation) is read to its end before the new file
//! at the path is read from its start, a file cut short in place (logrotate's
//! `copytruncate`) is read again from its start, and a path that does not exist
//! yet is waited for.
//!
//! Each byte is read once: the open file is kept by its descriptor, and the
//! path is only looked at to find out whether another file took its place.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the follower hands on, in order.
pub enum Piece<'a> {
    /// Bytes that were appended to the file.
    Data(&'a [u8]),
    /// The file ended (renamed away, or cut short): a line it left unfinished is
    /// finished, not joined to the next file's first line.
    End,
}

/// Times another file took the path's place, and times the file was cut short.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Reopens {
    pub rotations: u64,
    pub truncations: u64,
}

pub struct Follower {
    path: PathBuf,
    open: Option<Open>,
    /// Bytes read at most from a file that is already there when watching
    /// starts (its tail): what came before is history the window would drop.
    backfill: u64,
    started: bool,
    buf: Vec<u8>,
    pub reopens: Reopens,
}

struct Open {
    file: File,
    /// Device and inode: the file, whatever its name now.
    id: (u64, u64),
    offset: u64,
    /// Reading began inside a line (the tail of a file already there): the
    /// bytes up to the first newline are the end of a line not read, dropped.
    mid_line: bool,
}

const READ_BYTES: usize = 256 * 1024;

impl Follower {
    pub fn new(path: &Path, backfill: u64) -> Self {
        Follower {
            path: path.to_path_buf(),
            open: None,
            backfill,
            started: false,
            buf: vec![0; READ_BYTES],
            reopens: Reopens::default(),
        }
    }

    /// Whether a file is open (the path existed once and could be read).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Reads what is new, handing it to `out`; true if anything was read.
    /// A path that does not exist (yet, or between a rotation's rename and
    /// the new file's creation) is not an error: it is looked for again.
    pub fn poll(&mut self, out: &mut dyn FnMut(Piece<'_>)) -> io::Result<bool> {
        let mut read = false;
        if let Some(o) = self.open.as_mut() {
            read |= drain(o, &mut self.buf, out)?;
        }
        let meta = match std::fs::metadata(&self.path) {
            Ok(m) if m.is_file() => m,
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "'{}' is not a regular file",
                    self.path.display()
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.started = true;
                return Ok(read);
            }
            Err(e) => return Err(e),
        };
        let id = file_id(&meta);
        if let Some(o) = self.open.as_mut().filter(|o| o.id == id) {
            if meta.len() < o.offset {
                // Copied away and cut short in place: what is there now is new.
                self.reopens.truncations += 1;
                out(Piece::End);
                o.file.seek(SeekFrom::Start(0))?;
                o.offset = 0;
                o.mid_line = false;
                read |= drain(o, &mut self.buf, out)?;
            }
            return Ok(read);
        }
        // Another file at the path (or the first): the old one was read to its end above.
        if self.open.is_some() {
            self.reopens.rotations += 1;
            out(Piece::End);
        }
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(read),
            Err(e) => return Err(e),
        };
        // A file there before watching began is read from its tail; one that
        // appears later is new, and read whole.
        let start = if self.started {
            0
        } else {
            meta.len().saturating_sub(self.backfill)
        };
        self.started = true;
        // From the byte before: if it ends a line, only it is dropped.
        let from = start.saturating_sub(1);
        file.seek(SeekFrom::Start(from))?;
        let o = self.open.insert(Open {
            file,
            id,
            offset: from,
            mid_line: start > 0,
        });
        read |= drain(o, &mut self.buf, out)?;
        Ok(read)
    }
}

/// Reads the open file to its end.
fn drain(o: &mut Open, buf: &mut [u8], out: &mut dyn FnMut(Piece<'_>)) -> io::Result<bool> {
    let mut read = false;
    loop {
        let n = match o.file.read(buf) {
            Ok(0) => return Ok(read),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        o.offset += n as u64;
        let mut data = &buf[..n];
        if o.mid_line {
            match memchr::memchr(b'\n', data) {
                Some(i) => {
                    o.mid_line = false;
                    data = &data[i + 1..];
                }
                None => continue,
            }
        }
        if !data.is_empty() {
            read = true;
            out(Piece::Data(data));
        }
    }
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(m: &std::fs::Metadata) -> (u64, u64) {
    // Without inodes a rotation is told by the creation time.
    let created = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    (0, created)
}

/// Sleeps until the log's directory changes or a timeout passes. On Linux it
/// waits on inotify (the directory, so that a rename or a new file wakes it
/// too); elsewhere, or where inotify cannot be had, it sleeps the timeout out.
/// Either way an idle watcher blocks in the kernel instead of spinning.
pub struct Waker {
    #[cfg(target_os = "linux")]
    fd: Option<std::os::fd::OwnedFd>,
}

impl Waker {
    pub fn new(path: &Path) -> Self {
        #[cfg(target_os = "linux")]
        {
            Waker {
                fd: inotify::watch_dir(path),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = path;
            Waker {}
        }
    }

    /// Whether changes wake the waiter (otherwise only the timeout does).
    pub fn notified(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.fd.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    pub fn wait(&mut self, timeout: Duration) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            inotify::wait(fd, timeout);
            return;
        }
        std::thread::sleep(timeout);
    }
}

#[cfg(target_os = "linux")]
mod inotify {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::Duration;

    pub fn watch_dir(path: &Path) -> Option<OwnedFd> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut c_dir = dir.as_os_str().as_bytes().to_vec();
        c_dir.push(0);
        // SAFETY: plain system calls; the descriptor is owned from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a new descriptor no one else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let mask = libc::IN_MODIFY
            | libc::IN_CREATE
            | libc::IN_MOVED_TO
            | libc::IN_MOVED_FROM
            | libc::IN_DELETE
            | libc::IN_CLOSE_WRITE
            | libc::IN_ATTRIB;
        // SAFETY: `c_dir` is NUL-terminated and outlives the call.
        let wd = unsafe { libc::inotify_add_watch(fd, c_dir.as_ptr().cast(), mask) };
        (wd >= 0).then_some(owned)
    }

    /// Blocks until an event or the timeout, then drops the events queued: the
    /// caller looks at the file itself.
    pub fn wait(fd: &OwnedFd, timeout: Duration) {
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 {
            let mut buf = [0u8; 4096];
            // SAFETY: reads into a buffer of the length given; non-blocking.
            while unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn collect(f: &mut Follower) -> Vec<u8> {
        let mut got = Vec::new();
        f.poll(&mut |p| match p {
            Piece::Data(d) => got.extend_from_slice(d),
            Piece::End => got.extend_from_slice(b"|END|"),
        })
        .expect("poll");
        got
    }

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open for append");
        f.write_all(text.as_bytes()).expect("append");
    }

    #[test]
    fn appends_rotation_truncation_and_a_late_file_are_each_read_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("server.log");
        let mut f = Follower::new(&path, 1 << 20);
        assert_eq!(collect(&mut f), b"", "no file yet");
        assert!(!f.is_open());
        append(&path, "one\ntw");
        assert_eq!(collect(&mut f), b"one\ntw");
        append(&path, "o\n");
        assert_eq!(collect(&mut f), b"o\n");
        assert_eq!(collect(&mut f), b"", "nothing new");
        // Rename rotation: the old file's last bytes come before the new file's.
        append(&path, "three\n");
        std::fs::rename(&path, dir.path().join("server.log.1")).expect("rename");
        assert_eq!(collect(&mut f), b"three\n", "the renamed file's tail");
        append(&path, "four\n");
        assert_eq!(collect(&mut f), b"|END|four\n");
        // copytruncate: the file is copied away and cut to nothing in place.
        append(&path, "five\n");
        assert_eq!(collect(&mut f), b"five\n");
        std::fs::copy(&path, dir.path().join("server.log.2")).expect("copy");
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .expect("truncate");
        append(&path, "six\n");
        assert_eq!(collect(&mut f), b"|END|six\n");
        assert_eq!(
            f.reopens,
            Reopens {
                rotations: 1,
                truncations: 1
            }
        );
    }

    #[test]
    fn a_file_already_there_is_read_from_its_tail_at_a_line_start() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("server.log");
        append(&path, "aaaaaaaaaa\nbbbb\ncc\n");
        let mut f = Follower::new(&path, 6);
        assert_eq!(
            collect(&mut f),
            b"cc\n",
            "the line cut by the tail is dropped"
        );
        append(&path, "dd\n");
        assert_eq!(collect(&mut f), b"dd\n");
        // A tail that begins at a line's start keeps that line.
        let mut f = Follower::new(&path, 6);
        assert_eq!(collect(&mut f), b"cc\ndd\n");
    }
}
