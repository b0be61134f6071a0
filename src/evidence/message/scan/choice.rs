//! The choice among the messages of one text. Each message is kept as a draft until the
//! next starts. A failure beats a warning (BFC's `freed_by_count` "not a failure", a
//! rematerialization warning); among failures the one stating the most figures wins, and
//! of equals the last one (the failure that ended the run). The winner then borrows the
//! allocator, operation, shape, device and error code from other failures about the same
//! request (same size, or one without a size), and the last rematerialization warning in
//! the text; the device's pool and memory the framework announced fill what it left out.

use std::collections::VecDeque;

use super::super::draft::set;
use super::super::merge::{borrow, borrow_allocator, derive_totals, detail, stats_alone};
use super::super::model::{AllocatorStats, OomKind, OomMessage};
use super::{Scanner, MAX_LATER_ADVISORIES, RECENT};

impl Scanner {
    pub(super) fn close_current(&mut self) {
        let Some(draft) = self.current.take() else {
            return;
        };
        let failure = draft.failure;
        if draft.context_only {
            self.loose_allocator = draft.finish().allocator;
            return;
        }
        self.offer(failure, draft.finish());
    }

    /// Keeps `msg` if it states at least as much as the best of its rank so far.
    pub(super) fn offer(&mut self, failure: bool, msg: OomMessage) {
        let score = detail(&msg);
        if !failure && msg.kind == OomKind::BfcRuntime && self.failures_only_grew_the_pool() {
            match (self.advisory_request, msg.requested_bytes) {
                (None, request) => {
                    self.advisory_request = request;
                    self.advisory_allocator = msg.allocator.as_ref().map(|a| a.name.clone());
                }
                (Some(_), Some(request)) if self.later_advisories.len() < MAX_LATER_ADVISORIES => {
                    self.later_advisories.push(request);
                }
                _ => {}
            }
        }
        if !failure && msg.is_host_allocation_warning() {
            self.largest_host_warning = self.largest_host_warning.max(msg.requested_bytes);
        }
        if failure {
            // What `borrow` may take, without the listing (bounded memory).
            self.recent.push_back(OomMessage {
                allocations: Vec::new(),
                ..msg.clone()
            });
            if self.recent.len() > RECENT {
                self.recent.pop_front();
            }
        }
        let slot = if failure {
            &mut self.best
        } else {
            &mut self.best_warning
        };
        if slot.as_ref().is_none_or(|(best, _)| score >= *best) {
            *slot = Some((score, msg));
        }
    }

    /// Whether every failure read so far (none, too) is the driver refusing device memory
    /// (the BFC allocator asking for a new region of its pool), none of them a failure of
    /// the program's own: TensorFlow logs such a refusal and goes on with the memory it
    /// has. `recent` holds every failure offered until it holds `RECENT` of them.
    fn failures_only_grew_the_pool(&self) -> bool {
        self.recent.iter().all(is_device_refusal)
    }

