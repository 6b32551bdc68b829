//! Spellings of one entity (`main.zig`, `src/main.zig`, `a/src/main.zig` in a diff) and names
//! that identify no project (`content`, `WebFetch`, `app.js`): MemPalace 3.11's rules
//! (`hallways.py`), used to judge hallways and tunnels (`audit`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

/// Extensions that name a code or text file (`main.zig` and `main` are one entity).
const CODE_EXTENSIONS: &[&str] = &[
    "py", "js", "ts", "tsx", "jsx", "mjs", "cjs", "zig", "swift", "rs", "go", "md", "json", "yaml",
    "yml", "toml", "sh", "c", "h", "cpp", "hpp", "java", "kt", "rb", "php", "html", "css", "sql",
    "txt", "cs", "vue", "svelte",
];

/// Source-file extensions (a generic stem with one is a file every repo has).
const SOURCE_EXTENSIONS: &[&str] = &[
    "js", "mjs", "cjs", "ts", "tsx", "jsx", "py", "rs", "go", "rb", "php", "java", "kt", "swift",
    "cs", "c", "cc", "cpp", "h", "hpp", "zig", "css", "scss", "html", "vue", "svelte", "sql", "sh",
];

/// First segments of qualified names that are a runtime's or library's (`pathlib.Path`).
const LIBRARY_NAMESPACES: &[&str] = &[
    "os",
    "sys",
    "json",
    "re",
    "pathlib",
    "subprocess",
    "asyncio",
    "typing",
    "datetime",
    "time",
    "logging",
    "math",
    "random",
    "collections",
    "itertools",
    "functools",
    "shutil",
    "io",
    "tempfile",
    "unittest",
    "pytest",
    "np",
    "numpy",
    "pd",
    "pandas",
    "plt",
    "torch",
    "tf",
    "document",
    "window",
    "console",
    "process",
    "page",
    "browser",
    "navigator",
    "locator",
    "expect",
    "react",
    "vue",
    "angular",
    "fs",
    "path",
    "http",
    "https",
    "crypto",
    "util",
    "express",
    "next",
    "localstorage",
    "sessionstorage",
    "self",
    "this",
    "cls",
    "super",
];

/// Names in every coding transcript that identify no project (3.11's stoplist, lower case).
const GENERIC_ENTITY_STOPLIST: &str = "
    bash read write edit grep glob task agent websearch webfetch toolsearch
    structuredoutput askuserquestion skill monitor notebookedit todowrite
    app server service client gateway api handler controller model view
    config settings utils util helpers helper index main core common base
    test tests spec fixture mock github github.com gitlab git npm pip uv
    docker dockerfile compose.yml docker-compose.yml package.json package-lock.json
    tsconfig.json pyproject.toml requirements.txt readme readme.md changelog.md
    license .env .gitignore makefile lib src dist build node_modules
    created_at updated_at id name type value data result results error errors
    mod types routes router store page layout schema schemas models constants
    logger middleware services component components hooks context styles style
    theme globals setup init __init__ repository entity entities interfaces
    interface enums enum validators validator
    cargo.toml cargo.lock go.mod go.sum gemfile gemfile.lock setup.py setup.cfg
    uv.lock poetry.lock yarn.lock pnpm-lock.yaml package-lock.json roadmap.md
    contributing.md security.md license.md code_of_conduct.md todo.md notes.md
    .eslintrc .prettierrc vite.config.ts next.config.js tailwind.config.js
    webpack.config.js jest.config.js vitest.config.ts vercel.json fly.toml procfile
    created_by updated_by deleted_at deleted_by user_id primary_key foreign_key
    is_active is_deleted read_text write_text
    changedetectionstrategy changedetectionstrategy.onpush changedetectionstrategy.eager
    changedetectorref oninit ondestroy onchanges injectable ngmodule httpclient
    formsmodule commonmodule usestate useeffect usememo usecallback useref
    usecontext usereducer afterviewinit routerlink
    docker-compose python.exe xcode.app assert_eq to_string serde_json
    transformers.js tool_call tool_calls authored_at memory.used total_bytes
    tsconfig.app tsconfig.spec failure_scenario
    db ctx.allocator powershell.exe cmd.exe valueerror typeerror keyerror
    docker-compose.yaml docker-compose.yml source_file memory.total buffer.from
    hashmap hashset vec box arc rc
