//! One buffer that is most of a capture's plan, or over half the device's pool.

use crate::diagnosis::line::{pct, Context, Line};
use crate::diagnosis::rules::plan::NOTEWORTHY;
use crate::report::model::{Category, DiagnosisId, Label, LiveBuffer, Plan, Role};
use crate::report::present;
use crate::units::size;

use super::{cause, fix, Made, DOMINANT_SHARE};

/// The group of live buffers made by one op at one source line (or one buffer, when it
/// has no op name), largest first: the dominant one if it is most of `needs`.
pub struct Dominant<'p> {
    pub largest: &'p LiveBuffer,
    pub count: u64,
    pub bytes: u64,
}

/// The dominant group of the plan's live buffers, if one holds `DOMINANT_SHARE` of
/// what the plan needs at once.
fn dominant_in_plan(p: &Plan) -> Option<Dominant<'_>> {
    let mut groups: Vec<Dominant<'_>> = Vec::new();
    for b in p
        .live_at_peak
        .iter()
        .filter(|b| b.memory_space == 0 && b.bytes > 0)
    {
        let key = |x: &LiveBuffer| (x.op_name.is_empty(), x.op_name.clone(), x.source.clone());
        let same = |g: &Dominant<'_>| {
            !b.op_name.is_empty() && key(g.largest) == key(b) && g.largest.category == b.category
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => {
                g.count += 1;
                g.bytes = g.bytes.saturating_add(b.bytes);
            }
            None => groups.push(Dominant {
                largest: b,
                count: 1,
                bytes: b.bytes,
            }),
        }
    }
    let best = groups.into_iter().max_by_key(|g| g.bytes)?;
    // Several activations (or gradients) of one op are one per layer or step: what the
    // role lines and remat explain, not one buffer.
    let per_layer = best.count > 1 && matches!(best.largest.role, Role::Forward | Role::Backward);
    (p.total_bytes > 0 && !per_layer && pct(best.bytes, p.total_bytes) >= DOMINANT_SHARE)
        .then_some(best)
}

/// One buffer is most of the selected module's plan: the first line under pressure.
pub(super) fn dominant_in_plan_line(cx: &Context<'_>) -> Option<Line> {
    let (m, p) = (cx.module?, cx.plan()?);
    if !cx.pressure {
        return None;
    }
    let d = dominant_in_plan(p).filter(|d| d.bytes >= NOTEWORTHY)?;
    let b = d.largest;
    let mut ops: Vec<&str> = vec![b.op_name.as_str()];
    ops.extend(b.shared_by.iter().map(String::as_str));
    let made = Made::of(&ops, &b.shape, b.category);
    let what = if d.count == 1 {
        format!("{} {}", b.shape, category_word(b.category))
    } else {
        format!("{}× {} {}", d.count, b.shape, category_word(b.category))
    };
    let written = if b.shared_by.is_empty() {
        String::new()
    } else {
        format!(", written in place by {}", b.shared_by.join(", "))
    };
    let at = if b.source.is_empty() {
        String::new()
    } else {
        format!(" at {}", present::short_source(&b.source))
    };
    let op = if b.op_name.is_empty() {
        b.name.clone()
    } else {
        format!("{} ({})", b.op_name, b.name)
    };
    let over_pool = cx
        .capacity
        .filter(|&c| b.bytes > c / 2)
        .map(|c| {
            format!(
                "; it alone is over half the pool of {} (measured): a configuration error, not capacity",
                size(c)
            )
        })
        .unwrap_or_default();
    let text = format!(
        "one buffer is {:.1}% of what {} needs ({} of {}, read): {what}, made by {op}{written}{at}{over_pool}",
        pct(d.bytes, p.total_bytes),
        m.label,
        size(d.bytes),
        size(p.total_bytes),
    );
    let remedy = fix(made, &b.shape, d.bytes);
    let line = Line::new(DiagnosisId::DominantBuffer, Label::Read, text, cause(made));
    Some(line.remedy(cx, remedy))
}

fn category_word(c: Category) -> &'static str {
    match c {
        Category::Parameter => "(an input)",
        Category::Output => "(an output)",
        Category::Temporary => "(a temporary)",
        _ => "",
    }
}

/// One buffer over half the pool: a configuration error (a debug print, a missing
/// sharding annotation), not a capacity problem.
pub(super) fn large_in_plan(cx: &Context<'_>) -> Option<Line> {
    let (p, capacity) = (cx.plan()?, cx.capacity?);
    let big = p.live_at_peak.iter().find(|x| x.bytes > capacity / 2)?;
    let debug = if p.host_callbacks.is_empty() {
        ""
    } else {
        "; the module also has a host callback (a jax.debug.print?) that materializes whole tensors"
    };
    let text = format!(
        "{} {} is {} of {} (read, capacity measured){debug}",
        big.name,
        big.shape,
        size(big.bytes),
        size(capacity)
    );
    let line = Line::new(
        DiagnosisId::LargeReplicated,
        Label::Read,
        text,
        "a configuration error, not capacity: an unexpectedly large tensor, from a leftover jax.debug.print forcing a full tensor to be materialized, a missing sharding annotation (replicated), or a wrong mesh shape",
    );
    Some(
        line.fix("remove debug prints of large arrays; check its sharding (jax.debug.visualize_array_sharding) and shard it over the mesh")
            .saving(Some(big.bytes))
            .cost("none if it was a debug print; a sharded array needs its devices' collectives")
            .fits_after(cx.fits_after(big.bytes)),
    )
}
