//! What every rule reads (the [`Context`]) and the one way a rule builds its line
//! ([`Line`]).

use crate::evidence::message::OomMessage;
use crate::report::model::{
    Diagnosis, DiagnosisId, DiagnosisItem, Fix, HostReport, Label, ModuleReport, Plan, Runtime,
};
use crate::report::present;
use crate::selection::Failure;

/// How the user checks an estimate on their side.
pub const CHECK: &str = "jax.jit(f).lower(*args).compile().memory_analysis()";

/// Share of the pool at which the allocator's peak counts as memory pressure.
const PRESSURE_PEAK: f64 = 0.9;
/// A fix saving less than this share of what the plan needs is not a cause.
const MATERIAL_SHARE: f64 = 0.01;

/// The report as far as diagnosis reads it, with what several rules derive from it.
pub struct Context<'r> {
    pub report: &'r HostReport,
    /// The selected module.
    pub module: Option<&'r ModuleReport>,
    pub runtime: Option<&'r Runtime>,
    /// The device pool's capacity (measured), when allocator events were recorded.
    pub capacity: Option<u64>,
    /// Whether memory was short: the plan exceeds the pool, something says the module
    /// ran out there (see `selection`), the allocator waited, or the pool peaked above
    /// 90% — true when no capacity is known, since nothing says it was not.
    pub pressure: bool,
    /// The out-of-memory message given (pasted, or found in a log), if any.
    pub message: Option<&'r OomMessage>,
    /// Whether the report comes from a profiler capture (else from an error message,
    /// an XLA dump or device memory profiles alone).
    pub capture: bool,
    /// Whether something says the selected module ran out (see `selection::Failure`).
    pub ran_out: bool,
}

impl<'r> Context<'r> {
    pub fn new(report: &'r HostReport, failure: Option<&Failure>) -> Self {
        let module = report
            .selected_module
            .as_deref()
            .and_then(|s| report.modules.iter().find(|m| m.label == s));
        let capacity = capacity(report);
        let mut cx = Context {
            report,
            module,
            runtime: report.runtime.as_ref(),
            capacity,
            pressure: true,
            message: report.error.as_ref().map(|e| &e.message),
            capture: report.has_capture(),
            ran_out: failure.is_some(),
        };
        cx.pressure = cx.memory_pressure(failure);
        cx
    }

    fn memory_pressure(&self, failure: Option<&Failure>) -> bool {
        let (Some(capacity), Some(rt)) = (self.capacity, self.runtime) else {
            return true;
        };
        let exceeds = self.needs() > capacity;
        let peaked = rt
            .device_pool()
            .is_some_and(|a| a.peak_in_use_bytes as f64 >= PRESSURE_PEAK * capacity as f64);
        exceeds || failure.is_some() || peaked || rt.retry.count > 0
    }

    /// The message, when it reports a failure (not a warning alone).
    pub fn failure_message(&self) -> Option<&'r OomMessage> {
        self.message.filter(|m| !m.advisory)
    }

    /// The selected module's plan.
    pub fn plan(&self) -> Option<&'r Plan> {
        self.module.map(|m| &m.plan)
    }

    /// What the selected module needs at once (its plan's total).
    pub fn needs(&self) -> u64 {
        self.plan().map(|p| p.total_bytes).unwrap_or(0)
    }

    /// Whether a fix saving `saving` bytes can matter to why memory ran out: it makes
    /// the plan fit, or it saves at least `MATERIAL_SHARE` of what the plan needs (a
    /// 64 MiB saving on a 256 GiB program is no cause of its failure).
    pub fn material(&self, saving: u64) -> bool {
        self.fits_after(saving) == Some(true)
            || saving as f64 >= MATERIAL_SHARE * self.needs() as f64
    }

    /// Whether the plan would fit once `saving` bytes are gone, when the pool is known.
    pub fn fits_after(&self, saving: u64) -> Option<bool> {
        self.capacity
            .map(|c| self.needs().saturating_sub(saving) <= c)
    }

    /// Whether the selected module's last execution would fit once `saving` bytes of
    /// what was live at its start are gone: live − saving + what the execution itself
    /// allocates (its plan's needs less its arguments, which are already live).
    pub fn fits_at_last_execution(&self, saving: u64) -> Option<bool> {
        let capacity = self.capacity?;
        let live = *self.runtime?.in_use_at_selected_starts.last()?;
        let adds = self
            .plan()
            .map(|p| p.total_bytes.saturating_sub(p.parameter_bytes))
            .unwrap_or(0);
        Some(live.saturating_sub(saving).saturating_add(adds) <= capacity)
    }
}

