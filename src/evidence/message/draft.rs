//! A message being read: its draft, the block of the message the next lines belong
//! to, and the format family whose blocks it may take.

use super::foreign;
use super::model::{MessageAllocation, OomKind, OomMessage};

/// The block of a message the next field lines belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Block {
    #[default]
    None,
    TpuTotal,
    TpuProgram,
    TpuPersistent,
    TpuRuntime,
    TpuHeap,
    TpuListing,
    GpuStats,
    GpuPeak,
    BfcDump,
    BfcStats,
}

/// The format families whose blocks a message can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Tpu,
    Gpu,
    Bfc,
}

/// A message being read.
#[derive(Debug, Default)]
pub struct Draft {
    pub msg: OomMessage,
    /// False for warnings that say they are not a failure.
    pub failure: bool,
    pub block: Block,
    /// Blocks already read: a second one of a kind belongs to another message.
    pub seen: Vec<Block>,
    pub listing_started: bool,
    pub entry_open: bool,
    pub skipping_entry: bool,
    pub stats_open: bool,
    pub dump_open: bool,
    /// BFC `Sum Total of in-use chunks`, used when no `Stats:` block says `InUse`.
    pub sum_total: Option<u64>,
    /// The BFC dump's `Next region of size N` lines added up: the pool's regions, used
    /// when no line states their total.
    pub regions: u64,
    /// A block read for the failure it comes with, never a message on its own (a BFC
    /// `Stats:` block printed before TensorFlow's `OOM when allocating tensor` line).
    pub context_only: bool,
    /// A line that repeats the failure of the line before it (TensorFlow's pinned-host
    /// allocator prints each failure twice), not another try.
    pub echo: bool,
    /// Whether the last try recorded may still be echoed by the next line.
    pub last_try_echoable: bool,
    /// The placeholders of a message thrown unformatted (`{}`), whose values follow one
    /// per line.
    pub template: Vec<foreign::Slot>,
    /// A banked memory's number of banks, once read.
    pub banks: Option<u64>,
    /// One engine's try of an autotuner that profiles engine after engine for one
    /// request (cuDNN's `Profiling failure on CUDNN engine …`): the next engine's failure
    /// is another try of the same request.
    pub engine_try: bool,
    /// One of TorchInductor's autotuning choices failing, skipped (see `AUTOTUNE_ERROR`
    /// in `scan`): the next choice's failure is another try of the same kernel.
    pub autotune_choice: bool,
    /// Read from one line of a test suite's summary (`scoped::is_test_case`): one test's
    /// failure.
    pub test_case: bool,
}

impl Draft {
    pub fn new(kind: OomKind, failure: bool) -> Self {
        let msg = OomMessage {
            kind,
            ..OomMessage::default()
        };
        Draft {
            msg,
            failure,
            ..Draft::default()
        }
    }

    /// Takes a block of `family`: a one-line message becomes that family's kind; another
    /// family's message refuses it.
    pub fn adopt(&mut self, family: Family) -> bool {
        let own = family_of(self.msg.kind);
        if own == Some(family) {
            return true;
        }
        if own.is_some() {
            return false;
        }
        self.msg.kind = match family {
            Family::Tpu => OomKind::TpuCompileHbm,
            Family::Gpu => OomKind::GpuBufferAssignment,
            Family::Bfc => OomKind::BfcRuntime,
        };
        true
    }

    /// Whether this message speaks of the host's RAM.
    pub(super) fn is_host(&self) -> bool {
        self.msg.memory_space.as_deref() == Some("host")
    }

    /// Enters `block` unless this message already read one (then it is another message's).
    pub fn enter(&mut self, block: Block) -> bool {
        if self.seen.contains(&block) {
            return false;
        }
        self.seen.push(block);
        self.block = block;
        true
    }

    pub(super) fn finish(mut self) -> OomMessage {
        // An entry cut before its first field (`Buffer 2:` and nothing after it) states
        // nothing: the cut is said by `truncated`.
        if self.entry_open
            && self
                .msg
                .allocations
                .last()
                .is_some_and(|a| a == &MessageAllocation::default())
        {
            self.msg.allocations.pop();
        }
        let cut_listing = self.listing_started
            && self.msg.allocations.is_empty()
            && self.msg.omitted_allocations == 0;
        self.msg.truncated |= cut_listing || self.entry_open || self.stats_open || self.dump_open;
        if let Some(allocator) = self.msg.allocator.as_mut() {
            allocator.in_use_bytes = allocator.in_use_bytes.or(self.sum_total);
            if self.regions > 0 {
                set(&mut allocator.region_allocated_bytes, Some(self.regions));
            }
        }
        self.msg
    }
}

pub fn family_of(kind: OomKind) -> Option<Family> {
    match kind {
        OomKind::TpuCompileHbm | OomKind::TpuTcSc | OomKind::TpuEarlyAbort => Some(Family::Tpu),
        OomKind::TpuRuntime => Some(Family::Tpu),
        OomKind::GpuBufferAssignment => Some(Family::Gpu),
        OomKind::BfcRuntime => Some(Family::Bfc),
        OomKind::ScopedMemory
        | OomKind::Driver
        | OomKind::NeuronRuntime
        | OomKind::Short
        | OomKind::Other => None,
    }
}

/// Sets `slot` unless an earlier line of the message already did: the first statement of
/// a figure is the message's own (later blocks repeat it rounded).
pub fn set<T>(slot: &mut Option<T>, value: Option<T>) {
    if slot.is_none() {
        *slot = value;
    }
}
