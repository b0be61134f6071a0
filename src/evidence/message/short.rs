//! One-line messages and the phrases that announce any message: a bare
//! `RESOURCE_EXHAUSTED`, `Out of memory while trying to allocate N bytes.` (XLA:GPU, before
//! its buffer-assignment report), `Out of memory allocating N bytes.`, `Failed to allocate
//! request for X (NB) on device ordinal K`, TensorFlow's `OOM when allocating tensor with
//! shape[…] and type float on /job:…/device:GPU:0 by allocator GPU_0_bfc`, `failed to
//! allocate memory`; and XLA's rematerialization warning.

use super::draft::Draft;
use super::fields::{after, bounded, count_after, size_after, word};
use super::model::{AllocatorStats, OomKind, RematWarning};
use super::units;

/// Phrases that announce an out-of-memory message (any family). A line without one is
/// never a headline, which keeps the scan over a long log to a few substring searches.
const TRIGGERS: [&str; 23] = [
    "RESOURCE_EXHAUSTED",
    "Resource exhausted",
    "ResourceExhaustedError",
    "Ran out of memory in memory space",
    "TensorCore Hbm usage",
    "Aborting compilation early",
    "enough memory. Requires",
    "Attempting to allocate",
    "Attempting to reserve",
    "would exceed memory",
    "an out of memory trying to allocate",
    "an out of memory tying to allocate",
    "Can't reduce memory use below",
    // The same with the word broken where a log was wrapped (alphafold3#697).
    "Can't reduce memory use be low",
    // Host memory warnings, not failures: TensorFlow's CPU allocator (`Allocation of N
    // exceeds 10% of free system memory.`) and tcmalloc (`tcmalloc: large alloc N bytes
    // == 0x…`, also seen with its first letter lost). tcmalloc's `== (nil)` is the
    // allocation failing.
    "exceeds 10% of",
    "malloc: large alloc",
    "Out of memory while trying to allocate",
    "Out of memory allocating",
    "Failed to allocate request for",
    "OOM when allocating tensor",
    "failed to allocate memory",
    "CUDA_ERROR_OUT_OF_MEMORY",
    "bytes for new constant",
];

/// The `memory_space` of a library's scratch workspace with a limit of its own (cuDNN's
/// autotuner, 4 GiB by default in TensorFlow: `TF_CUDNN_WORKSPACE_LIMIT_IN_MB`).
pub const WORKSPACE: &str = "workspace";

/// The `requested_op` of XLA:GPU's `Failed to allocate N bytes for new constant`: what
/// asked is the loading of the program's constants, before it runs.
pub const CONSTANT_OP: &str = "constant";
/// `requested_op` of a TPU runtime failure to load a compiled program (`Error loading
/// program`, a reservation at the bottom of memory).
pub const PROGRAM_LOAD_OP: &str = "program load";
/// `requested_op` of XLA:CPU's JIT failing to map memory for compiled code (`Failed to
/// satisfy suballocation request for 2869`, `Unable to allocate section memory!`).
pub const JIT_CODE_OP: &str = "compiled code";
/// `requested_op` of NumPy's `Unable to allocate N for an array with shape (…)`
/// (`_ArrayMemoryError`): NumPy allocates array by array, so the request is one array.
pub const NUMPY_ARRAY_OP: &str = "NumPy array";

/// The compiled program a line names: the TPU runtime's `Error loading program
/// 'jit_f'`, XLA's `[executable_name='jit_f']` after a failure.
pub fn program_named(body: &str) -> Option<String> {
    ["Error loading program '", "executable_name='"]
        .iter()
        .find_map(|p| after(body, p))
        .and_then(|r| r.split('\'').next())
        .filter(|name| !name.is_empty() && !name.contains(char::is_whitespace))
        .map(bounded)
}

