//! A week of work in two repositories, as the hooks see it: Claude Code transcripts of an API
//! and a blog, written here, where values change over the week (ports, a rate limit, who
//! reviews). Asked in one repository, a question that repository holds the answer to gets that
//! repository's memory: the other's lines are at most 5 % of what is injected (#55), and a
//! changed value comes before the one it replaced.

use std::io::Write;
use std::path::{Path, PathBuf};

use memcc::hooks::{HookEvent, HookInput};
use memcc::transcripts::ImportOptions;
use memcc::{Memcc, MemccConfig};
use serde_json::json;

/// One session: its repository, day of the week (1 = Monday) and turns (user, assistant).
struct Session {
    repo: &'static str,
    day: u32,
    turns: &'static [(&'static str, &'static str)],
}

const WEEK: &[Session] = &[
    Session {
        repo: "api",
        day: 1,
        turns: &[
            (
                "Let's get the API running locally. Which port does the dev server use?",
                "The dev server listens on port 8080 (`cargo run -- serve`).",
            ),
            (
                "Set the rate limit on /search to 120 requests per minute per key.",
                "Done: /search is limited to 120 requests per minute per API key in `limits.toml`.",
            ),
            (
                "Alice reviews the API's pull requests, so request her on this one.",
                "Requested Alice as the reviewer of the pull request.",
            ),
            ("run the tests", "All 214 tests pass."),
            (
                "Staging for the API is api-staging.internal; deploy there with `make deploy-staging`.",
                "Deployed to api-staging.internal with `make deploy-staging`.",
            ),
        ],
    },
    Session {
        repo: "blog",
        day: 1,
        turns: &[
            (
                "Start the blog locally. What port is the dev server on?",
                "`bundle exec jekyll serve` serves the blog on port 4000.",
            ),
            (
                "New posts go in _posts with a date prefix, like 2026-11-30-hello.md.",
                "Created _posts/2026-11-30-hello.md.",
            ),
            (
                "I prefer conventional commits in every repository: feat:, fix:, docs:.",
                "Understood; I will write conventional commit messages.",
            ),
            (
                "The blog deploys to the Netlify site quiet-fox-12 on every push to main.",
                "Noted: pushes to main deploy to Netlify site quiet-fox-12.",
            ),
            ("looks good, thanks", "You're welcome."),
        ],
    },
    Session {
        repo: "api",
        day: 2,
        turns: &[
            (
                "The API's database is Postgres on db-api.internal port 5432, database name orders.",
                "Configured DATABASE_URL for db-api.internal:5432/orders.",
            ),
            (
                "Use cargo nextest to run the API's tests from now on.",
                "Switched the test command to `cargo nextest run`.",
            ),
            ("fix the failing migration", "Fixed the migration: the index name clashed; tests pass."),
        ],
    },
    Session {
        repo: "blog",
        day: 2,
        turns: &[
            (
                "Images for posts go in assets/img, resized to 1200px wide.",
                "Moved the images to assets/img at 1200px wide.",
            ),
            ("Sam reviews the blog's pull requests.", "I'll request Sam on the blog's pull requests."),
            ("ok", "Anything else?"),
        ],
    },
    Session {
        repo: "api",
        day: 3,
        turns: &[
            (
                "We need TLS locally: move the API dev server from port 8080 to port 8443.",
                "The dev server now listens on port 8443 with a self-signed certificate; 8080 is no longer used.",
            ),
            (
                "Customers hit the limit: raise the /search rate limit from 120 to 300 requests per minute.",
                "Raised /search to 300 requests per minute per key in `limits.toml`.",
            ),
            ("run the tests again", "All 221 tests pass."),
        ],
    },
    Session {
        repo: "blog",
        day: 3,
        turns: &[
            (
                "Let's switch the blog from Jekyll to Astro.",
                "Migrated the blog to Astro; posts moved to src/content/posts.",
            ),
            ("What port does Astro's dev server use?", "`npm run dev` serves the blog on port 4321 now, not 4000."),
            ("Images now live in public/img instead of assets/img.", "Moved the images to public/img."),
        ],
    },
    Session {
        repo: "api",
        day: 4,
        turns: &[
            (
                "Alice moved to the mobile team; Priya reviews the API's pull requests from now on.",
                "Noted: Priya is the API's reviewer now; requested her on the open pull request.",
            ),
            ("Add a health check at /healthz.", "Added GET /healthz returning 200 with the build's commit."),
            ("tests pass?", "Yes, all 224 tests pass."),
        ],
    },
    Session {
        repo: "blog",
        day: 5,
        turns: &[
            (
                "We're leaving Netlify: the blog deploys to the Cloudflare Pages project quiet-fox now.",
                "Switched deploys to Cloudflare Pages project quiet-fox; the Netlify site is disabled.",
            ),
            (
                "The blog's staging preview is at preview.quiet-fox.pages.dev.",
                "Noted the preview URL preview.quiet-fox.pages.dev.",
            ),
            ("great, thanks", "Glad to help."),
        ],
    },
];

/// A question asked in `repo` whose answer that repository holds: `current` must be injected,
/// before `replaced` when that is given.
struct Question {
    repo: &'static str,
    prompt: &'static str,
    current: &'static str,
    replaced: Option<&'static str>,
}

