//! One pass over the text: physical lines are cleaned and, where a field was wrapped,
//! rejoined into logical lines; each logical line either starts a message (a headline),
//! continues the current one (a block line), or is noise. Which of several messages in
//! one text is the one, and what it takes from the others: `choice`.

mod choice;

use std::collections::VecDeque;

use super::draft::{set, Block, Draft, Family};
use super::merge::detail;
use super::model::{AllocatorStats, OomKind, OomMessage, RematWarning, UsageItem};
use super::{
    bfc, clean, driver, fields, foreign, framework, gpu, listing, neuron, other, scoped, short, tpu,
};

/// Physical lines joined into one logical line at most (a wrapped label or headline).
const MAX_JOINS: usize = 8;
/// Longest logical line assembled from wrapped lines.
const MAX_LOGICAL: usize = 16 * 1024;
/// The width a Windows console wraps its lines at, whatever they hold.
const CONSOLE_WIDTH: usize = 80;
/// Earlier failures remembered for borrowing details.
const RECENT: usize = 32;
/// The narrowest terminal whose padding is taken for a width: two shorter lines ending
/// in spaces are more likely Markdown's line breaks.
const MIN_TERMINAL_WIDTH: usize = 60;

/// The scanner's state across lines; `parse` feeds it and asks for the result.
#[derive(Default)]
pub struct Scanner {
    pending: String,
    pending_joinable: bool,
    /// Whether the last physical line of `pending` ended with a space.
    pending_spaced_end: bool,
    /// Whether the last physical line of `pending` filled the terminal's width: the
    /// terminal wrapped it there, mid-word maybe.
    pending_wrapped: bool,
    /// The terminal's width, where a copy of its screen pads each line with spaces to it
    /// (known once two padded lines were as wide), and the last padded line's width.
    terminal_width: Option<usize>,
    last_padded_width: Option<usize>,
    joins: usize,
    current: Option<Draft>,
    best: Option<(usize, OomMessage)>,
    best_warning: Option<(usize, OomMessage)>,
    recent: VecDeque<OomMessage>,
    remat: Option<RematWarning>,
    /// The last allocator state printed apart from any message (a `Stats:` block alone).
    loose_allocator: Option<AllocatorStats>,
    /// The last device pool the framework announced.
    device_pool: Option<driver::DevicePool>,
    device_memory: driver::DeviceMemory,
    /// The device whose properties TensorFlow listed last (`Found device 1 with
    /// properties:`).
    found_device: Option<u32>,
    /// The device ordinal the last logical line named (`… for CUDA device ordinal 0:`
    /// before the line of the failure it introduces).
    last_ordinal: Option<u32>,
    /// The request of the first BFC warning that was not a failure (`… with
    /// freed_by_count=0`), when it came before any failure.
    advisory_request: Option<u64>,
    /// The allocator that warning named (`Allocator (GPU_0_bfc) ran out …`).
    advisory_allocator: Option<String>,
    /// The requests of the BFC warnings of that kind after the first, before any failure.
    later_advisories: Vec<u64>,
    /// The size of the last IREE `hal.device.queue.alloca` call traced, and the last
    /// allocator statistics IREE printed.
    last_alloca: Option<u64>,
    iree_usage: Vec<UsageItem>,
    /// Whether the last logical line was TorchInductor's `Runtime error during
    /// autotuning:`, which introduces the failure of one of its choices.
    after_autotune_error: bool,
    /// Whether the last logical line said a program was being loaded (`Error loading
    /// program 'jit__forward':` before the runtime's `Attempting to allocate …`).
    last_loads_program: bool,
    /// The program the last logical line named (`Error loading program 'jit_f':`).
    last_program: Option<String>,
    /// Whether a Python traceback began after a BFC warning that says it is not a
    /// failure, with no failure before it: the run died there, its last line cut.
    died_after_warning: bool,
    /// The largest allocation a host memory warning reported (`tcmalloc: large alloc N`).
    largest_host_warning: Option<u64>,
    /// Every host allocation warned about, and the last such line when it was the line
    /// just read (a line printed again right after itself is one warning).
    host_allocations: Vec<u64>,
    last_host_line: Option<u64>,
    /// A hash of the raw first physical line of the logical line being assembled, its
    /// log prefix (a timestamp) included: a warning logged again at another time is
    /// another warning, one printed again as it was is an echo.
    pending_raw: u64,
    /// XLA:GPU's scheduler's arguments and outputs and its limit, when it printed them.
    scheduler: Option<(u64, u64)>,
    /// A line in a wording no reader knows (`other`), the most detailed (the last of
    /// equals): the message only when the text holds no other.
    fallback: Option<(usize, Draft)>,
    /// What the text named of the frameworks, any line of it.
    framework_names: framework::FrameworkNames,
}