pub fn has_trigger(body: &str) -> bool {
    TRIGGERS.iter().any(|t| body.contains(t))
        || super::scoped::TRIGGERS.iter().any(|t| body.contains(t))
        || super::driver::TRIGGERS.iter().any(|t| body.contains(t))
        || super::foreign::TRIGGERS.iter().any(|t| body.contains(t))
        || super::neuron::TRIGGERS.iter().any(|t| body.contains(t))
        || super::tpu::has_trigger(body)
}

/// A one-line message (the last resort after the TPU and BFC headlines).
pub fn headline(body: &str) -> Option<Draft> {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.error_code = error_code(body);
    if let Some(rest) = after(body, "Out of memory while trying to allocate ")
        .or_else(|| after(body, "Out of memory allocating "))
    {
        m.requested_bytes = units::size_exact_prefix(rest, false).map(|s| s.0);
        // CuPy's memory pool: `Out of memory allocating 1,600,000,000 bytes (allocated so
        // far: 2,281,307,136 bytes).`
        m.used_bytes = count_after(rest, "(allocated so far: ");
        // Newer XLA names the allocator and the device: `… allocate 1.95GiB with allocator
        // GPU_0_bfc on device 0.`
        if let Some(name) = after(rest, "with allocator ").and_then(word) {
            m.allocator = Some(AllocatorStats::named(name.trim_end_matches(['.', ','])));
            m.device_ordinal = after(rest, " on device ").and_then(leading_u32);
        }
    } else if let Some(rest) = after(body, "Failed to allocate request for ") {
        m.requested_bytes = units::size_exact_prefix(rest, false).map(|s| s.0);
        m.device_ordinal = after(rest, "on device ordinal ").and_then(leading_u32);
    } else if body.contains("OOM when allocating tensor") {
        tensorflow_tensor(&mut draft, body);
    } else if let Some(rest) =
        after(body, "Failed to allocate ").filter(|r| r.contains("for new constant"))
    {
        // XLA:GPU placing a module's constants when it loads the executable.
        m.requested_bytes = units::size_exact_prefix(rest, true).map(|s| s.0);
        m.requested_op = Some(CONSTANT_OP.into());
    } else if let Some(rest) = after(body, "failed to allocate buffer of length ") {
        // IREE's HAL on Vulkan: `VK_ERROR_OUT_OF_DEVICE_MEMORY; vmaCreateBuffer; failed to
        // allocate buffer of length 26953666560`.
        m.requested_bytes = units::size_exact_prefix(rest, true).map(|s| s.0);
    } else if let Some(rest) =
        after(body, "Allocating ").filter(|r| r.contains("exceeds the memory limit of "))
    {
        // A scratch allocator with a limit of its own: cuDNN's autotuner profiling one
        // engine after another (`Profiling failure on CUDNN engine 1#TC: RESOURCE_EXHAUSTED:
        // Allocating N bytes exceeds the memory limit of M bytes.`).
        m.requested_bytes = units::size_exact_prefix(rest, true).map(|s| s.0);
        m.capacity_bytes = after(rest, "exceeds the memory limit of ")
            .and_then(|r| units::size_exact_prefix(r, true))
            .map(|s| s.0);
        draft.engine_try = body.contains("Profiling failure on");
        if draft.engine_try {
            m.memory_space = Some(WORKSPACE.into());
        }
    } else if let Some(bytes) = host_allocation_reported(body) {
        m.requested_bytes = Some(bytes);
        m.memory_space = Some("host".into());
        draft.failure = body.contains(NIL);
        return Some(draft);
    } else if !body.contains("failed to allocate memory") && !resource_exhausted(body) {
        return None;
    }
    set_op(&mut draft, body);
    Some(draft)
}

/// tcmalloc's address for an allocation it could not make.
const NIL: &str = "== (nil)";

