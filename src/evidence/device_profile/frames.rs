//! Which frame of a sample's Python stack its bytes are attributed to.
//!
//! The rule, applied to each stack from its innermost frame outwards:
//!
//! 1. the first frame of the program's own code ([`Origin::User`]);
//! 2. if there is none, the first frame of an installed package other than JAX and
//!    NumPy ([`Origin::Package`]: Flax, Optax, or the user's own code installed with
//!    `pip install .`), which is the nearest caller the user can act on;
//! 3. if every frame is JAX, NumPy or the standard library ([`Origin::Internal`]),
//!    the innermost frame, marked as not the user's.
//!
//! Only the file path decides the origin, because that is all a frame records:
//! - installed code lies under a `site-packages` or `dist-packages` folder, and the
//!   folder (or `.py` file) right below it names the package;
//! - the standard library lies under `lib/pythonX.Y/` (`Lib\` on Windows) outside
//!   `site-packages`, or is a frozen module (`<frozen runpy>`);
//! - JAX run from a source checkout is recognised by its `jax/_src/` and `jaxlib/`
//!   folders;
//! - everything else is the user's: scripts, notebooks (`/tmp/ipykernel_*/*.py`),
//!   `<stdin>`, `<string>`, editable installs.

/// Where the code of one stack frame comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The program's own code.
    User,
    /// An installed package other than JAX and NumPy.
    Package,
    /// JAX, jaxlib, NumPy or Python's standard library.
    Internal,
}

/// Installed packages whose frames are never the place the user would change: the
/// array libraries that allocate on the caller's behalf.
const INTERNAL_PACKAGES: &[&str] = &["jax", "jaxlib", "numpy"];

/// The origin of a frame whose code lies in the file `path`.
pub(crate) fn origin(path: &str) -> Origin {
    if path.starts_with("<frozen ") {
        return Origin::Internal;
    }
    let segments: Vec<&str> = path.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    let installed = segments
        .iter()
        .rposition(|s| *s == "site-packages" || *s == "dist-packages");
    if let Some(at) = installed {
        let package = segments.get(at.saturating_add(1)).copied().unwrap_or("");
        return if is_internal_package(package) {
            Origin::Internal
        } else {
            Origin::Package
        };
    }
    if is_standard_library(&segments) || is_jax_checkout(&segments) {
        return Origin::Internal;
    }
    Origin::User
}

/// `jax`, `jaxlib`, `numpy`, or a plugin such as `jax_cuda12_plugin`; a single-file
/// module counts by its name without `.py`.
fn is_internal_package(name: &str) -> bool {
    let name = name.strip_suffix(".py").unwrap_or(name);
    INTERNAL_PACKAGES.contains(&name) || name.starts_with("jax_")
}

/// `…/lib/python3.11/…` (Linux, macOS, conda) or `…\Python311\Lib\…` (Windows).
fn is_standard_library(segments: &[&str]) -> bool {
    segments.windows(2).any(|pair| match pair {
        [parent, folder] => {
            let unix = (*parent == "lib" || *parent == "lib64") && is_python_version(folder);
            let windows = folder.eq_ignore_ascii_case("lib")
                && is_python_version(&parent.to_ascii_lowercase());
            unix || windows
        }
        _ => false,
    })
}

/// `python3.11`, `python3.13t`, `python311` (Windows, lowered).
fn is_python_version(folder: &str) -> bool {
    folder
        .strip_prefix("python")
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit())
}

/// JAX imported from a clone of its repository rather than an installed wheel.
fn is_jax_checkout(segments: &[&str]) -> bool {
    segments.contains(&"jaxlib")
        || segments
            .windows(2)
            .any(|pair| matches!(pair, ["jax", "_src"]))
}

/// The frame chosen for one stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Choice {
    /// Position in the stack, innermost frame first: also the number of frames passed
    /// over as library code to reach it.
    pub index: usize,
    /// Whether the frame is the program's own code (rule 1).
    pub user_code: bool,
}

