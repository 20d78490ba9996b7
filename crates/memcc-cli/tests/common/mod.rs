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

/// Where a `memcc mcp --http` server listens, read from the line it writes on stderr; the rest
/// of its log is drained on a thread so it never blocks on a full pipe.
pub fn listening_url(server: &mut std::process::Child) -> String {
    use std::io::{BufRead, BufReader};
    let mut lines = BufReader::new(server.stderr.take().expect("stderr piped")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.split_once("listening on ").map(|(_, u)| u.trim().to_string()))
        .expect("the server says where it listens");
    std::thread::spawn(move || lines.for_each(drop));
    url
}