/// Host allocations warned about that are kept.
const MAX_HOST_ALLOCATIONS: usize = 64;
/// BFC warnings after the first that are kept.
pub(super) const MAX_LATER_ADVISORIES: usize = 64;

impl Scanner {
    /// Feeds one physical line.
    pub fn physical(&mut self, raw: &str, buf: &mut String) {
        self.framework_names.observe(raw);
        let wrapped = self.fills_terminal_width(raw);
        let line = clean::clean(raw, buf);
        let trigger = short::has_trigger(line.body);
        let starts = line.body.is_empty() || line.logged || trigger || starts_record(line.body);
        let room = self.joins < MAX_JOINS && self.pending.len() + line.body.len() < MAX_LOGICAL;
        if !starts && (self.pending_joinable || self.pending_wrapped) && room {
            // A terminal wraps at its width whatever the text: the next line goes on
            // where it stopped, unless it starts with the space the wrap fell on.
            let glued = if self.pending_wrapped {
                !line.indented && !clean::space_at_cut(&self.pending, line.body)
            } else {
                !self.pending_spaced_end
                    && clean::joins_without_space(&self.pending, line.body, line.indented)
            };
            if !glued {
                self.pending.push(' ');
            }
            self.pending.push_str(line.body);
            self.pending_spaced_end = line.spaced_end;
            self.pending_wrapped = wrapped;
            self.joins += 1;
            return;
        }
        self.flush();
        self.pending_raw = raw_hash(raw);
        self.pending.push_str(line.body);
        // A message thrown with its `{}` placeholders unfilled prints the values on lines
        // of their own: they are not a wrapped tail (`foreign::template_value`).
        self.pending_joinable = (trigger || joinable(line.body)) && !line.body.contains("{}");
        self.pending_spaced_end = line.spaced_end;
        self.pending_wrapped = wrapped;
    }

    /// Whether `raw` fills the width a terminal padded its other lines to, with no
    /// padding of its own: the terminal wrapped it (`… trying to alloca` / `te 18.44GiB
    /// …`, each line padded to 167 columns, in a copy of a terminal's screen).
    fn fills_terminal_width(&mut self, raw: &str) -> bool {
        let padded = raw.ends_with(' ');
        let columns = raw.chars().count();
        // Most logs are no terminal's copy: an unpadded line is counted only once a
        // width is known, or when it fills a Windows console's 80 columns exactly
        // (`… OP_RE` / `QUIRES failed at …`, tensorflow#37824): cut mid-word there, it
        // goes on on the next line unless that one starts a record of its own.
        if !padded && self.terminal_width.is_none() {
            return columns == CONSOLE_WIDTH;
        }
        if padded {
            if self.last_padded_width == Some(columns) && columns >= MIN_TERMINAL_WIDTH {
                self.terminal_width = Some(columns);
            }
            self.last_padded_width = Some(columns);
            return false;
        }
        self.terminal_width == Some(columns)
    }

    /// Processes the logical line assembled so far.
    fn flush(&mut self) {
        let line = std::mem::take(&mut self.pending);
        self.logical(&line);
        self.pending = line;
        self.pending.clear();
        self.pending_joinable = false;
        self.joins = 0;
    }

