//! The real captures tests run on: the committed fixtures (one folder each) and the
//! shared captures beside the checkout.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every `.xplane.pb` under `tests/fixtures/*/` and in `../shared/captures`, sorted.
pub fn all() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = std::fs::read_dir(root.join("tests/fixtures"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir());
    let mut files: Vec<PathBuf> = fixtures
        .chain([root.join("../shared/captures")])
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
        .collect();
    files.sort();
    files
}

/// The committed fixtures only (present in every checkout).
pub fn committed() -> Vec<PathBuf> {
    all()
        .into_iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "fixtures"))
        .collect()
}
