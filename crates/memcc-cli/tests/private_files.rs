//! What MemCC writes of a user's memory is theirs alone, whatever the umask.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{ok, run};

#[test]
fn an_export_file_is_readable_by_its_user_alone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("data");
    ok(run(&home, &["memory", "add", "My locker code is 4417."]));
    let file = dir.path().join("memory.jsonl");
    ok(run(&home, &["memory", "export", "--file", file.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&file).unwrap().contains("4417"));
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
}