    fn logical(&mut self, body: &str) {
        if body.is_empty() {
            return; // a blank line keeps the current block: listings space their entries
        }
        if starts_traceback(body) && self.best.is_none() {
            let open_warning = self
                .current
                .as_ref()
                .is_some_and(|d| !d.failure && d.msg.kind == OomKind::BfcRuntime);
            let kept_warning = self
                .best_warning
                .as_ref()
                .is_some_and(|(_, m)| m.kind == OomKind::BfcRuntime);
            self.died_after_warning |= open_warning || kept_warning;
        }
        self.host_allocation(body);
        if let Some(limits) = gpu::scheduler_limit(body) {
            self.scheduler = Some(limits);
            return;
        }
        if let Some(pool) = driver::device_pool(body) {
            self.device_pool = Some(pool);
            return;
        }
        if let Some(ordinal) = driver::found_device(body) {
            self.found_device = Some(ordinal);
            return;
        }
        if let Some(memory) = driver::device_memory(body).filter(|_| !short::has_trigger(body)) {
            // The first device's figures are kept, with the device they are of.
            if self.device_memory.total.is_none() && self.device_memory.free.is_none() {
                self.device_memory.ordinal = self.found_device;
            }
            set(&mut self.device_memory.total, memory.total);
            set(&mut self.device_memory.free, memory.free);
            return;
        }
        let program = short::program_named(body);
        if let Some(remat) = short::remat(body) {
            // A warning printed while compiling: it neither ends nor joins the current
            // message, and counts on its own only when no failure is found.
            let warning = OomMessage {
                remat: Some(remat.clone()),
                ..OomMessage::default()
            };
            self.remat = Some(remat);
            self.offer(false, warning);
        } else if body.contains(STATUS_ECHO) && self.failed_before() {
            // TensorFlow passing an op's failure on to the other ops of the step: the
            // failure already read is the one (its tensor, not a later op's).
        } else if let Some(mut draft) = headline(body) {
            if draft.msg.kind == OomKind::Driver {
                set(&mut draft.msg.device_ordinal, self.last_ordinal);
            }
            draft.test_case = scoped::is_test_case(body);
            if self.after_autotune_error || body.contains(AUTOTUNE_ERROR) {
                draft.failure = false;
                draft.autotune_choice = true;
            }
            if body.contains("native function hal.") {
                if body.contains("hal.device.queue.alloca") {
                    set(&mut draft.msg.requested_bytes, self.last_alloca);
                }
                if draft.msg.usage.is_empty() {
                    draft.msg.usage = std::mem::take(&mut self.iree_usage);
                }
            }
            set(
                &mut draft.msg.program,
                program.clone().or_else(|| self.last_program.take()),
            );
            if draft.msg.kind == OomKind::TpuRuntime && self.last_loads_program {
                set(
                    &mut draft.msg.requested_op,
                    Some(short::PROGRAM_LOAD_OP.into()),
                );
            }
            self.start(draft);
        } else if !self.continue_current(body) && !self.open_headless(body) {
            self.keep_fallback(body);
        }
        self.last_ordinal = fields::after(body, "device ordinal ").and_then(short::leading_u32);
        self.last_loads_program = tpu::is_program_load(body);
        self.last_program = program;
        self.after_autotune_error = body.contains(AUTOTUNE_ERROR);
        if let Some(size) = driver::iree_alloca_size(body) {
            self.last_alloca = Some(size);
        }
        let usage = driver::iree_heap_usage(body);
        if !usage.is_empty() {
            self.iree_usage = usage;
        }
    }

    /// Whether a failure was read before this line.
    fn failed_before(&self) -> bool {
        self.best.is_some() || self.current.as_ref().is_some_and(|d| d.failure)
    }

    fn start(&mut self, draft: Draft) {
        if let Some(current) = self.current.as_mut() {
            // An allocator retrying smaller prints a line per try: one failure, the first
            // try's size, the later tries kept in order. Neuron's runtime prints one
            // failure at each layer it passes.
            let another_engine = current.engine_try
                && draft.engine_try
                && current.msg.requested_bytes == draft.msg.requested_bytes;
            let another_choice = current.autotune_choice && draft.autotune_choice;
            if another_engine
                || another_choice
                || driver::is_retry_of(current, &draft)
                || is_repeat_on_another_device(current, &draft)
                || scoped::is_another_config(current, &draft)
            {
                driver::add_retry(current, &draft);
                // The op that asked may be named only after the last try (TensorFlow's
                // `[Op:…]` closes the autotuner's list).
                set(
                    &mut current.msg.requested_op,
                    draft.msg.requested_op.clone(),
                );
                return;
            }
            if neuron::is_same_failure(current, &draft) {
                neuron::merge(current, &draft);
                return;
            }
        }
        self.close_current();
        self.current = Some(draft);
    }

