//! # mempalace-cli
//!
//! The `mempalace` command: clap for the arguments, the `mempalace` crate for everything it
//! does, and what only a terminal needs: rendering ([`render`]), progress bars
//! ([`progress_bars`]), the process's memory settings ([`malloc_tuning`]) and a hook's stdin
//! and detached process ([`hook_command`]), and the commands that are mostly flags and output
//! ([`coordination_commands`], [`palace_links_commands`], [`palace_transfer_commands`],
//! [`wing_commands`]).

pub mod coordination_commands;
pub mod hook_command;
pub mod malloc_tuning;
pub mod palace_links_commands;
pub mod palace_transfer_commands;
pub mod progress_bars;
pub mod render;
pub mod wing_commands;
