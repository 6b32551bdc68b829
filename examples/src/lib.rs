//! # mempalace-cli
//!
//! The `mempalace` command: clap for the arguments, the `mempalace` crate for everything it
//! does, and what only a terminal needs: rendering ([`render`]), progress bars
//! ([`progress_bars`]) and the process's memory settings ([`malloc_tuning`]).

pub mod malloc_tuning;
pub mod progress_bars;
pub mod render;