/// The size of a large host allocation a warning reports: TensorFlow's `Allocation of N
/// exceeds 10% of (free) system memory`, tcmalloc's `large alloc N bytes == 0x…` (not
/// one that failed: see [`tcmalloc`]).
pub(super) fn host_allocation(body: &str) -> Option<u64> {
    if let Some(rest) = after(body, "Allocation of ").filter(|r| r.contains("exceeds 10% of")) {
        return units::size_exact_prefix(rest, true).map(|s| s.0);
    }
    tcmalloc(body)
        .filter(|&(_, failed)| !failed)
        .map(|(bytes, _)| bytes)
}

/// The size of any large host allocation a line reports, made or failed: the warnings
/// of [`host_allocation`], and tcmalloc's `large alloc N bytes == (nil)`.
pub(super) fn host_allocation_reported(body: &str) -> Option<u64> {
    host_allocation(body).or_else(|| tcmalloc(body).map(|(bytes, _)| bytes))
}

/// tcmalloc's `large alloc N bytes == …`: the size, and whether the allocation failed
/// (`== (nil)`).
fn tcmalloc(body: &str) -> Option<(u64, bool)> {
    let rest = after(body, "malloc: large alloc ")?;
    let bytes = units::size_exact_prefix(rest, true)?.0;
    Some((bytes, body.contains(NIL)))
}

fn resource_exhausted(body: &str) -> bool {
    [
        "RESOURCE_EXHAUSTED",
        "Resource exhausted",
        "ResourceExhaustedError",
    ]
    .iter()
    .any(|t| body.contains(t))
}

/// `OOM when allocating tensor with shape[2,480,640,66] and type float on
/// /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc` (TensorFlow 1.x
/// prints `of shape [4096]`).
fn tensorflow_tensor(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    let shape = after(body, "with shape").or_else(|| after(body, "of shape"));
    m.requested_shape = shape.and_then(|s| {
        let s = s.trim_start();
        if s.starts_with("dim {") {
            return Some(bounded(proto_shape(s)));
        }
        let end = s.find(']')?;
        s.strip_prefix('[')
            .map(|_| bounded(s.get(..=end).unwrap_or(s)))
    });
    // The type ends a sentence where a note quotes the line (`… and type double`.`).
    m.requested_dtype = after(body, "and type ")
        .and_then(word)
        .map(|w| w.trim_end_matches(['.', ',', ';', '`']).to_owned())
        .filter(|w| !w.is_empty());
    m.requested_bytes_from_shape = m
        .requested_shape
        .as_deref()
        .zip(m.requested_dtype.as_deref())
        .and_then(|(shape, dtype)| tensor_bytes(&listed_dims(shape)?, dtype));
    // The device path, read with its spaces taken out (`on/job: localhost/replica:
    // 0/task: 0/device: GPU: 0` as a forum reflowed it).
    let device: String = after(body, "/device:")
        .or_else(|| after(body, "/device: "))
        .or_else(|| after(body, "/gpu:"))
        .unwrap_or("")
        .chars()
        .filter(|c| *c != ' ')
        .take(16)
        .collect();
    // Any device type: `GPU:0`, `CPU:0`, Intel's `XPU:0`, DirectML's `DML:0`.
    let ordinal = device
        .split_once(':')
        .filter(|(kind, _)| !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_uppercase()))
        .map(|(_, ordinal)| ordinal)
        .or_else(|| after(body, "/gpu:").map(|_| device.as_str()));
    m.device_ordinal = ordinal.and_then(leading_u32);
    if device.starts_with("CPU:") || after(body, "by allocator cpu").is_some() {
        m.memory_space = Some("host".into());
    }
    if let Some(name) = after(body, "by allocator ").and_then(word) {
        // Quoting and Markdown emphasis closed right after it (`GPU_0_bfc*`) are not
        // the name's.
        let name = name.trim_end_matches([',', '.', '"', '\'', '`', '*']);
        // A BFC allocator's name ends in `_bfc`; letters glued after it are a paste's
        // (`GPU_0_bfcbash`, a code fence's language run into the line).
        let name = match name.find("_bfc") {
            Some(at) if name[at + 4..].bytes().all(|b| b.is_ascii_lowercase()) => &name[..at + 4],
            _ => name,
        }
        .to_string();
        // Intel's extension for TensorFlow names its allocator in two words.
        let name = if name == "Simple" && after(body, "by allocator Simple allocator").is_some() {
            "Simple allocator".to_owned()
        } else {
            name
        };
        m.allocator = Some(AllocatorStats::named(name));
    }
}

