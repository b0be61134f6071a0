//! Sums a decoded profile's samples by kind, device and frame.

use std::borrow::Cow;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::frames::{self, Origin};
use super::stacks::{FrameAt, Stacks, Strings};
use super::{
    DeviceBytes, DeviceProfile, Fault, ProfileGroup, KIND_BUFFER, KIND_EXECUTABLE, KIND_UNKNOWN,
    NO_STACK,
};
use crate::proto::pprof::{Profile, Sample, ValueType};

/// Sums `profile`; its `file` is left for the caller to fill.
pub(super) fn sum(profile: &Profile) -> Result<DeviceProfile, Fault> {
    let strings = Strings::new(profile);
    let columns = Columns::find(&profile.sample_type, &strings)?;
    let stacks = Stacks::index(profile, &strings)?;
    let mut tally = Tally::default();
    let mut scratch = Vec::new();
    for (n, sample) in profile.sample.iter().enumerate() {
        tally.add(n, sample, &columns, &stacks, &strings, &mut scratch)?;
    }
    Ok(tally.finish(&stacks))
}

/// Which of a sample's values hold its bytes and its count.
struct Columns {
    /// `space/bytes`: the bytes of the buffers a sample stands for.
    space: usize,
    /// `allocations/count`: how many buffers; absent, each sample counts as one.
    allocations: Option<usize>,
}

impl Columns {
    fn find(types: &[ValueType], strings: &Strings<'_>) -> Result<Self, Fault> {
        let mut named = Vec::with_capacity(types.len());
        for t in types {
            named.push((strings.get(t.r#type)?, strings.get(t.unit)?));
        }
        let position = |ty: &str, unit: &str| named.iter().position(|(t, u)| t == ty && u == unit);
        let Some(space) = position("space", "bytes") else {
            return Err(Fault::NotAProfile(describe_types(&named)));
        };
        Ok(Columns {
            space,
            allocations: position("allocations", "count"),
        })
    }
}

/// Why a pprof without `space/bytes` is not a device memory profile, naming what it
/// measures instead (a CPU or Go heap profile, say).
fn describe_types(named: &[(Cow<'_, str>, Cow<'_, str>)]) -> String {
    if named.is_empty() {
        return "it declares no sample types".into();
    }
    let listed: Vec<String> = named
        .iter()
        .take(4)
        .map(|(t, u)| format!("{t}/{u}"))
        .collect();
    format!("its samples measure {}, not space/bytes", listed.join(", "))
}

/// Bytes and a count, summed.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    bytes: u64,
    count: u64,
}

impl Sum {
    /// Adds to a part of the total: the total's own checked addition has already
    /// bounded every part, so this cannot saturate.
    fn add(&mut self, bytes: u64, count: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.count = self.count.saturating_add(count);
    }
}

/// A group before its frame is named: the frame by id, so that samples are summed
/// without building strings.
#[derive(Debug, Default)]
struct Part<'p> {
    sum: Sum,
    devices: BTreeSet<Cow<'p, str>>,
    user_code: bool,
}

#[derive(Default)]
struct Tally<'p> {
    samples: u64,
    skipped: u64,
    total: Sum,
    kinds: HashMap<Cow<'p, str>, Sum>,
    devices: HashMap<Cow<'p, str>, Sum>,
    parts: HashMap<(Option<FrameAt>, Cow<'p, str>), Part<'p>>,
}

/// The labels JAX puts on a sample.
struct Labels<'p> {
    kind: Cow<'p, str>,
    device: Option<Cow<'p, str>>,
}

impl<'p> Labels<'p> {
    fn read(sample: &Sample, strings: &Strings<'p>) -> Result<Self, Fault> {
        let mut labels = Labels {
            kind: Cow::Borrowed(KIND_UNKNOWN),
            device: None,
        };
        for label in &sample.label {
            match strings.get(label.key)?.as_ref() {
                "kind" => labels.kind = strings.get(label.str)?,
                "device" => labels.device = Some(strings.get(label.str)?),
                _ => {}
            }
        }
        Ok(labels)
    }
}

impl<'p> Tally<'p> {
    fn add(
        &mut self,
        n: usize,
        sample: &Sample,
        columns: &Columns,
        stacks: &Stacks<'p>,
        strings: &Strings<'p>,
        scratch: &mut Vec<(FrameAt, Origin)>,
    ) -> Result<(), Fault> {
        let bytes = value(sample, n, columns.space, "space")?;
        let count = match columns.allocations {
            Some(column) => value(sample, n, column, "allocations")?,
            None => 1,
        };
        self.total = checked_total(self.total, bytes, count)?;
        self.samples = self.samples.saturating_add(1);
        let labels = Labels::read(sample, strings)?;
        let attribution = stacks.attribute(&sample.location_id, scratch)?;
        let part = self
            .parts
            .entry((attribution.map(|a| a.frame), labels.kind.clone()))
            .or_default();
        part.sum.add(bytes, count);
        if let Some(a) = attribution {
            part.user_code |= a.choice.user_code;
            let skipped = u64::try_from(a.choice.index).unwrap_or(u64::MAX);
            self.skipped = self.skipped.saturating_add(skipped);
        }
        if let Some(device) = labels.device {
            part.devices.insert(device.clone());
            self.devices.entry(device).or_default().add(bytes, count);
        }
        self.kinds.entry(labels.kind).or_default().add(bytes, count);
        Ok(())
    }

