//! Outputs written atomically: a reader (or the next run) sees the previous file or the new one,
//! never a truncated one.
//!
//! Every file polars-rag writes (Parquet, JSON, HTML, xlsx, CSV) goes through [`AtomicFile`]:
//! the content is written to a temporary file in the target's directory, flushed to disk, and
//! renamed over the target, which a POSIX file system does in one step. A run that fails or is
//! killed while writing leaves the previous output untouched (and at worst a hidden
//! `.NAME.tmp-…` file beside it, removed when the failure is an error rather than a kill).
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
    temp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts writing `target`: creates its temporary file in the same directory (so the final
    /// rename never crosses file systems).
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
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
            target: target.to_path_buf(),
            temp,
            file: Some(file),
        })
    }

    /// The temporary file to write to.
    pub fn file(&mut self) -> io::Result<&mut File> {
        match &mut self.file {
            Some(file) => Ok(file),
            slot => Ok(slot.insert(File::options().append(true).open(&self.temp)?)),
        }
    }

    /// Flushes the content to disk and puts it in place of the target.
    pub fn commit(mut self) -> io::Result<()> {
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
