//! A module's plan from its `*after_optimizations.hlo.pb`: an `xla.HloProto` holding
//! the module (field 1) and, on CPU and GPU, its buffer assignment (field 3) — the
//! message the capture's `/host:metadata` plane holds. [`plan::analyze`] reads it
//! exactly as it reads a capture's.

use prost::Message;

use super::names::ModuleKey;
use crate::plan;
use crate::proto::xla::HloProto;
use crate::report::model::ModuleReport;

/// What one `.hlo.pb` gave.
pub enum Outcome {
    Plan(Box<ModuleReport>),
    /// A module without a buffer assignment: its plan must come from elsewhere.
    NoAssignment,
    /// Not an HloProto (truncated, altered, or not one at all): why.
    Corrupt(String),
}

/// Decodes and analyzes one module's proto.
pub fn read_module(key: &ModuleKey, bytes: &[u8]) -> Outcome {
    let hlo = match HloProto::decode(bytes) {
        Ok(hlo) => hlo,
        Err(e) => return Outcome::Corrupt(format!("it does not decode: {e}")),
    };
    let Some(module) = hlo.hlo_module.as_ref() else {
        return Outcome::Corrupt("it holds no HLO module".into());
    };
    if hlo.buffer_assignment.is_none() {
        return Outcome::NoAssignment;
    }
    let name = if module.name.is_empty() {
        key.name_hint().to_owned()
    } else {
        module.name.clone()
    };
    // The module's unique id is the capture's program id (CPU, GPU) and the dump's
    // file number; an unset id (0) defers to the file number.
    let program_id = u64::try_from(module.id)
        .ok()
        .filter(|&id| id != 0)
        .unwrap_or(key.number);
    Outcome::Plan(Box::new(ModuleReport {
        label: format!("{name}({program_id})"),
        name,
        program_id,
        executions: 0,
        plan: plan::analyze(&hlo),
        plan_source: None,
    }))
}
