//! The process's stdin and stdout as async streams for the stdio transport.
//!
//! An MCP client talks to the server through two pipes. Tokio's `stdin()`/`stdout()` run every
//! read and write on its blocking pool, so each call pays two thread hand-offs (read the
//! request, write the answer) on top of the work itself. When stdin or stdout is a pipe it is
//! put in non-blocking mode and driven by the runtime's reactor instead, as sockets are.
//! Anything else (a file, a terminal), or a stdout pipe that stderr shares (non-blocking mode
//! would then make log writes fail when the pipe is full), keeps tokio's blocking-pool streams.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// An input stream for the transport.
pub type Input = Box<dyn AsyncRead + Unpin + Send>;
/// An output stream for the transport.
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// A duplicate of a descriptor (sharing its open file description) with its file's metadata,
/// when both can be had.
fn duplicate(fd: BorrowedFd<'_>) -> Option<(File, Metadata)> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    Some((file, meta))
}

/// Stdin: a reactor-driven pipe when it is one, tokio's stdin otherwise. Must be called
/// inside the runtime.
pub fn input() -> Input {
    if let Some((file, meta)) = duplicate(io::stdin().as_fd())
        && meta.file_type().is_fifo()
        && let Ok(receiver) = pipe::Receiver::from_file(file)
    {
        return Box::new(receiver);
    }
    Box::new(tokio::io::stdin())
}

/// Stdout: a reactor-driven pipe when it is one that stderr does not share, tokio's stdout
/// otherwise. Must be called inside the runtime.
pub fn output() -> Output {
    let stderr = duplicate(io::stderr().as_fd()).map(|(_, m)| (m.dev(), m.ino()));
    if let Some((file, meta)) = duplicate(io::stdout().as_fd())
        && meta.file_type().is_fifo()
        && stderr != Some((meta.dev(), meta.ino()))
        && let Ok(sender) = pipe::Sender::from_file(file)
    {
        return Box::new(sender);
    }
    Box::new(tokio::io::stdout())
}