";

static STOPLIST: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| GENERIC_ENTITY_STOPLIST.split_whitespace().collect());
static SHORT_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z]{2,8}$").expect("valid pattern"));
static LONG_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z]{9,12}$").expect("valid pattern"));
static BARE_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^/[A-Za-z0-9_-]+/?$").expect("valid pattern"));
static CONSTANT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Z][A-Z0-9_]{2,15}$").expect("valid pattern"));

/// The last path segment of a spelling (`\` read as `/`, trailing `/` ignored).
fn basename(entity: &str) -> String {
    let normalized = entity.replace('\\', "/");
    let trimmed = normalized.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or("").to_string()
}

/// `(stem, extension)` of a basename when it has a known code extension.
fn split_code_extension(base: &str) -> Option<(&str, String)> {
    let (stem, ext) = base.rsplit_once('.')?;
    let ext = ext.to_lowercase();
    (!stem.is_empty() && CODE_EXTENSIONS.contains(&ext.as_str())).then_some((stem, ext))
}

/// The code extension of a spelling's basename, lower case (`src/parser.c` → `c`).
fn code_extension(entity: &str) -> Option<String> {
    split_code_extension(&basename(entity)).map(|(_, ext)| ext)
}

/// The soft key that groups spellings of one entity: the basename without a known code
/// extension, lower case (`src/main.zig` and `main.zig` → `main`).
pub fn entity_spelling_key(entity: &str) -> String {
    let base = basename(entity);
    match split_code_extension(&base) {
        Some((stem, _)) => stem.to_lowercase(),
        None => base.to_lowercase(),
    }
}

