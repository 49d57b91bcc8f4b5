//! Outputs written atomically: a reader (or the next run) sees the previous file or the new one,
//! never a truncated one.
//!
//! Every file polars-rag writes (Parquet, JSON, HTML, xlsx, CSV) goes through [`AtomicFile`]:
//! the content is written to a temporary file in the target's directory, flushed to disk, and
//! renamed over the target, which a POSIX file system does in one step. A run that fails or is
//! killed while writing leaves the previous output untouched (and at worst a hidden
//! `.NAME.tmp-…` file beside it, removed when the failure is an error rather than a kill).
//!
//! Replacing is for regular files only. A target that exists and is something else is never
//! replaced: a device, a FIFO or a socket (`/dev/null`, `/dev/stdout`, a named pipe) is written
//! through, so that a failed write (`/dev/full`) fails the command; a directory is an error
//! naming it. A symbolic link is followed: the file it points to is replaced, or created when
//! it does not exist yet (a dangling link), and the link stays.
//!
//! ```
//! use std::io::Write;
//! use polars_rag::atomic::AtomicFile;
//! let dir = std::env::temp_dir().join(format!("polars-rag-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let target = dir.join("scores.txt");
//! std::fs::write(&target, "old").unwrap();
//! let mut out = AtomicFile::create(&target).unwrap();
//! out.file().unwrap().write_all(b"new").unwrap();
//! assert_eq!(std::fs::read_to_string(&target).unwrap(), "old"); // not replaced yet
//! out.commit().unwrap();
//! assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written in place of `target`; dropped without [`AtomicFile::commit`], it is
/// removed and the target stays as it was.
pub struct AtomicFile {
    target: PathBuf,
    /// The temporary file; empty when the target is written through (not a regular file).
    temp: PathBuf,
    file: Option<File>,
}

/// What an existing target is, for [`AtomicFile::create`].
enum Existing {
    /// No file there yet, or a regular file (at this path, links followed): replace it.
    Replace(PathBuf),
    /// A device, FIFO or socket: write through it.
    WriteThrough,
}

/// The most links followed from one target, as the kernel's own limit: a longer chain (or a
/// loop) is an error rather than a hang.
const MAX_LINKS: usize = 40;

/// The path `target` names once its links are followed, the last one even when what it points
/// to does not exist yet (a dangling link names the file to create); `target` itself when it is
/// not a link.
fn through_links(target: &Path) -> io::Result<PathBuf> {
    let mut path = target.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let next = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a chain of more than {MAX_LINKS} symbolic links (a loop?)",
            target.display()
        ),
    ))
}

fn existing(target: &Path) -> io::Result<Existing> {
    let metadata = match std::fs::metadata(target) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Nothing there, or a link to a file not written yet: the file the link names is
            // created, and the link stays.
            return Ok(Existing::Replace(through_links(target)?));
        }
        Err(e) => return Err(e),
    };
    if metadata.is_file() {
        // A link to a regular file: replace the file it points to, keep the link.
        return Ok(Existing::Replace(through_links(target)?));
    }
    if metadata.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is a directory, not a file to write", target.display()),
        ));
    }
    Ok(Existing::WriteThrough)
}

impl AtomicFile {
    /// Starts writing `target`: creates its temporary file in the same directory (so the final
    /// rename never crosses file systems), or opens a target that is not a regular file to write
    /// through it (see the [module documentation](self)).
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let target = match existing(target)? {
            Existing::Replace(path) => path,
            Existing::WriteThrough => {
                let file = File::options().write(true).open(target)?;
                return Ok(AtomicFile {
                    target: target.to_path_buf(),
                    temp: PathBuf::new(),
                    file: Some(file),
                });
            }
        };
        let name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a file path", target.display()),
                )
            })?
            .to_string_lossy();
        let temp = target.with_file_name(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = File::create(&temp)?;
        Ok(AtomicFile {
            target,
            temp,
            file: Some(file),
        })
    }

    fn writes_through(&self) -> bool {
        self.temp.as_os_str().is_empty()
    }

    /// The temporary file to write to (or the target itself, written through).
    pub fn file(&mut self) -> io::Result<&mut File> {
        let path = if self.writes_through() {
            &self.target
        } else {
            &self.temp
        };
        match &mut self.file {
            Some(file) => Ok(file),
            slot => Ok(slot.insert(File::options().append(true).open(path)?)),
        }
    }

    /// Flushes the content to disk and puts it in place of the target.
    pub fn commit(mut self) -> io::Result<()> {
        if self.writes_through() {
            // Nothing to rename; a device or pipe has nothing to sync either. Write errors
            // surfaced when the content was written.
            self.file = None;
            return Ok(());
        }
        let file = match self.file.take() {
            Some(file) => file,
            None => File::options().read(true).write(true).open(&self.temp)?,
        };
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)?;
        // Make the rename itself durable where the platform allows syncing a directory.
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(dir) = File::open(dir)
        {
            let _ = dir.sync_all();
        }
        self.temp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            self.file = None;
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` atomically (see the [module documentation](self)).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut out = AtomicFile::create(path)?;
    out.file()?.write_all(bytes)?;
    out.commit()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::FileTypeExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("polars-rag-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_fifo_is_written_through_not_replaced() {
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_stays_a_device_and_a_full_one_fails_the_write() {
        // A null device node of our own (mknod needs root; elsewhere /dev/null itself, which
        // this code no longer replaces).
        let dir = scratch("device");
        let own = dir.join("null");
        let made = std::process::Command::new("mknod")
            .arg(&own)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        let null = if made {
            own
        } else {
            PathBuf::from("/dev/null")
        };
        write(&null, b"discarded").unwrap();
        assert!(std::fs::metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device());
        if Path::new("/dev/full").exists() {
            let mut out = AtomicFile::create(Path::new("/dev/full")).unwrap();
            assert!(out
                .file()
                .unwrap()
                .write_all(&[0; 8192])
                .and_then(|_| out.file()?.flush())
                .is_err());
            assert!(std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused_and_a_link_to_a_file_kept() {
        let dir = scratch("links");
        let e = write(&dir, b"x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let real = dir.join("real.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dangling_link_creates_its_target_and_stays_a_link() {
        let dir = scratch("dangling");
        std::fs::create_dir_all(dir.join("results")).unwrap();
        // A relative link, through a second link: both are resolved from their own directory.
        let link = dir.join("out.parquet");
        std::os::unix::fs::symlink("results/hop.parquet", &link).unwrap();
        std::os::unix::fs::symlink("run-1.parquet", dir.join("results/hop.parquet")).unwrap();
        write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.join("results/run-1.parquet")).unwrap(),
            "new"
        );
        // A loop of links is an error naming the path, not a hang.
        let a = dir.join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.join("b")).unwrap();
        let e = write(&a, b"x").unwrap_err().to_string();
        assert!(e.contains("symbolic links"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
