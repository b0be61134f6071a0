//! Looking up what a sample refers to: strings by index, frames by location and
//! function id. Every reference is checked: a dangling one is a corrupt profile.

use std::borrow::Cow;
use std::collections::HashMap;

use super::frames::{self, Choice, Origin};
use super::Fault;
use crate::proto::pprof::{Line, Profile};

/// The profile's string table. Index 0 is always the empty string (pprof's rule).
pub(super) struct Strings<'p>(&'p [Vec<u8>]);

impl<'p> Strings<'p> {
    pub fn new(profile: &'p Profile) -> Self {
        Strings(&profile.string_table)
    }

    /// The string at `index`, with bytes that are not UTF-8 replaced.
    pub fn get(&self, index: i64) -> Result<Cow<'p, str>, Fault> {
        if index == 0 {
            return Ok(Cow::Borrowed(""));
        }
        usize::try_from(index)
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|bytes| String::from_utf8_lossy(bytes))
            .ok_or_else(|| {
                Fault::Corrupt(format!(
                    "a string index {index} lies outside its string table of {} entries",
                    self.0.len()
                ))
            })
    }
}

/// One frame of a stack: the function it ran and the line it was at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct FrameAt {
    pub function_id: u64,
    pub line: i64,
}

/// A function as the report names it.
#[derive(Debug)]
pub(super) struct Function<'p> {
    pub name: Cow<'p, str>,
    pub path: Cow<'p, str>,
    pub origin: Origin,
}

/// The frame a stack is attributed to.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attribution {
    pub frame: FrameAt,
    pub choice: Choice,
}

/// Locations and functions by id.
pub(super) struct Stacks<'p> {
    locations: HashMap<u64, &'p [Line]>,
    functions: HashMap<u64, Function<'p>>,
}

impl<'p> Stacks<'p> {
    pub fn index(profile: &'p Profile, strings: &Strings<'p>) -> Result<Self, Fault> {
        let locations = profile
            .location
            .iter()
            .map(|l| (l.id, l.line.as_slice()))
            .collect();
        let mut functions = HashMap::with_capacity(profile.function.len());
        for f in &profile.function {
            let path = strings.get(f.filename)?;
            let function = Function {
                name: strings.get(f.name)?,
                origin: frames::origin(&path),
                path,
            };
            functions.insert(f.id, function);
        }
        Ok(Stacks {
            locations,
            functions,
        })
    }

    pub fn function(&self, id: u64) -> Option<&Function<'p>> {
        self.functions.get(&id)
    }

    /// The frame that a stack of `location_ids` (innermost first) is attributed to, or
    /// `None` for an empty stack. `scratch` holds the stack's frames, reused between
    /// samples.
    pub fn attribute(
        &self,
        location_ids: &[u64],
        scratch: &mut Vec<(FrameAt, Origin)>,
    ) -> Result<Option<Attribution>, Fault> {
        scratch.clear();
        for id in location_ids {
            let lines = self.locations.get(id).ok_or_else(|| {
                Fault::Corrupt(format!("a sample refers to location {id}, which it lacks"))
            })?;
            // Several lines are calls inlined into one another, the innermost first,
            // so they extend the stack in order.
            for line in *lines {
                let function = self.function(line.function_id).ok_or_else(|| {
                    Fault::Corrupt(format!(
                        "location {id} refers to function {}, which it lacks",
                        line.function_id
                    ))
                })?;
                let frame = FrameAt {
                    function_id: line.function_id,
                    line: line.line,
                };
                scratch.push((frame, function.origin));
            }
        }
        let Some(choice) = frames::choose(scratch.iter().map(|(_, origin)| *origin)) else {
            return Ok(None);
        };
        Ok(scratch.get(choice.index).map(|(frame, _)| Attribution {
            frame: *frame,
            choice,
        }))
    }
}
