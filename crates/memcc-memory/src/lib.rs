//! MemCC's long-term memory runtime.

pub mod embed;
