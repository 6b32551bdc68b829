//! The process's stdin and stdout as async streams for the stdio transport.
//!
//! An MCP client talks to the server through two pipes. Tokio's `stdin()`/`stdout()` run every
//! read and write on its blocking pool, so each call pays two thread hand-offs (read the
//! request, write the answer) on top of the work itself. When stdin or stdout is a pipe it is
//! put in non-blocking mode and driven by the runtime's reactor instead, as sockets are.
//! Anything else (a file, a terminal), or a stdout pipe that stderr shares (non-blocking mode
//! would then make log writes fail when the pipe is full), keeps tokio's blocking-pool streams.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// An input stream for the transport.
pub type Input = Box<dyn AsyncRead + Unpin + Send>;
/// An output stream for the transport.
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// The file behind a descriptor (a duplicate sharing its open file description).
fn duplicate(fd: BorrowedFd<'_>) -> io::Result<File> {
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// Device and inode of a descriptor's file, when it can be read.
fn identity(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let meta = duplicate(fd).ok()?.metadata().ok()?;
    Some((meta.dev(), meta.ino()))
}

/// Whether a descriptor is a pipe (or FIFO).
fn is_pipe(fd: BorrowedFd<'_>) -> bool {
    duplicate(fd)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.file_type().is_fifo())
}

/// Stdin: a reactor-driven pipe when it is one, tokio's stdin otherwise. Must be called
/// inside the runtime.
pub fn input() -> Input {
    let stdin = io::stdin();
    if is_pipe(stdin.as_fd())
        && let Ok(receiver) = duplicate(stdin.as_fd()).and_then(pipe::Receiver::from_file)
    {
        return Box::new(receiver);
    }
    Box::new(tokio::io::stdin())
}

/// Stdout: a reactor-driven pipe when it is one that stderr does not share, tokio's stdout
/// otherwise. Must be called inside the runtime.
pub fn output() -> Output {
    let stdout = io::stdout();
    let shares_stderr = identity(stdout.as_fd()).is_none()
        || identity(stdout.as_fd()) == identity(io::stderr().as_fd());
    if !shares_stderr
        && is_pipe(stdout.as_fd())
        && let Ok(sender) = duplicate(stdout.as_fd()).and_then(pipe::Sender::from_file)
    {
        return Box::new(sender);
    }
    Box::new(tokio::io::stdout())
}