/// A shape printed as its protocol buffer (TensorFlow 0.x: `shapedim { size: 10000 } dim
/// { size: 14 }`): up to what follows it.
fn proto_shape(s: &str) -> &str {
    let mut end = 0;
    while let Some(rest) = s.get(end..) {
        let skipped = rest.len() - rest.trim_start().len();
        let Some(close) = rest
            .trim_start()
            .strip_prefix("dim {")
            .and_then(|dim| dim.find('}'))
        else {
            break;
        };
        end += skipped + "dim {".len() + close + 1;
    }
    s.get(..end).unwrap_or(s)
}

/// A shape as `[a,b,c]`, whether printed so or as protocol-buffer dims.
fn listed_dims(shape: &str) -> Option<String> {
    if shape.starts_with('[') {
        return Some(shape.to_string());
    }
    let dims: Vec<&str> = shape
        .split("size:")
        .skip(1)
        .map(|d| {
            d.trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap_or("")
        })
        .collect();
    Some(format!("[{}]", dims.join(",")))
}

/// TensorFlow's `[Op:Mul]` names the operation that failed.
fn set_op(draft: &mut Draft, body: &str) {
    if draft.msg.requested_op.is_none() {
        draft.msg.requested_op = after(body, "[Op:")
            .and_then(|r| r.split(']').next())
            .filter(|op| !op.is_empty() && !op.contains(' '))
            .map(bounded);
    }
}

/// The number of elements of a tensor's printed shape (`[3,3,512,512]`, or a proto's
/// `dim { size: 3 } …`).
pub(super) fn elements_of(shape: &str) -> Option<u64> {
    tensor_bytes(&listed_dims(shape)?, "int8")
}

/// The bytes of a TensorFlow tensor `[2,480,640,66]` of `float`: its elements times the
/// element's size, when the type is one TensorFlow names (`None` for an unknown type, a
/// dimension that is not a number, or an overflow).
fn tensor_bytes(shape: &str, dtype: &str) -> Option<u64> {
    let element: u64 = match dtype.trim_end_matches([',', '.']) {
        "bool" | "int8" | "uint8" | "qint8" | "quint8" | "float8_e4m3fn" | "float8_e5m2" => 1,
        "half" | "bfloat16" | "int16" | "uint16" | "qint16" | "quint16" => 2,
        "float" | "int32" | "uint32" | "qint32" => 4,
        "double" | "int64" | "uint64" | "complex64" => 8,
        "complex128" => 16,
        _ => return None,
    };
    let dims = shape.strip_prefix('[')?.strip_suffix(']')?;
    if dims.trim().is_empty() {
        return Some(element); // a scalar
    }
    dims.split(',')
        .map(|d| d.trim().parse::<u64>().ok())
        .try_fold(element, |bytes, d| bytes.checked_mul(d?))
}

pub(super) fn leading_u32(text: &str) -> Option<u32> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    text.get(..digits)?.parse().ok()
}

/// XLA's error code in `RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: …`: an `E` and four
/// digits, then a colon, standing alone.
pub fn error_code(body: &str) -> Option<String> {
    body.match_indices('E').find_map(|(at, _)| {
        let code = body.get(at..at + 5)?;
        let alone = body
            .get(..at)
            .and_then(|b| b.chars().next_back())
            .is_none_or(|c| c == ' ' || c == ':');
        let digits = code.bytes().skip(1).all(|b| b.is_ascii_digit());
        (alone && digits && body.get(at + 5..)?.starts_with(':')).then(|| code.to_string())
    })
}

