//! Running the `memcc` binary in the CLI's tests.
#![allow(dead_code)]

use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_memcc");

/// `memcc --home HOME --embedding-model hashing ARGS…`, whatever its outcome.
pub fn run(home: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN).arg("--home").arg(home).args(["--embedding-model", "hashing"]).args(args).output().unwrap()
}

/// The standard output of a run that must succeed.
pub fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}