/// The non-empty `/`-separated parts of a spelling.
fn path_parts(entity: &str) -> Vec<String> {
    entity
        .replace('\\', "/")
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// The folders of a spelling, innermost last.
fn dir_segments(entity: &str) -> Vec<String> {
    let mut parts = path_parts(entity);
    parts.pop();
    parts
}

/// `("a", "src/x.py")` for a `git diff` spelling `a/src/x.py`.
fn diff_alias(entity: &str) -> Option<(String, String)> {
    let parts = path_parts(entity);
    (parts.len() >= 2 && (parts[0] == "a" || parts[0] == "b"))
        .then(|| (parts[0].clone(), parts[1..].join("/")))
}

/// `a/<path>` and `b/<path>` naming the same path.
fn is_diff_pair(a: &str, b: &str) -> bool {
    matches!((diff_alias(a), diff_alias(b)), (Some(x), Some(y)) if x.0 != y.0 && x.1 == y.1)
}

/// Each diff spelling whose other side is present, mapped to its path.
fn diff_resolved(entities: &[String]) -> HashMap<String, String> {
    let aliases: Vec<(String, Option<(String, String)>)> = entities
        .iter()
        .map(|e| (e.clone(), diff_alias(e)))
        .collect();
    let present: HashSet<(String, String)> =
        aliases.iter().filter_map(|(_, a)| a.clone()).collect();
    aliases
        .into_iter()
        .filter_map(|(e, alias)| {
            let (side, path) = alias?;
            let other = if side == "a" { "b" } else { "a" };
            present
                .contains(&(other.to_string(), path.clone()))
                .then_some((e, path))
        })
        .collect()
}

/// Whether two spellings can only be the same file: one key, no two different code
/// extensions, and one folder path a suffix of the other (or a diff's two sides).
pub fn same_file_spelling(a: &str, b: &str) -> bool {
    if entity_spelling_key(a) != entity_spelling_key(b) {
        return false;
    }
    if let (Some(x), Some(y)) = (code_extension(a), code_extension(b))
        && x != y
    {
        return false;
    }
    if is_diff_pair(a, b) {
        return true;
    }
    let (da, db) = (dir_segments(a), dir_segments(b));
    let (short, long) = if da.len() <= db.len() {
        (da, db)
    } else {
        (db, da)
    };
    short.is_empty() || long[long.len() - short.len()..] == short[..]
}

/// The distinct files among spellings of one basename (in the given order); a spelling that
/// could name two different files is in no cluster.
pub fn spelling_clusters(entities: &[String]) -> Vec<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for e in entities {
        if seen.insert(e.as_str()) {
            names.push(e.clone());
        }
    }
    let resolved = diff_resolved(&names);
    let spelled = |n: &String| resolved.get(n).cloned().unwrap_or_else(|| n.clone());
    let matches: HashMap<&str, HashSet<&str>> = names
        .iter()
        .map(|n| {
            let hosts = names
                .iter()
                .filter(|o| same_file_spelling(&spelled(n), &spelled(o)))
                .map(String::as_str)
                .collect();
            (n.as_str(), hosts)
        })
        .collect();
    let mut unambiguous: HashSet<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| {
            matches[n]
                .iter()
                .all(|host| matches[n].is_subset(&matches[host]))
        })
        .collect();
    let mut clusters = Vec::new();
    for n in &names {
        if !unambiguous.contains(n.as_str()) {
            continue;
        }
        let cluster: Vec<String> = names
            .iter()
            .filter(|o| {
                unambiguous.contains(o.as_str()) && matches[n.as_str()].contains(o.as_str())
            })
            .cloned()
            .collect();
        for c in &cluster {
            unambiguous.remove(c.as_str());
        }
        clusters.push(cluster);
    }
    clusters
}

/// The spelling a merged record carries for one entity: the most qualified path (most
/// folders), a diff alias only when nothing else is there, then the shortest, then by text.
pub fn canonical_spelling(cluster: &[String]) -> String {
    let resolved = diff_resolved(cluster);
    cluster
        .iter()
        .min_by_key(|e| {
            let spelled = resolved.get(*e).cloned().unwrap_or_else(|| (*e).clone());
            (
                resolved.contains_key(*e),
                std::cmp::Reverse(dir_segments(&spelled).len()),
                e.chars().count(),
                (*e).clone(),
            )
        })
        .cloned()
        .unwrap_or_default()
}

/// Every spelling mapped to its file's canonical spelling, given the spellings grouped by
/// [`entity_spelling_key`] (each group clustered in sorted order); a spelling that could be
/// two files is in no cluster and left out.
pub fn canonical_spellings(
    spellings_by_key: &BTreeMap<String, BTreeSet<String>>,
) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for spellings in spellings_by_key.values() {
        let sorted: Vec<String> = spellings.iter().cloned().collect();
        for cluster in spelling_clusters(&sorted) {
            let canonical = canonical_spelling(&cluster);
            for s in cluster {
                names.insert(s, canonical.clone());
            }
        }
    }
    names
}

/// Whether a hallway's two entities are spellings of one file.
pub fn is_self_link(entity_a: Option<&str>, entity_b: Option<&str>) -> bool {
    match (entity_a, entity_b) {
        (Some(a), Some(b)) => same_file_spelling(a, b),
        _ => false,
    }
}

