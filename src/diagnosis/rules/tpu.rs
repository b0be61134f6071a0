//! The triage of an out-of-memory message on what it states about TPU memory (figures
//! read): SparseCore against TensorCore, one allocation too large to be anything but a
//! configuration error, and layout padding — each allocation padded far beyond its data
//! named with the tiling rule it breaks and the nearest shape without waste.

use crate::diagnosis::line::{pct, Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::MessageAllocation;
use crate::report::model::{DiagnosisId, Label};
use crate::report::present::limits;
use crate::units::size;

use super::plan::NOTEWORTHY;

/// An allocation is too large to be capacity from half the memory up: no real model
/// needs half a device for one tensor, so it is a configuration error (a leftover debug
/// print, a missing sharding annotation), as the plan rule `large_replicated` reads it.
pub const LARGE_ALLOCATION_OF_CAPACITY: f64 = 0.5;
/// An allocation padded to this many times its data or more is named: below it padding
/// is the ordinary rounding of a large dimension.
pub const PADDING_EXPANSION: f64 = 1.5;
/// Padding is worth a line from this share of the program's memory (as the plan rule's
/// `PADDING_PCT`): less is not what made it run out.
pub const PADDING_PCT: f64 = 10.0;
/// When the message states no capacity, nothing says whether removing the padding would
/// make the program fit: padding leads only from this share up (a quarter of the need;
/// below it, the program is too big with or without it).
const PADDING_PCT_NO_CAPACITY: f64 = 25.0;
/// TPU tiles when the message prints none: the minor dimension is padded to a multiple of
/// 128 and the second-minor to a multiple of 8 (32-bit types).
const DEFAULT_TILE: (u64, u64) = (8, 128);

/// SparseCore programs take more HBM than the TensorCore program: the embedding tables,
/// not the model's computation, are what exceeds the memory.
pub fn sparsecore_dominates(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    let (tc, sc) = (m.tensorcore_bytes?, m.sparsecore_bytes?);
    if sc <= tc {
        return None;
    }
    let total = tc.saturating_add(sc);
    let against = oom::capacity(m)
        .map(|c| {
            let alone = if sc > c {
                format!("; SparseCore alone exceeds it by {}", size(sc - c))
            } else {
                String::new()
            };
            format!(" against {} available{alone}", size(c))
        })
        .unwrap_or_default();
    let text = format!(
        "SparseCore programs take {} of HBM, the TensorCore program {} ({:.1}% SparseCore, read); together {}{against}: the embedding tables, not the model's computation, exceed HBM",
        size(sc),
        size(tc),
        pct(sc, total),
        size(total),
    );
    let line = Line::new(
        DiagnosisId::SparsecoreDominates,
        Label::Read,
        text,
        "SparseCore embedding tables and their lookups need more HBM than the TensorCore program",
    );
    Some(
        line.fix(
            "tune --xla_sc_num_serialized_tables_to_optimize_hbm (serializing more tables lowers SparseCore's peak); \
             mind the 32-byte row alignment of narrow tables (a row of 4 f32 is padded to 8: widen or stack narrow tables); \
             lower maximum_parallel_iterations of the embedding lookups; \
             mod-shard the tables across SparseCores so that no core holds a whole large table",
        )
        .cost("slower embedding lookups (fewer tables optimized at once, less parallelism)"),
    )
}

/// Whether an allocation is a host callback's (`jax.debug.print`, `io_callback`, …).
pub fn is_callback(a: &MessageAllocation) -> bool {
    [&a.op_name, &a.op_type, &a.xla_label]
        .iter()
        .any(|s| s.contains("callback"))
}

/// `s32[8388608,8,4]{…} (FloorMod at m.py:12)`.
pub(super) fn describe(a: &MessageAllocation) -> String {
    let shape = if a.shape.is_empty() {
        let label = oom::instruction(&a.xla_label);
        if label.is_empty() {
            oom::short(&a.xla_label, 80)
        } else {
            label.to_owned()
        }
    } else {
        a.shape.clone()
    };
    let kind = if a.allocation_type.is_empty() {
        String::new()
    } else {
        format!(", {}", a.allocation_type)
    };
    format!("{shape}{}{kind}", oom::origin(a))
}

/// Layout padding over what the message lists: the waste summed, and each allocation
/// padded to 1.5× its data or more named with the rule it breaks.
pub fn tpu_padding(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    let listed: u64 = m
        .allocations
        .iter()
        .map(oom::padding)
        .fold(0, u64::saturating_add);
    let waste = m.padding_bytes.unwrap_or(0).max(listed);
    // The waste's share of all the memory the program fills (arguments included): padded
    // temporaries beside far larger arguments are not what overflowed.
    let (whole, in_all) = match (m.used_bytes.or(m.total_bytes), m.program_bytes) {
        (Some(all), Some(program)) if all > program => (all, true),
        (_, Some(program)) => (program, false),
        (Some(all), None) => (all, true),
        (None, None) => (
            m.temp_bytes.unwrap_or_else(|| {
                m.allocations
                    .iter()
                    .map(|a| a.size_bytes)
                    .fold(0, u64::saturating_add)
            }),
            false,
        ),
    };
    let least = match oom::capacity(m) {
        Some(_) => PADDING_PCT,
        None => PADDING_PCT_NO_CAPACITY,
    };
    if waste < NOTEWORTHY || pct(waste, whole) < least {
        return None;
    }
    let padded: Vec<&MessageAllocation> = m
        .allocations
        .iter()
        .filter(|a| oom::expansion(a).is_some_and(|x| x >= PADDING_EXPANSION))
        .collect();
    let named: Vec<String> = padded
        .iter()
        .take(limits::PADDED_ALLOCATIONS)
        .map(|a| padded_allocation(a))
        .collect();
    let more = padded.len().saturating_sub(named.len());
    let whole_text = if in_all {
        format!("the {} needed in all", size(whole))
    } else {
        format!("the program's {}", size(whole))
    };
    let mut text = format!(
        "{} of {whole_text} is padding ({:.1}%, read)",
        size(waste),
        pct(waste, whole)
    );
    if let Some(p) = m.padding_bytes {
        text.push_str(&format!(
            "; the temporaries' padding (Padded − Unpadded) is {}",
            size(p)
        ));
    }
    match m.allocations.len() {
        0 => {}
        1 => text.push_str(&format!("; the listed allocation wastes {}", size(listed))),
        n => text.push_str(&format!(
            "; the {n} listed allocations waste {}",
            size(listed)
        )),
    }
    if !named.is_empty() {
        text.push_str(&format!(
            "; padded to {PADDING_EXPANSION}× their data or more: {}",
            named.join("; ")
        ));
        if more > 0 {
            text.push_str(&format!(" (and {more} more)"));
        }
    }
    let fits = oom::excess(m).map(|e| waste >= e);
    let line = Line::new(
        DiagnosisId::TpuPadding,
        Label::Read,
        text,
        "TPU tiles pad the minor dimension to a multiple of 128 and the second-minor to a multiple of 8 (per the tile the layout prints)",
    );
    Some(
        line.fix("reshape so that the minor (last in the layout) dimension is a multiple of 128 and the second-minor a multiple of 8: fold a factor of a large dimension into a small minor one, drop size-1 dimensions, or pick hidden sizes that are multiples of 128 (e.g. (129, 1024) → (128, 1024))")
            .saving(Some(waste))
            .cost("a reshape or a different hidden size")
            .fits_after(fits),
    )
}

/// `s32[8388608,8,4]{2,1,0:T(8,128)} (FloorMod): 32.00 GiB for 1.00 GiB of data (32.0×);
/// its minor dimension 4 is not a multiple of 128; nearest shape without waste:
/// s32[262144,8,128]`.
fn padded_allocation(a: &MessageAllocation) -> String {
    let expansion = oom::expansion(a).unwrap_or(1.0);
    let mut text = format!(
        "{}: {} for {} of data ({expansion:.1}×)",
        describe(a),
        size(a.size_bytes),
        size(oom::data_bytes(a)),
    );
    match Tiled::parse(&a.shape) {
        Some(t) if !t.breaks().is_empty() => {
            text.push_str(&format!("; its {}", t.breaks().join(" and its ")));
            if let Some(shape) = t.nearest_without_waste() {
                text.push_str(&format!("; nearest shape without waste: {shape}"));
            }
        }
        _ => text.push_str("; padded by its layout"),
    }
    text
}

/// A TPU array shape as the message prints it: element type, dimensions, the layout's
/// minor-to-major order and its first tile.
#[derive(Debug, Clone, PartialEq)]
pub struct Tiled {
    pub element: String,
    pub dims: Vec<u64>,
    /// Dimension indices, most minor first.
    pub minor_to_major: Vec<usize>,
    /// (second-minor multiple, minor multiple).
    pub tile: (u64, u64),
}

impl Tiled {
    /// `s32[8388608,8,4]{2,1,0:T(8,128)}`; `None` for a tuple or anything else.
    pub fn parse(text: &str) -> Option<Tiled> {
        let (element, rest) = text.trim().split_once('[')?;
        if element.is_empty() || !element.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let (dims, rest) = rest.split_once(']')?;
        let dims: Vec<u64> = if dims.trim().is_empty() {
            Vec::new()
        } else {
            dims.split(',')
                .map(|d| {
                    let d = d.trim();
                    d.strip_prefix("<=").unwrap_or(d).parse().ok()
                })
                .collect::<Option<_>>()?
        };
        let rank = dims.len();
        let default_order: Vec<usize> = (0..rank).rev().collect();
        let (mut minor_to_major, mut tile) = (default_order.clone(), DEFAULT_TILE);
        if let Some(layout) = rest.strip_prefix('{').and_then(|r| r.split('}').next()) {
            let (order, attributes) = layout.split_once(':').unwrap_or((layout, ""));
            let order: Option<Vec<usize>> = order
                .split(',')
                .filter(|o| !o.trim().is_empty())
                .map(|o| o.trim().parse().ok())
                .collect();
            if let Some(order) = order.filter(|o| is_permutation(o, rank)) {
                minor_to_major = order;
            }
            if let Some(t) = attributes
                .strip_prefix("T(")
                .and_then(|t| t.split(')').next())
            {
                let sizes: Vec<u64> = t.split(',').filter_map(|x| x.trim().parse().ok()).collect();
                tile = match sizes.as_slice() {
                    [second, minor] if *second > 0 && *minor > 0 => (*second, *minor),
                    [minor] if *minor > 0 => (1, *minor),
                    _ => DEFAULT_TILE,
                };
            }
        }
        Some(Tiled {
            element: element.to_owned(),
            dims,
            minor_to_major,
            tile,
        })
    }

    /// The dimensions the tile pads: (index, multiple) for the minor, then the
    /// second-minor.
    fn tiled(&self) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        if let Some(&minor) = self.minor_to_major.first() {
            out.push((minor, self.tile.1));
        }
        if let Some(&second) = self.minor_to_major.get(1) {
            out.push((second, self.tile.0));
        }
        out
    }

    /// The tiling rules the shape breaks, in words.
    pub fn breaks(&self) -> Vec<String> {
        self.tiled()
            .into_iter()
            .enumerate()
            .filter_map(|(i, (d, k))| {
                let size = *self.dims.get(d)?;
                let which = if i == 0 { "minor" } else { "second-minor" };
                (size % k != 0).then(|| {
                    format!(
                        "{which} dimension {size} is not a multiple of {k} (padded to {})",
                        round_up(size, k)
                    )
                })
            })
            .collect()
    }

    fn wastes(&self) -> bool {
        self.tiled()
            .iter()
            .any(|&(d, k)| self.dims.get(d).is_some_and(|s| s % k != 0))
    }

    /// The nearest shape with the same layout that the tile does not pad: the same
    /// elements with size-1 dimensions dropped, or with a factor of a major dimension
    /// folded into a small minor one; else each padded dimension rounded to its nearest
    /// multiple.
    pub fn nearest_without_waste(&self) -> Option<String> {
        if !self.wastes() {
            return None;
        }
        [self.squeezed(), self.folded(), Some(self.rounded())]
            .into_iter()
            .flatten()
            .find(|t| !t.wastes())
            .map(|t| t.logical())
    }

    /// `s32[262144,8,128]`.
    fn logical(&self) -> String {
        let dims: Vec<String> = self.dims.iter().map(u64::to_string).collect();
        format!("{}[{}]", self.element, dims.join(","))
    }

    /// Without size-1 dimensions, when the tile pads one.
    fn squeezed(&self) -> Option<Tiled> {
        let ones = self
            .tiled()
            .iter()
            .any(|&(d, _)| self.dims.get(d) == Some(&1));
        if !ones || self.dims.iter().all(|&d| d == 1) {
            return None;
        }
        let kept: Vec<usize> = (0..self.dims.len())
            .filter(|&i| self.dims.get(i) != Some(&1))
            .collect();
        let new_index = |old: usize| kept.iter().position(|&k| k == old);
        Some(Tiled {
            element: self.element.clone(),
            dims: kept
                .iter()
                .filter_map(|&i| self.dims.get(i).copied())
                .collect(),
            minor_to_major: self
                .minor_to_major
                .iter()
                .filter_map(|&d| new_index(d))
                .collect(),
            tile: self.tile,
        })
    }

    /// A factor of the most major dimension that has it, moved into each padded tiled
    /// dimension that divides its multiple.
    fn folded(&self) -> Option<Tiled> {
        let mut t = self.clone();
        let tiled = self.tiled();
        for &(d, k) in &tiled {
            let size = *t.dims.get(d)?;
            if size % k == 0 {
                continue;
            }
            if size == 0 || k % size != 0 {
                return None;
            }
            let factor = k / size;
            let donor = t
                .minor_to_major
                .iter()
                .rev()
                .copied()
                .filter(|i| !tiled.iter().any(|&(x, _)| x == *i))
                .find(|&i| {
                    t.dims
                        .get(i)
                        .is_some_and(|&s| s % factor == 0 && s >= factor)
                })?;
            if let Some(s) = t.dims.get_mut(donor) {
                *s /= factor;
            }
            if let Some(s) = t.dims.get_mut(d) {
                *s = k;
            }
        }
        Some(t)
    }

    /// Each padded tiled dimension rounded to its nearest positive multiple.
    fn rounded(&self) -> Tiled {
        let mut t = self.clone();
        for (d, k) in self.tiled() {
            if let Some(s) = t.dims.get_mut(d) {
                let nearest = (*s + k / 2) / k * k;
                *s = nearest.max(k);
            }
        }
        t
    }
}

