//! The last resort: a line that says memory ran out in a wording none of the readers
//! above knows (`kind: other`), read where it can be, so that a text naming an
//! out-of-memory failure is never refused. The scanner takes such a line only when the
//! text holds no message of a known format (see `scan`).
//!
//! - The host's memory: the C library's `Cannot allocate memory` (XLA:CPU's JIT, a
//!   fork), LLVM's `Unable to allocate section memory!` and XLA:CPU's `Failed to satisfy
//!   suballocation request for N` (memory for compiled code), `std::bad_alloc`, Python's `MemoryError` and NumPy's `Unable to allocate
//!   3.45 GiB for an array with shape (…) and data type float64`, the kernel's `Out of
//!   memory: Killed process 1234 (python)` (older kernels: `Kill process … or sacrifice
//!   child`) and the shell's bare `Killed`, Colab's `Your session crashed after using
//!   all available RAM`.
//! - Any other error line saying `out of memory`: an error, failure or warning word
//!   beside it, not a question; and TensorFlow's `Dst tensor is not initialized` (a copy
//!   to the GPU that found no room).
//! - Colab's dialog `Your GPU is close to its memory limit. … Currently, 10.07 GB / 11.17
//!   GB is being used.`: a warning, with what is in use and the card's size.

use super::draft::Draft;
use super::fields::{after, size_after};
use super::model::OomKind;
use super::units;

/// Wordings of the host running out of memory.
const HOST: [&str; 12] = [
    "Cannot allocate memory",
    "Unable to allocate section memory",
    "suballocation request for ",
    "std::bad_alloc",
    // The kernel's OOM killer: `Out of memory: Killed process 1234 (python)`, and before
    // Linux 4.19 `Out of memory: Kill process 1234 (python3) score 266 or sacrifice
    // child`; the line before it says some task `invoked oom-killer`.
    "Out of memory: Kill",
    "out of memory: Kill",
    "invoked oom-killer",
    // Slurm's step daemon after the job's cgroup killed a task: `slurmstepd: error:
    // Detected 1 oom_kill event in StepId=23927666.batch. Some of the step tasks have
    // been OOM Killed.` (older releases: `oom-kill event(s)`).
    "oom_kill event",
    "oom-kill event",
    "crashed after using all available RAM",
    // NumPy's `Unable to allocate N for an array with shape (…)`, and its exception's
    // name where a note quotes the line cut before the shape.
    "for an array with shape",
    "ArrayMemoryError",
];

/// Wordings of XLA:CPU's JIT failing to map memory for a compiled program's code.
const JIT_CODE: [&str; 5] = [
    "JIT session error",
    "section memory",
    "suballocation request for ",
    "allocateMappedMemory",
    "LLVM compilation error",
];

/// Words that make a line mentioning `out of memory` an error rather than prose.
const ERROR_WORDS: [&str; 7] = [
    "error",
    "fail",
    "exception",
    "warn",
    "fatal",
    "abort",
    "killed",
];

