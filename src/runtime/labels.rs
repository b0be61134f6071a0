//! Each kept launch's module label, interned: a step runs a few modules thousands of
//! times, so the labels are held once each and a launch holds the index of its own.
//! Counting launches per module, numbering them, and finding the selected module's
//! then compare small integers instead of copying and comparing tens of thousands of
//! strings (on a scaled capture that was milliseconds while the other core waited).

use std::hash::Hash;

use rustc_hash::FxHashMap as HashMap;

/// The label shown for a launch whose module is not known.
const UNKNOWN: &str = "?";

/// The module label of each launch kept, in the order of `RuntimeScan::executions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LaunchLabels {
    /// Each label once, in the order launches first had it.
    names: Vec<String>,
    /// Per launch, its label's index in `names`; `None` when its module is not known.
    of_launch: Vec<Option<u32>>,
}

impl LaunchLabels {
    /// Interns `labels`, one per launch.
    #[cfg(test)]
    pub(crate) fn new<'a>(labels: impl IntoIterator<Item = Option<&'a str>>) -> Self {
        Self::by_key(labels, |label| label.map(str::to_owned))
    }

    /// The labels of launches known by a key each (`keys`, one per launch): each
    /// distinct key is labelled once, by `label_of`, and keys of one label share it.
    pub(crate) fn by_key<K: Copy + Eq + Hash>(
        keys: impl IntoIterator<Item = K>,
        mut label_of: impl FnMut(K) -> Option<String>,
    ) -> Self {
        let mut id_of_key: HashMap<K, Option<u32>> = HashMap::default();
        let mut id_of_name: HashMap<String, u32> = HashMap::default();
        let mut names = Vec::new();
        let of_launch = keys
            .into_iter()
            .map(|key| {
                *id_of_key.entry(key).or_insert_with(|| {
                    let label = label_of(key)?;
                    Some(*id_of_name.entry(label).or_insert_with_key(|label| {
                        names.push(label.clone());
                        (names.len() - 1) as u32
                    }))
                })
            })
            .collect();
        LaunchLabels { names, of_launch }
    }

    /// The label of launch `i`, if its module is known.
    pub(crate) fn get(&self, i: usize) -> Option<&str> {
        let id = self.of_launch.get(i).copied().flatten()?;
        self.names.get(id as usize).map(String::as_str)
    }

    /// The label of launch `i` as shown: `?` when its module is not known.
    pub(crate) fn shown(&self, i: usize) -> &str {
        self.get(i).unwrap_or(UNKNOWN)
    }

    /// Each launch's label in launch order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        (0..self.of_launch.len()).map(|i| self.get(i))
    }

    /// Whether any launch has `label`.
    pub(crate) fn any_is(&self, label: &str) -> bool {
        self.id(label).is_some()
    }

    /// The launches labelled `label`, in launch order.
    pub(crate) fn launches_of<'s>(
        &'s self,
        label: Option<&str>,
    ) -> impl Iterator<Item = usize> + 's {
        let id = label.and_then(|l| self.id(l));
        self.of_launch
            .iter()
            .enumerate()
            .filter(move |(_, &l)| id.is_some() && l == id)
            .map(|(i, _)| i)
    }

    /// How many launches each label has, with the label.
    pub(crate) fn counts(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        let mut counts = vec![0u64; self.names.len()];
        for id in self.of_launch.iter().flatten() {
            if let Some(c) = counts.get_mut(*id as usize) {
                *c += 1;
            }
        }
        self.names.iter().map(String::as_str).zip(counts)
    }

    /// The last launch of each label, in the order labels first launched.
    pub(crate) fn last_launches(&self) -> Vec<(&str, usize)> {
        let mut last = vec![0usize; self.names.len()];
        for (i, id) in self.of_launch.iter().enumerate() {
            if let Some(slot) = id.and_then(|id| last.get_mut(id as usize)) {
                *slot = i;
            }
        }
        self.names.iter().map(String::as_str).zip(last).collect()
    }

    /// Each launch's number among the launches of its module, in time order (1-based);
    /// launches of unknown modules are numbered among themselves.
    pub(crate) fn ordinals(&self) -> Vec<usize> {
        // The last slot counts the launches of unknown modules.
        let mut seen = vec![0usize; self.names.len() + 1];
        let unknown = self.names.len();
        self.of_launch
            .iter()
            .map(|id| {
                let slot = id.map_or(unknown, |id| id as usize);
                match seen.get_mut(slot) {
                    Some(n) => {
                        *n += 1;
                        *n
                    }
                    None => 0,
                }
            })
            .collect()
    }

    fn id(&self, label: &str) -> Option<u32> {
        let at = self.names.iter().position(|n| n == label)?;
        u32::try_from(at).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels read back as given; counts, numbers and the launches of one label come
    /// from the same launches.
    #[test]
    fn interned_labels_read_back_and_count_as_given() {
        let given = [
            Some("jit_a(1)"),
            None,
            Some("jit_b(2)"),
            Some("jit_a(1)"),
            None,
        ];
        let labels = LaunchLabels::new(given);
        assert_eq!(labels.iter().collect::<Vec<_>>(), given);
        assert_eq!(labels.shown(1), "?");
        assert_eq!(labels.ordinals(), [1, 1, 1, 2, 2]);
        assert_eq!(
            labels.counts().collect::<Vec<_>>(),
            [("jit_a(1)", 2), ("jit_b(2)", 1)]
        );
        assert_eq!(
            labels.launches_of(Some("jit_a(1)")).collect::<Vec<_>>(),
            [0, 3]
        );
        assert_eq!(labels.launches_of(Some("jit_c(3)")).count(), 0);
        assert_eq!(labels.launches_of(None).count(), 0);
        assert!(labels.any_is("jit_b(2)") && !labels.any_is("?"));
        assert_eq!(labels.last_launches(), [("jit_a(1)", 3), ("jit_b(2)", 2)]);
    }
}