/// The device pool's capacity (measured), when allocator events were recorded.
pub fn capacity(report: &HostReport) -> Option<u64> {
    report
        .runtime
        .as_ref()
        .and_then(|r| r.device_pool())
        .map(|a| a.capacity_bytes)
        .filter(|&c| c > 0)
}

/// A proposed fix: what to do, the bytes it saves (estimated), what it costs.
pub struct Remedy {
    pub fix: String,
    pub saving: Option<u64>,
    pub cost: &'static str,
}

/// A fix that is advice only: no saving the evidence can put a figure on, no fit.
pub fn advice(text: impl Into<String>, cost: Option<&str>) -> Fix {
    Fix {
        text: text.into(),
        saving_bytes: None,
        cost: cost.map(str::to_owned),
        fits_after: None,
    }
}

/// A diagnosis line being built: the finding, then what a rule adds to it.
pub struct Line(Diagnosis);

impl Line {
    /// The finding: its id, the label of its figures, the sentence and the cause.
    pub fn new(id: DiagnosisId, label: Label, text: String, cause: &str) -> Self {
        Line(Diagnosis {
            id,
            title: present::title(id).into(),
            label,
            text,
            cause: cause.into(),
            fix: None,
            saving_bytes: None,
            cost: None,
            fits_after: None,
            fixes: Vec::new(),
            check: None,
            saving_bound: None,
            subject: None,
            items: Vec::new(),
        })
    }

    /// What the line is about, when its id can appear several times.
    pub fn subject(mut self, subject: &str) -> Self {
        self.0.subject = Some(subject.to_owned());
        self
    }

    /// What the finding is made of.
    pub fn items(mut self, items: Vec<DiagnosisItem>) -> Self {
        self.0.items = items;
        self
    }

    /// The full fix: what to do, its saving and cost, whether the plan then fits, and
    /// how to check the estimate.
    pub fn remedy(self, cx: &Context<'_>, remedy: Remedy) -> Self {
        let Remedy { fix, saving, cost } = remedy;
        let fits = saving.and_then(|s| cx.fits_after(s));
        let mut line = self.fix(fix).saving(saving).fits_after(fits).check();
        line.0.cost = (!cost.is_empty()).then(|| cost.to_owned());
        line
    }

    /// Several fixes in the rule's order (the first is the line's own fix), each with
    /// its saving, its cost and whether the plan then fits; and how to check.
    pub fn remedies(self, cx: &Context<'_>, remedies: Vec<Remedy>) -> Self {
        let fixes = (remedies.into_iter())
            .map(|Remedy { fix, saving, cost }| Fix {
                text: fix,
                saving_bytes: saving,
                cost: (!cost.is_empty()).then(|| cost.to_owned()),
                fits_after: saving.and_then(|s| cx.fits_after(s)),
            })
            .collect();
        self.fixes(fixes).check()
    }

    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.0.fix = Some(fix.into());
        self
    }

    /// Several fixes, ranked, each with its own saving and cost: the line's own fix,
    /// saving, cost and fit become the first one's.
    pub fn fixes(mut self, fixes: Vec<Fix>) -> Self {
        if let Some(first) = fixes.first() {
            self.0.fix = Some(first.text.clone());
            self.0.saving_bytes = first.saving_bytes;
            self.0.cost = first.cost.clone();
            self.0.fits_after = first.fits_after;
        }
        self.0.fixes = fixes;
        self
    }

    pub fn saving(mut self, bytes: Option<u64>) -> Self {
        self.0.saving_bytes = bytes;
        self
    }

    /// Says the saving is an upper bound, and why.
    pub fn upper_bound(mut self, why: &str) -> Self {
        self.0.saving_bound = Some(why.to_owned());
        self
    }

    pub fn cost(mut self, cost: impl Into<String>) -> Self {
        self.0.cost = Some(cost.into());
        self
    }

    pub fn fits_after(mut self, fits: Option<bool>) -> Self {
        self.0.fits_after = fits;
        self
    }

    /// Adds how to check the estimate on the user's side.
    pub fn check(mut self) -> Self {
        self.0.check = Some(CHECK.into());
        self
    }

    pub fn build(mut self) -> Diagnosis {
        // A line given one fix lists it as its only one, so that `fixes` is the list to
        // read on every line.
        if self.0.fixes.is_empty() {
            if let Some(text) = &self.0.fix {
                self.0.fixes.push(Fix {
                    text: text.clone(),
                    saving_bytes: self.0.saving_bytes,
                    cost: self.0.cost.clone(),
                    fits_after: self.0.fits_after,
                });
            }
        }
        self.0
    }

    /// The bytes the line's fix saves (estimated), when it says.
    pub fn saving_bytes(&self) -> Option<u64> {
        self.0.saving_bytes
    }
}

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