/// A line in a wording the other readers do not know, or `None`.
pub fn headline(body: &str) -> Option<Draft> {
    if let Some(draft) = usage_warning(body) {
        return Some(draft);
    }
    let host = host_failure(body);
    if !host && !device_error(body) {
        return None;
    }
    let mut draft = Draft::new(OomKind::Other, true);
    let m = &mut draft.msg;
    if host {
        m.memory_space = Some("host".into());
        if JIT_CODE.iter().any(|w| body.contains(w)) {
            m.requested_op = Some(super::short::JIT_CODE_OP.into());
        }
    }
    if let Some(rest) = after(body, "Unable to allocate ") {
        // NumPy: `Unable to allocate 3.45 GiB for an array with shape (30000, 30000) and
        // data type float32`.
        if body.contains(NUMPY_TAIL) || body.contains("ArrayMemoryError") {
            m.requested_op = Some(super::short::NUMPY_ARRAY_OP.into());
        }
        m.requested_bytes = units::size_exact_prefix(rest, true).map(|s| s.0);
        m.requested_shape = after(rest, "with shape ").and_then(|s| {
            let end = s.find(')')?;
            s.starts_with('(')
                .then(|| super::fields::bounded(s.get(..=end).unwrap_or(s)))
        });
        m.requested_dtype = after(rest, "data type ")
            .and_then(super::fields::word)
            .map(|w| w.trim_end_matches(['.', ',']).to_owned());
    } else {
        // Graphcore's Poplar: `Out of memory. Single stream of length 149766584 in
        // bufferIndex 1`, one host-to-IPU stream's buffer in bytes.
        m.requested_bytes = [
            "allocate ",
            "allocating ",
            "alloc ",
            "Single stream of length ",
            "suballocation request for ",
        ]
        .iter()
        .find_map(|k| units::size_exact_prefix(after(body, k)?, true))
        .map(|s| s.0);
    }
    Some(draft)
}

/// Whether a line says the host ran out of RAM: a line of its own, never the wrapped
/// tail of the line before (a warning of a large allocation, then `terminate called
/// after throwing an instance of 'std::bad_alloc'`). NumPy's shape on a line of its own
/// is the tail of its request ([`numpy_cut`]).
pub fn host_failure(body: &str) -> bool {
    let numpy_tail = body.starts_with(NUMPY_TAIL);
    (HOST.iter().any(|w| body.contains(w)) && !numpy_tail)
        || python_memory_error(body)
        || killed(body)
}

/// How NumPy's message goes on after its size: `Unable to allocate 4.47 GiB` / `for an
/// array with shape (12, 50000000) and data type float64`.
const NUMPY_TAIL: &str = "for an array";

/// Whether `body` is NumPy's request broken before its shape: the next line is its tail.
pub fn numpy_cut(body: &str) -> bool {
    body.contains("Unable to allocate ") && !body.contains(NUMPY_TAIL)
}

/// Python's `MemoryError` raised (the line starts with it, or names it as the exception).
fn python_memory_error(body: &str) -> bool {
    body.starts_with("MemoryError") || body.contains("builtins.MemoryError")
}

/// The shell's `Killed` (`已杀死` in a Chinese locale) alone on its line, or ending a
/// progress bar's line it was printed after: the process got SIGKILL, which the kernel's
/// out-of-memory killer sends when the host's RAM runs out.
fn killed(body: &str) -> bool {
    let line = body.trim();
    KILLED.iter().any(|word| {
        line == *word
            || line
                .strip_suffix(word)
                .is_some_and(|bar| bar.ends_with(' ') && bar.contains("%|"))
    }) || job_killed(line)
}

/// The shell's report of a job it ran that got SIGKILL: a script's `./run.sh: line 23:
/// 172990 Killed                  python3 train.py …` (the process id before the word),
/// or an interactive shell's `[1]+  Killed                  python3 train.py`.
fn job_killed(line: &str) -> bool {
    if !line.contains("Killed") {
        return false;
    }
    if script_killed_after_text(line) {
        return true;
    }
    let mut words = line.split_whitespace().take(8);
    let first = words.next().unwrap_or("");
    let job = first.starts_with('[') && first.trim_end_matches(['+', '-']).ends_with(']');
    let (mut before_pid, mut pid) = ("", first);
    while let Some(word) = words.next() {
        let by_script = before_pid.ends_with(':') && pid.bytes().all(|b| b.is_ascii_digit());
        let by_job = job && pid == first;
        if word == "Killed" && (by_script || by_job) {
            // The command it ran follows.
            return words.next().is_some();
        }
        (before_pid, pid) = (pid, word);
    }
    false
}