    /// Offers `body` to the current message's blocks; a line it does not take ends the
    /// current block (not the message: later blocks may still come).
    fn continue_current(&mut self, body: &str) -> bool {
        let Some(draft) = self.current.as_mut() else {
            return false;
        };
        let taken = foreign::template_value(draft, body)
            || tpu::block_line(draft, body)
            || gpu::block_line(draft, body)
            || bfc::block_line(draft, body)
            || driver::block_line(draft, body)
            || neuron::block_line(draft, body)
            || scoped::block_line(draft, body);
        if !taken {
            draft.block = Block::None;
        }
        taken
    }

    /// A block without its headline (a paste that starts mid-message) opens a message of
    /// that block's family. Returns whether `body` was such a block's line.
    fn open_headless(&mut self, body: &str) -> bool {
        if self.current.is_none() && bfc::opens_stats(body) {
            let mut draft = Draft::new(OomKind::BfcRuntime, true);
            draft.context_only = true;
            let opened = bfc::open_stats(&mut draft, body);
            if opened {
                self.start(draft);
            }
            return opened;
        }
        let family = if tpu::opens(body) {
            Family::Tpu
        } else if gpu::opens(body) {
            Family::Gpu
        } else if bfc::opens(body) {
            Family::Bfc
        } else {
            return false;
        };
        let mut draft = Draft::new(OomKind::Short, true);
        draft.adopt(family);
        let taken = tpu::block_line(&mut draft, body)
            || gpu::block_line(&mut draft, body)
            || bfc::block_line(&mut draft, body);
        if taken {
            self.start(draft);
        }
        taken
    }

    /// Keeps a line in a wording no reader knows, in case the text holds nothing else.
    fn keep_fallback(&mut self, body: &str) {
        let Some(draft) = other::headline(body) else {
            return;
        };
        let score = detail(&draft.msg);
        if self
            .fallback
            .as_ref()
            .is_none_or(|(best, _)| score >= *best)
        {
            self.fallback = Some((score, draft));
        }
    }

    /// Records a host allocation a warning line reports (see `host_allocations`).
    fn host_allocation(&mut self, body: &str) {
        let Some(bytes) = short::host_allocation_reported(body) else {
            self.last_host_line = None;
            return;
        };
        if self.last_host_line != Some(self.pending_raw)
            && self.host_allocations.len() < MAX_HOST_ALLOCATIONS
        {
            self.host_allocations.push(bytes);
        }
        // The shell's `Killed` run into the warning's line: the host failing after it.
        if other::killed_after_warning(body) {
            self.keep_fallback("Killed");
        }
        self.last_host_line = Some(self.pending_raw);
    }
}

/// A hash of a raw line, to tell a line printed again from another like it.
fn raw_hash(raw: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    raw.trim_end().hash(&mut h);
    h.finish()
}

/// The same request failing on another device (`… on device ordinal 7`, then `… on
/// device ordinal 1`, one line per replica of the same step): one failure, the first
/// device's, repeated. The same line on the same device, or with none named, is an echo
/// (the log's line, then the exception's) and is not taken here.
fn is_repeat_on_another_device(first: &Draft, next: &Draft) -> bool {
    let (a, b) = (&first.msg, &next.msg);
    a.kind == b.kind
        && a.kind != OomKind::Driver
        && a.requested_bytes.is_some()
        && a.requested_bytes == b.requested_bytes
        && matches!((a.device_ordinal, b.device_ordinal), (Some(x), Some(y)) if x != y)
}