    /// The message the text's lines make, before what others printed about it is
    /// joined in: the best failure, else warnings (which a failure after them may turn
    /// into one), else an allocator state alone, a line in an unknown wording, or the
    /// scheduler's limit.
    fn chosen(&mut self) -> Option<OomMessage> {
        // With a failure taken below, the refusals are that failure and any others.
        let grew_for_warning = self.failures_only_grew_the_pool();
        Some(match (self.best.take(), self.best_warning.take()) {
            // The driver refused the pool a region, then BFC said its request, no larger
            // than the region, is not a failure: the allocator went on without it, and
            // nothing failed (`failed to allocate 4.00G … CUDA_ERROR_OUT_OF_MEMORY`, then
            // `… trying to allocate 2.60GiB. The caller indicates that this is not a
            // failure`).
            (Some((_, refusal)), Some((_, warning)))
                if grew_for_warning
                    && warning.kind == OomKind::BfcRuntime
                    && warning.requested_bytes.is_some()
                    && warning.requested_bytes <= refusal.requested_bytes =>
            {
                OomMessage {
                    advisory: true,
                    pool_growth_refused_bytes: refusal.requested_bytes,
                    ..warning
                }
            }
            (Some((_, msg)), _) => msg,
            // Host memory warnings, then the host failing (`std::bad_alloc`, the OOM
            // killer): the process died for want of RAM, which the failure says; the
            // warnings stay as the allocations they were (`host_allocations_bytes`).
            (None, Some((_, msg))) if msg.is_host_allocation_warning() => {
                match self
                    .fallback
                    .take()
                    .filter(|(_, d)| d.failure && d.is_host())
                {
                    Some((_, draft)) => draft.finish(),
                    // Alone, they speak of their largest allocation.
                    None => OomMessage {
                        advisory: true,
                        requested_bytes: self.largest_host_warning.or(msg.requested_bytes),
                        ..msg
                    },
                }
            }
            // A BFC warning followed by a traceback: the allocator could not give the
            // request and the run failed right after (the failure's own line is cut).
            (None, Some((_, msg))) => OomMessage {
                advisory: !(self.died_after_warning && msg.kind == OomKind::BfcRuntime),
                ..msg
            },
            (None, None) => match self.loose_allocator.take().and_then(stats_alone) {
                Some(msg) => msg,
                None => match self.fallback.take() {
                    Some((_, draft)) => {
                        let failure = draft.failure;
                        OomMessage {
                            advisory: !failure,
                            ..draft.finish()
                        }
                    }
                    // XLA:GPU's scheduler alone: the arguments and outputs over its limit
                    // (its figures are set below), a one-line message of its own.
                    None if self.scheduler.is_some() => OomMessage::default(),
                    None => return None,
                },
            },
        })
    }

    /// What the framework said of the device before the failure, where it applies to
    /// the message: the pool it announced (the device, the allocator's limit, the
    /// capacity) and the device's memory as it found it (the capacity of a driver
    /// failure, and what was free then).
    fn apply_device(&self, msg: &mut OomMessage) {
        // The pool a BFC warning speaks of is the one announced, as a failure's is, and
        // so is the memory a rematerialization warning's limit was set from. A device's
        // pool and memory say nothing of the host's (pinned host memory).
        let on_host = msg.memory_space.as_deref() == Some("host");
        let speaks_of_pool =
            !msg.advisory || msg.kind == OomKind::BfcRuntime || msg.remat.is_some();
        let pools_apply = speaks_of_pool && !on_host;
        let driver_failure = !msg.advisory && msg.kind == OomKind::Driver;
        // The device found may be another than the one that failed (a machine's second
        // GPU listed first).
        let found = |ordinal: Option<u32>| may_be_one_device(ordinal, self.device_memory.ordinal);
        if let (true, Some(pool)) = (pools_apply, self.device_pool) {
            if may_be_one_device(msg.device_ordinal, pool.ordinal) {
                set(&mut msg.device_ordinal, pool.ordinal);
                // The driver refuses what the device lacks: its memory, as the framework
                // found it, is the capacity, and the pool only the allocator's limit.
                let device_known = driver_failure
                    && self.device_memory.total.is_some()
                    && found(msg.device_ordinal);
                if !device_known {
                    set(&mut msg.capacity_bytes, pool.bytes);
                }
                // The pool announced is the BFC allocator's: its limit.
                if let Some(bytes) = pool.bytes {
                    let allocator = msg.allocator.get_or_insert_with(AllocatorStats::default);
                    set(&mut allocator.limit_bytes, Some(bytes));
                }
            }
        }
        let bfc_without_limit = msg.kind == OomKind::BfcRuntime
            && msg
                .allocator
                .as_ref()
                .is_none_or(|a| a.limit_bytes.is_none());
        let this_device = !on_host && found(msg.device_ordinal);
        if (driver_failure || bfc_without_limit) && this_device {
            // Read when the framework found the device, which is when a driver failure
            // (creating its pool or a context) happens; for an allocator that states no
            // limit, the device it was given.
            set(&mut msg.capacity_bytes, self.device_memory.total);
            set(&mut msg.free_bytes, self.device_memory.free);
        }
        // TensorFlow's `OOM when allocating tensor with shape` alone, later in the run:
        // the device is the one the framework found, and what was free then is what
        // others left it, not what was free at the failure.
        let tensor_alone =
            msg.kind == OomKind::Short && msg.requested_shape.is_some() && msg.allocator.is_none();
        if tensor_alone && this_device {
            set(&mut msg.capacity_bytes, self.device_memory.total);
        }
        // Any other failure on the device: what was free when the framework found it,
        // unless that already stands as what was free at the failure.
        if this_device && msg.free_bytes.is_none() {
            set(&mut msg.free_at_start_bytes, self.device_memory.free);
        }
    }