/// The script's report printed after other text on the same line, as after a progress
/// bar that ended without a line break (`…12.60it/s, loss=0.0986]train.sh: line 42:
/// 1208020 Killed                  python train.py`): `line N: PID Killed` and the
/// command after it.
fn script_killed_after_text(line: &str) -> bool {
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    line.match_indices("Killed").any(|(at, word)| {
        let before = line.get(..at).unwrap_or("");
        let last: Vec<&str> = before.split_whitespace().rev().take(3).collect();
        let [pid, number, "line"] = last.as_slice() else {
            return false;
        };
        let command = line.get(at + word.len()..).unwrap_or("");
        digits(pid)
            && number.strip_suffix(':').is_some_and(digits)
            && command.starts_with(' ')
            && !command.trim().is_empty()
    })
}

/// Whether the shell's `Killed` follows a host memory warning on its own line, as when a
/// log quoted in prose runs the warning and the next line together (`"Allocation of N
/// exceeds 10% of free system memory. Killed" indicates …`).
pub fn killed_after_warning(body: &str) -> bool {
    let Some(rest) = super::fields::after(body, "system memory.") else {
        return false;
    };
    let rest = rest.trim_start();
    KILLED.iter().any(|word| {
        rest.strip_prefix(word)
            .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
    })
}

/// The shell's word for a process killed by a signal, in the locales seen, and as users
/// retype it (`killed`).
const KILLED: [&str; 3] = ["Killed", "killed", "已杀死"];

/// TensorFlow failing to copy a tensor to the GPU for want of room there: `Failed copying
/// input tensor from …CPU:0 to …GPU:0 in order to run …: Dst tensor is not initialized.`
const NO_ROOM_FOR_COPY: &str = "Dst tensor is not initialized";

