//! The release link's hot-code list (`link/hot-functions.txt`, see `link/README.md`) names
//! symbols as the linker sees them, and covers the server's hot paths.

use std::collections::HashSet;

fn hot_functions() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-functions.txt");
    std::fs::read_to_string(path).expect("examples/link/hot-functions.txt is in the repository")
}

#[test]
fn every_line_is_one_mangled_symbol_name() {
    let text = hot_functions();
    let mut seen = HashSet::new();
    for (i, name) in text.lines().enumerate() {
        // lld matches names exactly: a demangled name (`a::b`, spaces, generics) or a
        // blank line would silently match nothing.
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.$".contains(c)),
            "line {}: {name:?} is not a linker symbol name (write the map with --no-demangle)",
            i + 1
        );
        assert!(seen.insert(name), "line {}: {name} is listed twice", i + 1);
    }
    assert!(
        seen.len() > 1_000,
        "only {} names: the list covers far less than a server runs",
        seen.len()
    );
}

#[test]
fn the_list_covers_the_calls_of_the_bench() {
    let text = hot_functions();
    for (what, needle) in [
        ("Palace::search_with", "6Palace11search_with"),
        ("Palace::add_drawer", "6Palace10add_drawer"),
        ("the embedder's AVX-512 kernel", "8few_rows6avx512"),
        ("the SQLite knowledge graph", "mempalace_kg_sqlite"),
        ("the Lance store", "mempalace_store_lance"),
    ] {
        assert!(
            text.lines().any(|l| l.contains(needle)),
            "{what} is not in hot-functions.txt: regenerate it with scripts/hot_functions.py"
        );
    }
}
