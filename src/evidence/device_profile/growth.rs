//! What changed between profiles taken at successive points of one run.

use std::collections::{BTreeSet, HashMap};

use super::{DeviceProfile, FrameGrowth, ProfileGroup};

/// A group's identity across profiles: the frame (by its path, not only its file name,
/// so that two `model.py` stay apart) and the kind.
type Key<'a> = (&'a str, i64, &'a str, &'a str);

fn key(group: &ProfileGroup) -> Key<'_> {
    (&group.path, group.line, &group.function, &group.kind)
}

/// One profile's groups by key, with bytes and count summed (a profile built by hand
/// may repeat a key).
struct Indexed<'a> {
    groups: HashMap<Key<'a>, (&'a ProfileGroup, u64, u64)>,
}

impl<'a> Indexed<'a> {
    fn new(profile: &'a DeviceProfile) -> Self {
        let mut groups: HashMap<Key<'a>, (&'a ProfileGroup, u64, u64)> = HashMap::new();
        for group in &profile.groups {
            let entry = groups.entry(key(group)).or_insert((group, 0, 0));
            entry.1 = entry.1.saturating_add(group.bytes);
            entry.2 = entry.2.saturating_add(group.count);
        }
        Indexed { groups }
    }

    fn bytes(&self, key: &Key<'a>) -> u64 {
        self.groups.get(key).map_or(0, |g| g.1)
    }

    fn count(&self, key: &Key<'a>) -> u64 {
        self.groups.get(key).map_or(0, |g| g.2)
    }
}

/// How the bytes of each frame and kind changed from the first profile to the last,
/// largest change (either way) first; frames that did not change are left out. Over
/// all frames the changes add up to the change of `total_bytes`, since the groups of
/// each profile add up to its total. Fewer than two profiles: nothing changed.
pub fn growth(profiles: &[DeviceProfile]) -> Vec<FrameGrowth> {
    let [first, .., last] = profiles else {
        return Vec::new();
    };
    let series: Vec<Indexed<'_>> = profiles.iter().map(Indexed::new).collect();
    let (Some(start), Some(end)) = (series.first(), series.last()) else {
        return Vec::new();
    };
    let keys: BTreeSet<Key<'_>> = first.groups.iter().chain(&last.groups).map(key).collect();
    let mut changes: Vec<FrameGrowth> = keys
        .into_iter()
        .filter_map(|k| {
            let (first_bytes, last_bytes) = (start.bytes(&k), end.bytes(&k));
            let bytes = difference(first_bytes, last_bytes);
            let count = difference(start.count(&k), end.count(&k));
            if bytes == 0 && count == 0 {
                return None;
            }
            let named = end.groups.get(&k).or_else(|| start.groups.get(&k))?.0;
            Some(FrameGrowth {
                frame: named.frame.clone(),
                kind: named.kind.clone(),
                bytes,
                count,
                first_bytes,
                last_bytes,
                rose_every_step: series
                    .windows(2)
                    .all(|pair| matches!(pair, [a, b] if b.bytes(&k) > a.bytes(&k))),
                user_code: named.user_code,
                path: named.path.clone(),
                line: named.line,
                function: named.function.clone(),
            })
        })
        .collect();
    changes.sort_by(|a, b| {
        b.bytes
            .unsigned_abs()
            .cmp(&a.bytes.unsigned_abs())
            .then_with(|| b.count.unsigned_abs().cmp(&a.count.unsigned_abs()))
            .then_with(|| (&a.frame, &a.kind, &a.path).cmp(&(&b.frame, &b.kind, &b.path)))
    });
    changes
}

/// `to - from`, exact for the sums [`super::read`] produces (each at most `i64::MAX`),
/// clamped for profiles built otherwise.
fn difference(from: u64, to: u64) -> i64 {
    let d = i128::from(to).saturating_sub(i128::from(from));
    i64::try_from(d).unwrap_or(if d > 0 { i64::MAX } else { i64::MIN })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(frame: &str, kind: &str, bytes: u64, count: u64) -> ProfileGroup {
        ProfileGroup {
            frame: frame.into(),
            kind: kind.into(),
            bytes,
            count,
            path: format!("/p/{frame}"),
            ..Default::default()
        }
    }

    fn profile(groups: Vec<ProfileGroup>) -> DeviceProfile {
        DeviceProfile {
            total_bytes: groups.iter().map(|g| g.bytes).sum(),
            groups,
            ..Default::default()
        }
    }

    #[test]
    fn changes_are_signed_sorted_and_add_up_to_the_total_change() {
        let a = profile(vec![
            group("a", "buffer", 100, 1),
            group("b", "buffer", 500, 5),
            group("c", "buffer", 7, 1),
        ]);
        let b = profile(vec![
            group("a", "buffer", 400, 4),
            group("b", "buffer", 300, 3),
            group("c", "buffer", 7, 1),
            group("d", "executable", 50, 1),
        ]);
        let changes = growth(&[a.clone(), b.clone()]);
        let summary: Vec<(&str, i64, i64)> = changes
            .iter()
            .map(|g| (g.frame.as_str(), g.bytes, g.count))
            .collect();
        assert_eq!(summary, [("a", 300, 3), ("b", -200, -2), ("d", 50, 1)]);
        let sum: i64 = changes.iter().map(|g| g.bytes).sum();
        assert_eq!(sum, b.total_bytes as i64 - a.total_bytes as i64);
    }

    #[test]
    fn rising_every_step_is_told_apart_from_rising_overall() {
        let step =
            |a: u64, b: u64| profile(vec![group("a", "buffer", a, 1), group("b", "buffer", b, 1)]);
        let changes = growth(&[step(1, 1), step(2, 5), step(3, 2), step(4, 3)]);
        let rose: Vec<(&str, bool)> = changes
            .iter()
            .map(|g| (g.frame.as_str(), g.rose_every_step))
            .collect();
        assert_eq!(rose, [("a", true), ("b", false)]);
    }

    #[test]
    fn fewer_than_two_profiles_change_nothing() {
        assert!(growth(&[]).is_empty());
        assert!(growth(&[profile(vec![group("a", "buffer", 1, 1)])]).is_empty());
    }

    #[test]
    fn extreme_values_clamp_instead_of_overflowing() {
        assert_eq!(difference(0, u64::MAX), i64::MAX);
        assert_eq!(difference(u64::MAX, 0), i64::MIN);
        assert_eq!(difference(5, 3), -2);
    }
}
