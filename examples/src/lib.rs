//! # mempalace-cli
//!
//! The `mempalace` command: clap for the arguments, the `mempalace` crate for everything it
//! does, and what only a terminal needs: rendering ([`render`]), progress bars
//! ([`progress_bars`]), the process's memory settings ([`malloc_tuning`]) and a hook's stdin
//! and detached process ([`hook_command`]).

pub mod hook_command;
pub mod malloc_tuning;
pub mod progress_bars;
pub mod render;