/// A Python traceback's first line: `Traceback (most recent call last):`, or as Jupyter
/// prints it, after the exception's name (`XlaRuntimeError    Traceback (most recent
/// call last)`).
fn starts_traceback(body: &str) -> bool {
    const TRACEBACK: &str = "Traceback (most recent call last)";
    body.starts_with(TRACEBACK)
        || body
            .split_once(char::is_whitespace)
            .is_some_and(|(name, rest)| {
                let exception = name.ends_with("Error") || name.ends_with("Exception");
                exception && rest.trim_start().starts_with(TRACEBACK)
            })
}

/// XLA:GPU's convolution autotuner reporting that one algorithm's scratch space could
/// not be had: it tries the next algorithm (`Convolution performance may be suboptimal`),
/// so the line is a warning, not the failure.
const AUTOTUNER_SKIP: &str = "Failed to determine best cudnn convolution algorithm";

/// TensorFlow's executor aborting the step's other ops with the status of the one that
/// failed: `Local rendezvous is aborting with status: RESOURCE_EXHAUSTED: OOM when
/// allocating tensor with shape[256,128] …`, after the failing op's own line.
const STATUS_ECHO: &str = "rendezvous is aborting with status";

/// TorchInductor's autotuner (`select_algorithm.py`) reporting that one of its choices
/// failed (a Triton config over the shared memory, say); it prints `Ignoring this choice`
/// and benchmarks the others, so the failure after it is a warning, and the next
/// choice's failure another try of the same kernel.
const AUTOTUNE_ERROR: &str = "Runtime error during autotuning";

fn headline(body: &str) -> Option<Draft> {
    if !short::has_trigger(body) {
        return None;
    }
    let mut draft = any_headline(body)?;
    if body.contains(AUTOTUNER_SKIP) {
        draft.failure = false;
    }
    Some(draft)
}

fn any_headline(body: &str) -> Option<Draft> {
    tpu::headline(body)
        .or_else(|| bfc::headline(body))
        .or_else(|| scoped::headline(body))
        .or_else(|| driver::headline(body))
        .or_else(|| foreign::headline(body))
        .or_else(|| neuron::headline(body))
        .or_else(|| short::headline(body))
}

/// Whether a physical line starts a record of its own (never the tail of a wrapped one);
/// a headline phrase also does (tested by the caller).
fn starts_record(body: &str) -> bool {
    tpu::is_key_line(body)
        || gpu::is_key_line(body)
        || bfc::is_key_line(body)
        || listing::KEYS.iter().any(|k| body.starts_with(k))
        || listing::is_separator(body)
        || listing::tpu_entry_start(body).is_some()
        || other::host_failure(body)
        || starts_traceback(body)
        || [
            "Traceback",
            "File \"",
            "During handling",
            "The above exception",
        ]
        .iter()
        .any(|k| body.starts_with(k))
}

/// Whether a logical line may continue on the next physical line: a field whose value
/// wraps, or any line left open (a bracket or quote not closed yet); a headline also may
/// (tested by the caller).
fn joinable(body: &str) -> bool {
    listing::WRAPPING_KEYS.iter().any(|k| body.starts_with(k))
        || left_open(body)
        || foreign::goes_on(body)
        || CUT_HEADLINES.iter().any(|k| body.ends_with(k))
        || other::numpy_cut(body)
}

/// How a headline ends where its poster broke the line before the size (`Allocator
/// (GPU_0_bfc) ran out of memory` / `trying to allocate 4.88TiB …`): the next line is its
/// tail. No phrase here ends a message of its own (the driver's `: out of memory` does).
const CUT_HEADLINES: [&str; 5] = [
    "ran out of memory",
    "ran out of memory trying to",
    "Out of memory while",
    "Out of memory while trying to",
    "OOM when allocating tensor with",
];

/// Whether `body` opens more brackets than it closes, or an odd number of quotes.
fn left_open(body: &str) -> bool {
    let (mut depth, mut quotes) = (0i64, 0u64);
    for b in body.bytes() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'"' => quotes += 1,
            _ => {}
        }
    }
    depth > 0 || quotes % 2 == 1
}

#[cfg(test)]
mod tests;
