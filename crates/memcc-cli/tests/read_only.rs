//! A data directory this user may not write (another user's files, a mounted backup): the
//! commands that read work, the ones that write are refused with an error that says why, and
//! the files are left exactly as they were. Run as root (CI), the commands run as `nobody`
//! through `setpriv`, since root may write anything.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{BIN, ok, run};

/// How to run `memcc` as a user who may read the data directory but not write it.
struct Reader {
    bin: PathBuf,
    as_nobody: bool,
}

impl Reader {
    /// Make `home` (and the directory above it) read-only for the reader; None when this
    /// machine cannot (root without setpriv) and the test may skip.
    fn for_dir(top: &Path, home: &Path) -> Option<Reader> {
        let root = unsafe { libc::geteuid() } == 0;
        let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        let files: Vec<PathBuf> = std::fs::read_dir(home).unwrap().map(|e| e.unwrap().path()).collect();
        if !root {
            for f in files.iter().filter(|f| f.is_file()) {
                mode(f, 0o444);
            }
            mode(home, 0o555);
            return Some(Reader { bin: PathBuf::from(BIN), as_nobody: false });
        }
        if Command::new("setpriv").arg("--version").output().is_err() {
            return None;
        }
        // `nobody` reads what others may read: the binary copied out of root's home, the data
        // world-readable, nothing writable.
        let bin = top.join("bin/memcc");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::copy(BIN, &bin).unwrap();
        mode(bin.parent().unwrap(), 0o755);
        mode(&bin, 0o755);
        for f in files.iter().filter(|f| f.is_file()) {
            mode(f, 0o644);
        }
        mode(home, 0o755);
        mode(top, 0o755);
        Some(Reader { bin, as_nobody: true })
    }

    fn run(&self, home: &Path, args: &[&str]) -> Output {
        let mut cmd = if self.as_nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&self.bin);
            c
        } else {
            Command::new(&self.bin)
        };
        cmd.arg("--home").arg(home).args(["--embedding-model", "hashing"]).args(args).env("HOME", home);
        cmd.output().unwrap()
    }
}

fn snapshot(home: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(home)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn a_read_only_data_dir_serves_reads_and_refuses_writes_clearly() {
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("data");
    let transcript = top.path().join("t.jsonl");
    let lines: Vec<String> = (0..30)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            format!(r#"{{"role": "{role}", "content": "Turn {i}: the ferry to Zanzibar leaves at {i} past nine."}}"#)
        })
        .collect();
    std::fs::write(&transcript, lines.join("\n")).unwrap();
    let transcript_arg = transcript.to_str().unwrap();
    let more = top.path().join("more.jsonl");
    std::fs::write(&more, "{\"role\": \"user\", \"content\": \"One more turn.\"}\n").unwrap();
    ok(run(&home, &["ingest", "--session", "s", "--budget", "400", transcript_arg]));
    ok(run(&home, &["memory", "add", "The workshop key is under the blue flowerpot."]));
    let before = snapshot(&home);

    let Some(reader) = Reader::for_dir(top.path(), &home) else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true: setpriv is needed to test as another user");
        eprintln!("SKIP: running as root without setpriv; cannot test a read-only data dir");
        return;
    };
    let read = |args: &[&str]| -> String {
        let out = reader.run(&home, args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "memcc {args:?} failed on a read-only dir: {stderr}");
        assert!(stderr.contains("read-only for this user"), "memcc {args:?} says the dir is read-only: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let stats: serde_json::Value = serde_json::from_str(&read(&["--json", "stats", "--session", "s"])).unwrap();
    assert_eq!(stats["messages"], 30, "{stats}");
    assert!(stats["summaries"].as_i64().unwrap() > 0, "compacted before it became read-only: {stats}");
    assert!(read(&["verify", "--session", "s"]).contains("ok"));
    assert!(read(&["grep", "Zanzibar", "--session", "s"]).contains("Zanzibar"));
    assert!(read(&["memory", "search", "where is the workshop key"]).contains("blue flowerpot"));

    for args in [
        &["memory", "add", "A new note."][..],
        &["flush", "--session", "s"][..],
        &["purge", "--session", "s"][..],
        &["ingest", "--session", "s", more.to_str().unwrap()][..],
    ] {
        let out = reader.run(&home, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "memcc {args:?} wrote to a read-only dir");
        assert!(stderr.contains("read-only for this user") && stderr.contains("refuses"), "{args:?}: {stderr}");
    }
    assert_eq!(snapshot(&home), before, "nothing in the data dir changed, and no file was added");
}