/// An error line that says the device (or whatever it is) ran out of memory.
fn device_error(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    let says = [
        "out of memory",
        "outofmemory",
        "out_of_memory",
        "out of gpu memory",
        "out_of_device_memory",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // An error word beside it, or the size it failed to allocate: a text that says memory
    // ran out and gives a size is read, even in prose (`the terminal presented the "Ran
    // out of GPU memory when allocating 0 bytes for..."`, UPC-tf#4).
    let says_so = says
        && !body.trim_end().ends_with('?')
        && (ERROR_WORDS.iter().any(|w| lower.contains(w)) || states_request(body));
    says_so || body.contains(NO_ROOM_FOR_COPY)
}

/// Whether `allocate N` / `allocating N` with a size follows in the line.
fn states_request(body: &str) -> bool {
    ["allocate ", "allocating "].iter().any(|k| {
        after(body, k)
            .and_then(|r| units::size_exact_prefix(r, true))
            .is_some()
    })
}

/// Colab's dialog: the GPU's memory in use and its size, a warning (nothing failed).
fn usage_warning(body: &str) -> Option<Draft> {
    if !body.contains("close to its memory limit") {
        return None;
    }
    let mut draft = Draft::new(OomKind::Other, false);
    let rest = after(body, "Currently, ")?;
    draft.msg.used_bytes = units::size_prefix(rest, false).map(|s| s.0);
    draft.msg.capacity_bytes = size_after(rest, "/ ");
    Some(draft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_host_wordings() {
        let d = headline("JIT session error: Cannot allocate memory").unwrap();
        assert_eq!(d.msg.memory_space.as_deref(), Some("host"));
        assert_eq!(
            d.msg.requested_op.as_deref(),
            Some(super::super::short::JIT_CODE_OP)
        );
        assert!(d.failure);
        let d = headline("2025-09-24 12:58:01.943106: E external/xla/xla/backends/cpu/codegen/contiguous_section_memory_manager.cc:139] Failed to satisfy suballocation request for 2869").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(2869));
        assert_eq!(
            d.msg.requested_op.as_deref(),
            Some(super::super::short::JIT_CODE_OP)
        );
        let d = headline("std::bad_alloc").unwrap();
        assert_eq!(d.msg.requested_op, None);
        let d = headline("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.35 GiB for an array with shape (30000, 30000) and data type float32").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(3_597_035_110));
        assert_eq!(d.msg.requested_shape.as_deref(), Some("(30000, 30000)"));
        assert_eq!(d.msg.requested_dtype.as_deref(), Some("float32"));
        let d = headline("`numpy.core._exceptions._ArrayMemoryError: Unable to allocate 306. GiB`")
            .unwrap();
        assert_eq!(d.msg.requested_bytes, Some(328_564_998_144));
        assert_eq!(d.msg.memory_space.as_deref(), Some("host"));
        assert_eq!(
            d.msg.requested_op.as_deref(),
            Some(super::super::short::NUMPY_ARRAY_OP)
        );
        assert!(headline("MemoryError").is_some());
        assert!(headline("Killed").is_some());
        assert!(headline("Killed the bug").is_none());
        assert!(headline("已杀死").is_some());
        assert!(headline("loss: 4.1:  10%|███▍        Killed").is_some());
        assert!(headline("the process was Killed").is_none());
        assert!(headline("./mk-word2vec-fasttext.sh: line 23: 172990 Killed                  python3 src/train_embeddings.py --corpus x").is_some());
        assert!(headline("[1]+  Killed                  python3 train.py").is_some());
        assert!(headline("2 Killed").is_none());
        // After a progress bar that ended without a line break (heldout46/01, 08).
        assert!(headline("Epoch 1:  30%|███       | 13848/45694 [16:17<42:07, 12.60it/s, loss=0.0986]train.sh: line 42: 1208020 Killed                  python train.py").is_some());
        assert!(headline(
            "0/3 [00:00<?, ?it/s]start.sh: line 4:     8 Killed                  python -u run.py"
        )
        .is_some());
        assert!(headline("at line 4: 8 Killed").is_none());
        let d = headline("slurmstepd: error: Detected 1 oom_kill event in StepId=23927666.batch. Some of the step tasks have been OOM Killed.").unwrap();
        assert_eq!(d.msg.memory_space.as_deref(), Some("host"));
        assert!(headline("we saw 3 Killed processes").is_none());
        assert!(killed_after_warning(
            "The error \"Allocation of 17198850112 exceeds 10% of free system memory. Killed\" indicates"
        ));
        assert!(killed_after_warning(
            "Allocation of 17198850112 exceeds 10% of free system memory. Killed"
        ));
        assert!(!killed_after_warning(
            "Allocation of 17198850112 exceeds 10% of free system memory. Killer app"
        ));
        assert!(!killed_after_warning(
            "Allocation of 17198850112 exceeds 10% of free system memory."
        ));
        assert!(headline("raise MemoryErrorHandler").is_none());
    }

    #[test]
    fn reads_error_lines_but_not_questions() {
        let d =
            headline("node06:632909:635501 [6] alloc.h:41 NCCL WARN Cuda failure 'out of memory'")
                .unwrap();
        assert_eq!((d.msg.kind, d.msg.memory_space), (OomKind::Other, None));
        assert!(headline("Why does my GPU run out of memory? Any error?").is_none());
        assert!(headline("out of memory? no.").is_none());
        assert!(headline("it runs out of memory on big inputs").is_none());
        let d = headline("When I ran the \"main.py\", the terminal presented the \"Ran out of GPU memory when allocating 0 bytes for...\"").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(0));
        assert!(headline(
            "[Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY"
        )
        .is_some());
        assert!(headline("InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized.").is_some());
    }

    #[test]
    fn reads_colabs_dialog() {
        let d = headline("Your GPU is close to its memory limit. You will not be able to use any additional memory in this session. Currently, 10.07 GB / 11.17 GB is being used.").unwrap();
        assert!(!d.failure);
        assert_eq!(d.msg.used_bytes, Some(10_812_580_168));
        assert_eq!(d.msg.capacity_bytes, Some(11_993_696_174));
    }
}