/// Applies the rule to the origins of a stack's frames, innermost first; `None` for an
/// empty stack (JAX records none when Python tracebacks are off).
pub(crate) fn choose(origins: impl IntoIterator<Item = Origin>) -> Option<Choice> {
    let mut package = None;
    let mut any = false;
    for (index, origin) in origins.into_iter().enumerate() {
        any = true;
        match origin {
            Origin::User => {
                return Some(Choice {
                    index,
                    user_code: true,
                })
            }
            Origin::Package if package.is_none() => package = Some(index),
            _ => {}
        }
    }
    match package {
        Some(index) => Some(Choice {
            index,
            user_code: false,
        }),
        None if any => Some(Choice {
            index: 0,
            user_code: false,
        }),
        None => None,
    }
}

/// The last component of a path, as the rest of the report names files.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// `file.py:LINE function`.
pub(crate) fn frame_text(path: &str, line: i64, function: &str) -> String {
    let file = match file_name(path) {
        "" => "<unknown file>",
        name => name,
    };
    format!("{file}:{line} {function}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_jax_numpy_and_plugins_are_internal() {
        for path in [
            "/work/venv/lib/python3.11/site-packages/jax/_src/interpreters/pxla.py",
            "/usr/local/lib/python3.12/dist-packages/jaxlib/xla_client.py",
            "/opt/conda/lib/python3.11/site-packages/numpy/core/numeric.py",
            "/venv/lib/python3.11/site-packages/jax_cuda12_plugin/__init__.py",
            r"C:\venv\Lib\site-packages\jax\_src\numpy\array_creation.py",
        ] {
            assert_eq!(origin(path), Origin::Internal, "{path}");
        }
    }

    #[test]
    fn other_installed_packages_are_packages() {
        for path in [
            "/venv/lib/python3.11/site-packages/flax/linen/module.py",
            "/venv/lib/python3.11/site-packages/optax/_src/transform.py",
            "/venv/lib/python3.11/site-packages/six.py",
            // A project installed without -e: its frames are a package's.
            "/venv/lib/python3.11/site-packages/mytrainer/loop.py",
        ] {
            assert_eq!(origin(path), Origin::Package, "{path}");
        }
    }

    #[test]
    fn the_standard_library_and_frozen_modules_are_internal() {
        for path in [
            "/usr/lib/python3.11/contextlib.py",
            "/opt/conda/lib/python3.10/runpy.py",
            "/usr/lib64/python3.13t/threading.py",
            r"C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\runpy.py",
            "<frozen runpy>",
        ] {
            assert_eq!(origin(path), Origin::Internal, "{path}");
        }
    }

    #[test]
    fn a_jax_source_checkout_is_internal() {
        assert_eq!(origin("/home/me/src/jax/jax/_src/api.py"), Origin::Internal);
        assert_eq!(
            origin("/home/me/src/jax/jaxlib/xla_client.py"),
            Origin::Internal
        );
    }

    #[test]
    fn scripts_notebooks_and_consoles_are_the_users() {
        for path in [
            "/home/me/project/train.py",
            "train.py",
            "/tmp/ipykernel_4242/3012345678.py",
            "<stdin>",
            "<string>",
            // A folder merely named like a library is not one.
            "/home/me/numpy_experiments/jax/model.py",
            "/home/me/lib/train.py",
            "/home/me/python/lib/train.py",
        ] {
            assert_eq!(origin(path), Origin::User, "{path}");
        }
    }

    #[test]
    fn the_innermost_user_frame_wins() {
        use Origin::*;
        let chosen = choose([Internal, Internal, Package, User, User]);
        assert_eq!(
            chosen,
            Some(Choice {
                index: 3,
                user_code: true
            })
        );
    }

    #[test]
    fn without_user_code_the_innermost_package_frame_is_taken() {
        use Origin::*;
        let chosen = choose([Internal, Package, Internal, Package]);
        assert_eq!(
            chosen,
            Some(Choice {
                index: 1,
                user_code: false
            })
        );
    }

    #[test]
    fn an_all_internal_stack_falls_back_to_its_innermost_frame() {
        use Origin::*;
        assert_eq!(
            choose([Internal, Internal]),
            Some(Choice {
                index: 0,
                user_code: false
            })
        );
        assert_eq!(choose([]), None);
    }

    #[test]
    fn frames_read_file_line_function() {
        assert_eq!(
            frame_text("/home/me/project/train.py", 88, "main"),
            "train.py:88 main"
        );
        assert_eq!(
            frame_text(r"C:\p\train.py", 3, "<module>"),
            "train.py:3 <module>"
        );
        assert_eq!(frame_text("", 0, "f"), "<unknown file>:0 f");
    }
}