fn is_permutation(order: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    order.len() == rank
        && order.iter().all(|&i| match seen.get_mut(i) {
            Some(s) if !*s => {
                *s = true;
                true
            }
            _ => false,
        })
}

fn round_up(size: u64, k: u64) -> u64 {
    size.div_ceil(k).saturating_mul(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nearest(shape: &str) -> Option<String> {
        Tiled::parse(shape).and_then(|t| t.nearest_without_waste())
    }

    #[test]
    fn the_rule_a_shape_breaks_and_its_nearest_shape_without_waste() {
        // From the corpus: a minor dimension of 4 folds a factor of 32 from the major one.
        let t = Tiled::parse("s32[8388608,8,4]{2,1,0:T(8,128)}").unwrap();
        assert_eq!(
            t.breaks(),
            ["minor dimension 4 is not a multiple of 128 (padded to 128)"]
        );
        assert_eq!(
            nearest("s32[8388608,8,4]{2,1,0:T(8,128)}").as_deref(),
            Some("s32[262144,8,128]")
        );
        // No tile printed: TPU's default (8, 128).
        assert_eq!(
            nearest("f32[256,512,128,2]{3,2,1,0}").as_deref(),
            Some("f32[4,512,128,128]")
        );
        // A size-1 second-minor dimension under the layout {0,1,3,2}: drop it.
        let t = Tiled::parse("bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}").unwrap();
        assert_eq!(t.tile, (4, 128));
        assert_eq!(
            t.breaks(),
            ["second-minor dimension 1 is not a multiple of 4 (padded to 4)"]
        );
        assert_eq!(
            t.nearest_without_waste().as_deref(),
            Some("bf16[2048,2048,128]")
        );
        // Nothing to fold from: round to the nearest multiple.
        assert_eq!(nearest("f32[129,1024]").as_deref(), Some("f32[128,1024]"));
        assert_eq!(nearest("f32[128,3]{1,0}").as_deref(), Some("f32[128,128]"));
        // Already without waste.
        assert_eq!(nearest("f32[32,4096,4096]{1,2,0:T(8,128)}"), None);
        assert!(Tiled::parse("(f32[2], s32[])").is_none());
    }
}
