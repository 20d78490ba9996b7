//! The project a conversation belongs to: the repository its working directory is in (the
//! directory itself outside any repository). Agents such as Claude Code and Codex run in a
//! directory and say which; memory kept per project keeps one repository's facts from crowding
//! out another's, while a preference said in one still reaches the next.

use std::path::{Path, PathBuf};

/// The project of working directory `cwd`: the root of the git repository it is in — the main
/// repository's root for a linked worktree, so every worktree of one repository is one project
/// — else `cwd` itself. Read from the file system as it is now; a directory that no longer
/// exists is its own project.
pub fn project_of(cwd: &Path) -> String {
    let cwd = normalise(cwd);
    let mut dir: Option<&Path> = Some(&cwd);
    while let Some(d) = dir {
        let git = d.join(".git");
        if git.is_dir() {
            return display(d);
        }
        if git.is_file() {
            return display(&worktree_main_root(&git).unwrap_or_else(|| d.to_path_buf()));
        }
        dir = d.parent();
    }
    display(&cwd)
}

/// A project's short name, for listings: its last path component ("shop" for "/home/ada/shop").
pub fn project_name(project: &str) -> &str {
    let trimmed = project.trim_end_matches(['/', '\\']);
    trimmed.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or(trimmed)
}

/// Whether `text` names `project` by its short name as a word of its own, in any case ("what
/// port does the API use?" names `/src/api`): asked in one project, a question about another.
pub fn named_in(text: &str, project: &str) -> bool {
    let name = project_name(project).to_lowercase();
    let part = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    // "api's", "api:" and "(api)" name it; "rapid" and "api-gateway" do not.
    !name.is_empty() && text.to_lowercase().split(|c: char| !part(c)).any(|w| w.trim_end_matches('.') == name)
}

/// `cwd` without `.` and `..` parts and trailing separators (no symlinks resolved: the path a
/// host names is the path its transcripts name).
fn normalise(cwd: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in cwd.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The root of the repository a linked worktree's `.git` file points into
/// (`gitdir: /repo/.git/worktrees/name` → `/repo`); `None` for any other `.git` file (a
/// submodule's points into its parent's `.git/modules/`, and is a project of its own).
fn worktree_main_root(git_file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git_file).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let target = if Path::new(target).is_absolute() { PathBuf::from(target) } else { git_file.parent()?.join(target) };
    let target = normalise(&target);
    let parent = target.parent()?;
    if parent.file_name()? != "worktrees" {
        return None;
    }
    let dot_git = parent.parent()?;
    (dot_git.file_name()? == ".git").then(|| dot_git.parent().map(Path::to_path_buf)).flatten()
}

fn display(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_inside_a_repository_belongs_to_the_repository_and_one_outside_to_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("shop");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/api")).unwrap();
        let loose = tmp.path().join("notes");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(project_of(&repo.join("src/api")), display(&repo));
        assert_eq!(project_of(&repo.join("src/./api/../api/")), display(&repo));
        assert_eq!(project_of(&repo), display(&repo));
        assert_eq!(project_of(&loose), display(&loose));
        // Gone since: its own project, as named.
        assert_eq!(project_of(&tmp.path().join("gone/deep")), display(&tmp.path().join("gone/deep")));
        assert_eq!(project_name(&display(&repo)), "shop");
        assert_eq!(project_name("/home/ada/shop/"), "shop");
        assert_eq!(project_name("shop"), "shop");
    }

    #[test]
    fn a_linked_worktree_is_its_main_repository_and_a_submodule_is_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("shop");
        std::fs::create_dir_all(repo.join(".git/worktrees/fix")).unwrap();
        let tree = tmp.path().join("shop-fix");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", repo.join(".git/worktrees/fix").display())).unwrap();
        assert_eq!(project_of(&tree.join("src")), display(&repo));
        let sub = repo.join("vendor/lib");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(".git"), "gitdir: ../../.git/modules/lib\n").unwrap();
        assert_eq!(project_of(&sub), display(&sub));
    }

    #[test]
    fn a_question_names_a_project_by_its_short_name_as_a_word() {
        for named in ["What port does the API use?", "the api's port", "ask (api): port", "is it in api."] {
            assert!(named_in(named, "/home/ada/src/api"), "{named}");
        }
        for not in ["rapid deploys", "the api-gateway port", "what port?", ""] {
            assert!(!named_in(not, "/home/ada/src/api"), "{not}");
        }
        assert!(named_in("how does my-blog build?", "/src/My-Blog/"));
        assert!(!named_in("anything", "/"), "a root names nothing");
    }
}