const QUESTIONS: &[Question] = &[
    Question {
        repo: "api",
        prompt: "What port does the dev server listen on?",
        current: "8443",
        replaced: Some("8080"),
    },
    Question { repo: "api", prompt: "What's the rate limit on /search?", current: "300", replaced: Some("120") },
    Question { repo: "api", prompt: "Who should review my pull request?", current: "Priya", replaced: Some("Alice") },
    Question {
        repo: "api",
        prompt: "Where is staging and how do I deploy to it?",
        current: "api-staging.internal",
        replaced: None,
    },
    Question { repo: "api", prompt: "Which database host does this use?", current: "db-api.internal", replaced: None },
    Question {
        repo: "blog",
        prompt: "What port does the dev server listen on?",
        current: "4321",
        replaced: Some("4000"),
    },
    Question { repo: "blog", prompt: "Who should review my pull request?", current: "Sam", replaced: None },
    Question {
        repo: "blog",
        prompt: "Where do images for posts go?",
        current: "public/img",
        replaced: Some("assets/img"),
    },
    Question {
        repo: "blog",
        prompt: "Where does the blog deploy to?",
        current: "Cloudflare Pages",
        replaced: Some("Netlify"),
    },
    Question {
        repo: "blog",
        prompt: "What's the staging preview URL?",
        current: "preview.quiet-fox.pages.dev",
        replaced: None,
    },
];

/// Questions whose answer is in the other repository (or is the user's own, said there): it
/// still arrives.
const ELSEWHERE: &[(&str, &str, &str)] = &[
    ("blog", "Which port does the API's dev server listen on now?", "8443"),
    ("api", "How should I write the commit message for this change?", "conventional commits"),
];

/// Write the week's transcripts as Claude Code writes them; their paths in the week's order.
fn write_week(home: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (n, s) in WEEK.iter().enumerate() {
        let cwd = home.join("src").join(s.repo);
        let id = format!("{}-{n}", s.repo);
        let path = home.join(".claude/projects").join(s.repo).join(format!("{id}.jsonl"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = std::fs::File::create(&path).unwrap();
        for (i, (user, assistant)) in s.turns.iter().enumerate() {
            let date = ["2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"][s.day as usize - 1];
            let ts = format!("{date}T{:02}:{:02}:00Z", 9 + n % 2 * 4, i * 4);
            let u = json!({"type": "user", "sessionId": id, "cwd": cwd, "gitBranch": "main", "timestamp": ts,
                           "message": {"role": "user", "content": user}});
            let a = json!({"type": "assistant", "sessionId": id, "cwd": cwd, "timestamp": ts,
                           "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}});
            writeln!(f, "{u}\n{a}").unwrap();
        }
        paths.push(path);
    }
    paths
}

#[test]
fn a_week_in_two_repositories_keeps_each_ones_answers_its_own() {
    let Some(model) = memcc_testkit::model_dir("the two-project week runs on the local model") else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for repo in ["api", "blog"] {
        std::fs::create_dir_all(home.join("src").join(repo).join(".git")).unwrap();
    }
    let config = MemccConfig { data_dir: Some(dir.path().join("data")), model_dir: Some(model), ..Default::default() };
    let memcc = Memcc::open(config).unwrap();
    let budget = memcc.budget(None);
    for path in write_week(&home) {
        let options = ImportOptions { flush: Some(budget), ..ImportOptions::default() };
        memcc.import_file("main", &path, &options).unwrap();
    }
    let memory = memcc.memory().unwrap();
    let mut injected = 0;
    let (mut leaked, mut missed, mut stale) = (Vec::new(), Vec::new(), Vec::new());
    for q in QUESTIONS {
        let input = HookInput {
            session_id: format!("ask-{}", q.repo),
            cwd: Some(home.join("src").join(q.repo)),
            prompt: Some(q.prompt.into()),
            ..Default::default()
        };
        let answer = memcc.answer_hook("main", HookEvent::UserPromptSubmit, &input).unwrap();
        let text = answer.context.unwrap_or_default();
        eprintln!("--- [{}] {}\n{text}", q.repo, q.prompt);
        for line in text.lines() {
            let Some(id) = line.rsplit("(mem_").next().filter(|_| line.contains("(mem_")) else { continue };
            let id: String = id.chars().take_while(char::is_ascii_digit).collect();
            let record = memory.memory_get("main", &id).unwrap();
            injected += 1;
            let own = record.project.as_deref().is_none_or(|p| p.ends_with(q.repo));
            if !own && record.kind != memcc::memory::RecordKind::Preference {
                leaked.push(format!("[{}] {} ← {line}", q.repo, q.prompt));
            }
        }
        // A line that says both ("from 8080 to 8443") states the change: the replaced value
        // alone must not come first.
        let lines: Vec<&str> = text.lines().collect();
        let current = lines.iter().position(|l| l.contains(q.current));
        let replaced = q.replaced.and_then(|r| lines.iter().position(|l| l.contains(r) && !l.contains(q.current)));
        if current.is_none() {
            missed.push(format!("[{}] {:?} did not get {:?}", q.repo, q.prompt, q.current));
        }
        if replaced.is_some_and(|old| current.is_none_or(|new| old < new)) {
            stale.push(format!("[{}] {:?}: {:?} came before {:?}", q.repo, q.prompt, q.replaced, q.current));
        }
    }
    for (repo, prompt, expected) in ELSEWHERE {
        let input = HookInput {
            session_id: format!("ask-{repo}"),
            cwd: Some(home.join("src").join(repo)),
            prompt: Some(prompt.to_string()),
            ..Default::default()
        };
        let text = memcc.answer_hook("main", HookEvent::UserPromptSubmit, &input).unwrap().context.unwrap_or_default();
        if !text.contains(expected) {
            missed.push(format!("[{repo}] {prompt:?} did not get {expected:?} from elsewhere:\n{text}"));
        }
    }
    eprintln!("injected {injected} lines, leaked {}:\n{}", leaked.len(), leaked.join("\n"));
    assert!(missed.is_empty(), "{missed:#?}");
    assert!(stale.is_empty(), "{stale:#?}");
    assert!(leaked.len() * 20 <= injected, "more than 5 % of the lines came from the other repository");
}