/// A name that identifies no project: a short lower-case word, a harness tool, a generic
/// noun or repo file, a library reference, a bare one-folder path or a constant.
pub fn is_generic_entity(name: &str) -> bool {
    let text = name.trim();
    if SHORT_WORD.is_match(text) {
        return true;
    }
    if !text.contains('/') && text.contains('.') {
        let (head, tail) = text.rsplit_once('.').unwrap_or((text, ""));
        let tail = tail.to_lowercase();
        let is_source = SOURCE_EXTENSIONS.contains(&tail.as_str());
        if is_source && STOPLIST.contains(head.to_lowercase().as_str()) {
            return true;
        }
        let first = text.split('.').next().unwrap_or("").to_lowercase();
        if LIBRARY_NAMESPACES.contains(&first.as_str()) && !is_source {
            return true;
        }
    }
    if BARE_PATH.is_match(text) || CONSTANT.is_match(text) {
        return true;
    }
    if LONG_WORD.is_match(text) {
        return true;
    }
    STOPLIST.contains(text.trim_end_matches('/').to_lowercase().as_str())
}

/// The spellings that could be two different files (a bare `user.py` beside
/// `src/models/user.py` and `tests/models/user.py`).
pub fn ambiguous_spellings(spellings: &BTreeSet<String>) -> HashSet<String> {
    let mut by_key: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    for s in spellings {
        by_key.entry(entity_spelling_key(s)).or_default().push(s);
    }
    let mut out = HashSet::new();
    for group in by_key.values() {
        for s in group {
            let hosts: Vec<&&String> = group
                .iter()
                .filter(|o| **o != *s && same_file_spelling(s, o))
                .collect();
            let split = hosts
                .iter()
                .enumerate()
                .any(|(i, h1)| hosts[i + 1..].iter().any(|h2| !same_file_spelling(h1, h2)));
            if split {
                out.insert((*s).clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Vectors observed from 3.11's own functions.
    #[test]
    fn keys_and_generic_names_are_3_11s() {
        for (e, key) in [
            ("src/main.zig", "main"),
            ("/Users/x/src/main.zig", "main"),
            ("mcp_server.py", "mcp_server"),
            ("ChatStore.send", "chatstore.send"),
            ("README.MD", "readme"),
            ("a\\b\\c.py", "c"),
            ("dir/", "dir"),
        ] {
            assert_eq!(entity_spelling_key(e), key, "{e}");
        }
        for g in [
            "content",
            "main.zig",
            "app.js",
            "pathlib.Path",
            "console.log",
            "/app",
            "MESSAGES",
            "cancelled",
            "operations",
            "WebFetch",
            "compose.yml",
            "Server",
            "utils.py",
            "ab",
            "abcdefghi",
            "README.md",
            "node_modules/",
        ] {
            assert!(is_generic_entity(g), "{g} is generic");
        }
        for p in [
            "Content",
            "ChatStore",
            "src/main.zig",
            "store.baseURL",
            "internationalization",
            "x",
        ] {
            assert!(!is_generic_entity(p), "{p} is not generic");
        }
    }

    #[test]
    fn clusters_keep_distinct_files_apart() {
        assert_eq!(
            spelling_clusters(&strings(&[
                "user.py",
                "src/models/user.py",
                "tests/models/user.py"
            ])),
            vec![
                strings(&["src/models/user.py"]),
                strings(&["tests/models/user.py"])
            ]
        );
        assert_eq!(
            spelling_clusters(&strings(&["main.zig", "src/main.zig"])),
            vec![strings(&["main.zig", "src/main.zig"])]
        );
        assert_eq!(
            spelling_clusters(&strings(&["parser", "parser.c", "parser.h"])),
            vec![strings(&["parser.c"]), strings(&["parser.h"])]
        );
        assert!(same_file_spelling("a/src/x.py", "b/src/x.py"));
        assert!(!same_file_spelling("src/parser.c", "src/parser.h"));
        assert!(is_self_link(Some("main.zig"), Some("src/main.zig")));
        assert!(!is_self_link(None, Some("x")));
        let ambiguous = ambiguous_spellings(
            &["user.py", "src/models/user.py", "tests/models/user.py"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        );
        assert_eq!(ambiguous, HashSet::from(["user.py".to_string()]));
    }
}