    /// The chosen message, or `None` when the text held none.
    pub fn finish(mut self) -> Option<OomMessage> {
        self.flush();
        self.close_current();
        let mut msg = self.chosen()?;
        if !msg.advisory && msg.kind == OomKind::BfcRuntime {
            msg.pool_growth_refused_bytes = growth_refused(&msg, &self.recent);
        }
        if !msg.advisory {
            for other in &self.recent {
                borrow(&mut msg, other);
            }
            if let Some(loose) = &self.loose_allocator {
                let ours = msg.allocator.get_or_insert_with(AllocatorStats::default);
                if ours.name.is_empty() || loose.name.is_empty() || ours.name == loose.name {
                    borrow_allocator(ours, loose);
                }
            }
        }
        self.apply_device(&mut msg);
        msg.remat = self.remat.or(msg.remat);
        msg.host_allocations_bytes = self.host_allocations;
        if let Some((io, limit)) = self.scheduler {
            msg.io_bytes = Some(io);
            msg.scheduler_limit_bytes = Some(limit);
        }
        msg.advisory_request_bytes = self.advisory_request;
        // XLA's failure names no allocator; BFC's warning just before it, for about the
        // same size, names the one that could not give it (and so the device).
        let same_size = |a: u64, b: u64| a.abs_diff(b).saturating_mul(100) <= a.max(b);
        let warned_of_it = self
            .advisory_request
            .zip(msg.requested_bytes)
            .is_some_and(|(a, r)| same_size(a, r));
        if !msg.advisory && msg.allocator.is_none() && warned_of_it {
            if let Some(name) = self.advisory_allocator.take().filter(|n| !n.is_empty()) {
                msg.allocator = Some(AllocatorStats::named(name));
            }
        }
        msg.later_advisory_requests_bytes = std::mem::take(&mut self.later_advisories);
        // The rounded size is a figure of its own only beside the exact one: another
        // printer's line stating the request (XLA's `trying to allocate N bytes`), even
        // where the allocator had nothing to round.
        let stated_elsewhere = |bytes: Option<u64>| {
            self.recent
                .iter()
                .any(|o| o.kind != OomKind::BfcRuntime && o.requested_bytes == bytes)
        };
        if let Some(allocator) = msg.allocator.as_mut() {
            let rounded = allocator.rounded_request_bytes;
            if rounded == msg.requested_bytes && !stated_elsewhere(rounded) {
                allocator.rounded_request_bytes = None;
            }
        }
        msg.framework = self.framework_names.framework();
        derive_totals(&mut msg);
        Some(msg)
    }
}

/// Whether two lines may speak of one device: unless both name their device and the
/// two differ.
fn may_be_one_device(a: Option<u32>, b: Option<u32>) -> bool {
    a.zip(b).is_none_or(|(a, b)| a == b)
}

/// A driver's refusal of device memory for want of it (not a fault of the driver, not
/// the host's pinned memory).
fn is_device_refusal(o: &OomMessage) -> bool {
    o.kind == OomKind::Driver && !o.is_driver_fault() && o.memory_space.as_deref() != Some("host")
}

/// The driver's refusal of the BFC allocator's attempt to grow its pool, among the other
/// failures of the text: a device allocation of at least the request, refused for want
/// of memory (TensorFlow asks the driver for a new region before it gives up).
fn growth_refused(msg: &OomMessage, others: &VecDeque<OomMessage>) -> Option<u64> {
    let request = msg.requested_bytes?;
    others
        .iter()
        .rev()
        .filter(|o| is_device_refusal(o))
        .filter_map(|o| o.requested_bytes)
        .find(|&refused| refused >= request)
}