/// `Can't reduce memory use below 10.64GiB (11429599125 bytes) by rematerialization; only
/// reduced to 67.69GiB (72679996812 bytes), down from 71.05GiB (76287081352 bytes)
/// originally`.
pub fn remat(body: &str) -> Option<RematWarning> {
    let rest = after(body, "Can't reduce memory use below ")
        .or_else(|| after(body, "Can't reduce memory use be low "))?;
    Some(RematWarning {
        limit_bytes: signed_size(rest),
        reduced_to_bytes: size_after(rest, "only reduced to "),
        original_bytes: size_after(rest, "down from "),
    })
}

/// A size that may be negative (`-20.61GiB (-22125470549 bytes)`): XLA's remat limit
/// is the memory less the arguments and outputs, below zero when they alone exceed it.
fn signed_size(text: &str) -> Option<i64> {
    let trimmed = text.trim_start();
    match trimmed.strip_prefix('-') {
        // The exact count in parentheses carries the sign again: read it unsigned.
        Some(magnitude) => {
            let unsigned = magnitude.replacen("(-", "(", 1);
            let bytes = units::size_exact_prefix(&unsigned, false)?.0;
            i64::try_from(bytes).ok().map(|b| -b)
        }
        None => i64::try_from(units::size_exact_prefix(trimmed, false)?.0).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_one_line_messages() {
        let d = headline("RESOURCE_EXHAUSTED: Failed to allocate request for 256.00MiB (268435456B) on device ordinal 0").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.device_ordinal),
            (Some(268_435_456), Some(0))
        );
        let d = headline("OOM when allocating tensor with shape[3,3,512,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Mul]").unwrap();
        assert_eq!(d.msg.requested_shape.as_deref(), Some("[3,3,512,1024]"));
        assert_eq!(d.msg.requested_dtype.as_deref(), Some("float"));
        assert_eq!(d.msg.requested_op.as_deref(), Some("Mul"));
        assert_eq!(d.msg.device_ordinal, Some(0));
        assert_eq!(
            d.msg.requested_bytes_from_shape,
            Some(3 * 3 * 512 * 1024 * 4)
        );
        assert!(headline("an unrelated line").is_none());
        let d = headline("INTERNAL: Failed to allocate 98697216 bytes for new constant").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(98_697_216));
        // tcmalloc's `(nil)` is a failure; its address, a warning.
        let d = headline("tcmalloc: large alloc 113702387720192 bytes == (nil) @  0x7f6a2b8f1680")
            .unwrap();
        assert_eq!(
            (d.failure, d.msg.requested_bytes),
            (true, Some(113_702_387_720_192))
        );
        let d = headline("cmalloc: large alloc 13261799424 bytes == 0x53d90000 @  0x7efe22acb680")
            .unwrap();
        assert_eq!(
            (d.failure, d.msg.requested_bytes),
            (false, Some(13_261_799_424))
        );
    }

    #[test]
    fn reads_error_codes_and_remat() {
        assert_eq!(
            error_code("RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom:").as_deref(),
            Some("E1000")
        );
        assert_eq!(error_code("TYPE1000: x"), None);
        let r = remat("Can't reduce memory use below 13.58GiB (14583876403 bytes) by rematerialization; only reduced to 15.22GiB (16339342336 bytes)").unwrap();
        assert_eq!(r.limit_bytes, Some(14_583_876_403));
        assert_eq!(r.reduced_to_bytes, Some(16_339_342_336));
        assert_eq!(r.original_bytes, None);
        let r = remat("Can't reduce memory use below -20.61GiB (-22125470549 bytes) by rematerialization; only reduced to 28.35GiB (30443270400 bytes), down from 28.35GiB (30443270400 bytes) originally").unwrap();
        assert_eq!(r.limit_bytes, Some(-22_125_470_549));
        assert_eq!(r.reduced_to_bytes, Some(30_443_270_400));
    }
}