    fn finish(self, stacks: &Stacks<'p>) -> DeviceProfile {
        let kind = |name: &str| self.kinds.get(name).copied().unwrap_or_default();
        let (buffers, executables) = (kind(KIND_BUFFER), kind(KIND_EXECUTABLE));
        let devices = device_list(self.devices);
        DeviceProfile {
            file: String::new(),
            device: device_summary(&devices),
            total_bytes: self.total.bytes,
            buffer_bytes: buffers.bytes,
            buffer_count: buffers.count,
            executable_bytes: executables.bytes,
            executable_count: executables.count,
            samples: self.samples,
            frames_skipped_as_library: self.skipped,
            devices,
            groups: groups(self.parts, stacks),
        }
    }
}

/// The sample's value in `column`, which must be there and not be negative.
fn value(sample: &Sample, n: usize, column: usize, name: &str) -> Result<u64, Fault> {
    let Some(&v) = sample.value.get(column) else {
        return Err(Fault::Corrupt(format!(
            "sample {n} has {} values, too few for its sample types",
            sample.value.len()
        )));
    };
    u64::try_from(v).map_err(|_| Fault::Corrupt(format!("sample {n} has a negative {name} ({v})")))
}

/// Adds a sample to the total, keeping every sum within `i64`, so that differences
/// between profiles are exact (see [`super::growth`]).
fn checked_total(total: Sum, bytes: u64, count: u64) -> Result<Sum, Fault> {
    const MAX: u64 = i64::MAX as u64;
    let bytes = total.bytes.checked_add(bytes).filter(|b| *b <= MAX);
    let count = total.count.checked_add(count).filter(|c| *c <= MAX);
    match (bytes, count) {
        (Some(bytes), Some(count)) => Ok(Sum { bytes, count }),
        _ => Err(Fault::Corrupt(
            "its byte or buffer counts add up to more than 2^63".into(),
        )),
    }
}

fn device_list(devices: HashMap<Cow<'_, str>, Sum>) -> Vec<DeviceBytes> {
    let mut list: Vec<DeviceBytes> = devices
        .into_iter()
        .map(|(device, sum)| DeviceBytes {
            device: device.into_owned(),
            bytes: sum.bytes,
            count: sum.count,
        })
        .collect();
    list.sort_by(|a, b| natural_order(&a.device, &b.device).then_with(|| a.device.cmp(&b.device)));
    list
}

fn device_summary(devices: &[DeviceBytes]) -> String {
    match devices {
        [] => "no device buffers".into(),
        [one] => one.device.clone(),
        many => format!("{} devices", many.len()),
    }
}

/// Orders labels so that numbers inside them compare as numbers: `cpu:2` < `cpu:10`.
fn natural_order(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        let (Some(ca), Some(cb)) = (a.chars().next(), b.chars().next()) else {
            return a.len().cmp(&b.len());
        };
        let ordering = if ca.is_ascii_digit() && cb.is_ascii_digit() {
            let (na, ra) = split_digits(a);
            let (nb, rb) = split_digits(b);
            (a, b) = (ra, rb);
            compare_numbers(na, nb)
        } else {
            (a, b) = (
                a.get(ca.len_utf8()..).unwrap_or_default(),
                b.get(cb.len_utf8()..).unwrap_or_default(),
            );
            ca.cmp(&cb)
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
}

/// A leading run of ASCII digits and the rest.
fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// Compares digit runs of any length by value.
fn compare_numbers(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Names the parts' frames and merges parts that name the same one (two code objects
/// can share a file, line and name), largest first.
fn groups(
    parts: HashMap<(Option<FrameAt>, Cow<'_, str>), Part<'_>>,
    stacks: &Stacks<'_>,
) -> Vec<ProfileGroup> {
    let mut named: BTreeMap<(String, i64, String, String), Part<'_>> = BTreeMap::new();
    for ((frame, kind), part) in parts {
        let (path, line, function) = frame
            .and_then(|f| stacks.function(f.function_id).map(|func| (func, f.line)))
            .map(|(func, line)| (func.path.to_string(), line, func.name.to_string()))
            .unwrap_or_default();
        let merged = named
            .entry((path, line, function, kind.into_owned()))
            .or_default();
        merged.sum.add(part.sum.bytes, part.sum.count);
        merged.user_code |= part.user_code;
        merged.devices.extend(part.devices);
    }
    let mut groups: Vec<ProfileGroup> = named
        .into_iter()
        .map(|((path, line, function, kind), part)| ProfileGroup {
            frame: if path.is_empty() && function.is_empty() {
                NO_STACK.into()
            } else {
                frames::frame_text(&path, line, &function)
            },
            kind,
            bytes: part.sum.bytes,
            count: part.sum.count,
            devices: u64::try_from(part.devices.len()).unwrap_or(u64::MAX),
            user_code: part.user_code,
            path,
            line,
            function,
        })
        .collect();
    groups.sort_by(|a, b| {
        (Reverse(a.bytes), Reverse(a.count), &a.frame, &a.kind).cmp(&(
            Reverse(b.bytes),
            Reverse(b.count),
            &b.frame,
            &b.kind,
        ))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_labels_sort_by_their_numbers() {
        let mut labels = vec!["cpu:10", "cpu:2", "cpu:1", "TPU_0(host=0)", "cpu:02x"];
        labels.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            labels,
            ["TPU_0(host=0)", "cpu:1", "cpu:2", "cpu:02x", "cpu:10"]
        );
    }
}
