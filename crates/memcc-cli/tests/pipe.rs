//! A reader that stops early (`memcc … | head`) ends the command quietly, without a panic.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_ends_the_command_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(common::BIN)
        .arg("--home")
        .arg(dir.path())
        .args(["--embedding-model", "hashing", "demo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is closed here, while the demo still has pages to print.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
