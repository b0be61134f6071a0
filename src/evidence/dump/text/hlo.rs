//! HLO text: the optimized module (`*after_optimizations.txt`) and the instruction
//! each value comes from in the values dump (` from instruction: %…`). From it the text
//! plan takes what the buffer assignment lacks: opcodes, `op_name`s, source lines
//! (through the module's stack-frame tables), the donated parameters
//! (`input_output_alias={…}` in the `HloModule` line), the module's name, and the
//! instructions that count as rematerialized or as host callbacks.

use std::collections::HashMap;

use super::assignment::shape_index;
use super::attrs::{bracketed, pairs, quoted, quoted_attribute};

/// What the plan needs of one instruction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Instruction {
    pub opcode: String,
    pub op_name: String,
    pub source_file: String,
    pub source_line: i64,
    pub stack_frame_id: i64,
    pub custom_call_target: String,
}

/// The module as far as the text files tell it.
#[derive(Debug, Clone, Default)]
pub struct Hlo {
    pub module_name: Option<String>,
    /// `(parameter, shape index)` of every input/output alias; `None` when no
    /// `HloModule` line was read.
    pub aliases: Option<Vec<(i64, Vec<i64>)>>,
    /// By instruction name (unique within a module).
    pub instructions: HashMap<String, Instruction>,
    /// Whether the whole module text was read (else only the values' instructions).
    pub has_module: bool,
    files: HashMap<i64, String>,
    /// Location id → (file id, line).
    locations: HashMap<i64, (i64, i64)>,
    /// Frame id → location id (the innermost frame is all a source line needs).
    frames: HashMap<i64, i64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Code,
    Files,
    Functions,
    Locations,
    Frames,
}

impl Hlo {
    /// Reads the optimized module's text.
    pub fn read_module(&mut self, text: &str) {
        let mut section = Section::Code;
        for line in text.lines() {
            if let Some(header) = line.strip_prefix("HloModule ") {
                self.header(header);
                continue;
            }
            section = match line.trim() {
                "" => Section::Code,
                "FileNames" => Section::Files,
                "FunctionNames" => Section::Functions,
                "FileLocations" => Section::Locations,
                "StackFrames" => Section::Frames,
                row => {
                    self.row(section, line, row);
                    continue;
                }
            };
        }
        self.has_module = true;
    }

    /// Reads the instructions named in a values dump (or the `Used values:` part of an
    /// buffer-assignment file of some XLA versions); the module text, when read, wins.
    pub fn read_values(&mut self, text: &str) {
        for line in text.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("from instruction: ") {
                if let Some((name, i)) = instruction(rest) {
                    self.instructions.entry(name).or_insert(i);
                }
            }
        }
    }

    fn row(&mut self, section: Section, line: &str, row: &str) {
        match section {
            Section::Code => {
                if let Some((name, i)) = instruction(line) {
                    self.instructions.insert(name, i);
                }
            }
            Section::Functions => {}
            Section::Files => {
                if let Some((id, rest)) = id_and_rest(row) {
                    if let Some((file, _)) = quoted(rest) {
                        self.files.insert(id, file);
                    }
                }
            }
            Section::Locations | Section::Frames => {
                let Some((id, rest)) = id_and_rest(row) else {
                    return;
                };
                let Some((inside, _)) = bracketed(rest) else {
                    return;
                };
                let values: HashMap<&str, i64> = pairs(inside)
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
                    .collect();
                let get = |k: &str| values.get(k).copied().unwrap_or(0);
                if section == Section::Locations {
                    self.locations
                        .insert(id, (get("file_name_id"), get("line")));
                } else {
                    self.frames.insert(id, get("file_location_id"));
                }
            }
        }
    }

    /// `jit_f, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, …`
    fn header(&mut self, header: &str) {
        let end = header
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(header.len());
        self.module_name = header.get(..end).map(str::to_owned);
        let mut aliases = Vec::new();
        if let Some(at) = header.find("input_output_alias=") {
            let block = header.get(at.saturating_add("input_output_alias=".len())..);
            if let Some((inside, _)) = block.and_then(bracketed) {
                aliases = alias_entries(inside);
            }
        }
        self.aliases = Some(aliases);
    }

    /// `file:line` of an instruction, from its `source_file` or else its innermost
    /// stack frame, as the capture path resolves it.
    pub fn source_of(&self, i: &Instruction) -> String {
        if !i.source_file.is_empty() {
            return format!("{}:{}", i.source_file, i.source_line);
        }
        let location = self
            .frames
            .get(&i.stack_frame_id)
            .and_then(|l| self.locations.get(l));
        let Some(&(file, line)) = location else {
            return String::new();
        };
        match self.files.get(&file) {
            Some(f) if !f.is_empty() => format!("{f}:{line}"),
            _ => String::new(),
        }
    }
}

/// `1 "path"` / `1 {…}` → (1, the rest).
fn id_and_rest(row: &str) -> Option<(i64, &str)> {
    let (id, rest) = row.split_once(' ')?;
    Some((id.parse().ok()?, rest.trim_start()))
}

/// ` {0}: (0, {}, may-alias), {1}: (2, {1}, must-alias) ` → [(0, []), (2, [1])].
fn alias_entries(mut inside: &str) -> Vec<(i64, Vec<i64>)> {
    let mut out = Vec::new();
    while let Some(at) = inside.find(": (") {
        let Some((entry, rest)) = inside.get(at.saturating_add(2)..).and_then(bracketed) else {
            break;
        };
        inside = rest;
        let Some((number, rest)) = entry.split_once(',') else {
            continue;
        };
        let index = rest
            .trim_start()
            .split_once('}')
            .and_then(|(i, _)| shape_index(&format!("{i}}}")));
        if let (Ok(number), Some(index)) = (number.trim().parse(), index) {
            out.push((number, index));
        }
    }
    out
}

/// `[ROOT ]%name = shape opcode(operands), attributes…` → the name and what the plan
/// needs of it; `None` for any other line.
pub fn instruction(line: &str) -> Option<(String, Instruction)> {
    let s = line.trim_start();
    let s = s.strip_prefix("ROOT ").unwrap_or(s);
    let (name, rest) = s.split_once(" = ")?;
    let name = name.strip_prefix('%').unwrap_or(name);
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let after_shape = if rest.starts_with('(') {
        bracketed(rest)?.1
    } else {
        rest.split_once(' ')?.1
    };
    let (opcode, _) = after_shape.trim_start().split_once('(')?;
    if opcode.is_empty() || opcode.contains(char::is_whitespace) {
        return None;
    }
    let mut i = Instruction {
        opcode: opcode.to_owned(),
        custom_call_target: quoted_attribute(after_shape, "custom_call_target").unwrap_or_default(),
        ..Default::default()
    };
    let metadata = after_shape
        .find("metadata={")
        .and_then(|at| after_shape.get(at.saturating_add("metadata=".len())..))
        .and_then(bracketed);
    for (key, value) in metadata
        .map(|(inside, _)| pairs(inside))
        .unwrap_or_default()
    {
        match key {
            "op_name" => i.op_name = value,
            "source_file" => i.source_file = value,
            "source_line" => i.source_line = value.parse().unwrap_or(0),
            "stack_frame_id" => i.stack_frame_id = value.parse().unwrap_or(0),
            _ => {}
        }
    }
    Some((name.to_owned(), i))
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    const MODULE: &str = r#"HloModule jit_train_step, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (3, {1}, must-alias) }, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

FileNames
1 "/src/train.py"

FunctionNames
1 "step"

FileLocations
1 {file_name_id=1 function_name_id=1 line=236 end_line=236 column=16 end_column=47}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


ENTRY %main.14 (x.1: f32[2]) -> (f32[2], s32[]) {
  %x.1 = f32[2]{0} parameter(0), metadata={op_name="x"}
  %div.3 = f32[2]{0} divide(%x.1, %x.1), metadata={op_name="jit(f)/jvp()/div" stack_frame_id=1}
  %cc = s8[64]{0} custom-call(%x.1), custom_call_target="xla_ffi_python_cpu_callback", metadata={op_name="jit(f)/debug_print" source_file="a.py" source_line=7}
  %exp.remat2 = f32[2]{0} exponential(%div.3)
  ROOT %tuple = (f32[2]{0}, s32[]) tuple(%div.3, %c), metadata={op_name="a = b"}
}
"#;

    #[test]
    fn reads_the_module_header_tables_and_instructions() {
        let mut hlo = Hlo::default();
        hlo.read_module(MODULE);
        assert_eq!(hlo.module_name.as_deref(), Some("jit_train_step"));
        assert_eq!(hlo.aliases, Some(vec![(0, vec![]), (3, vec![1])]));
        assert_eq!(hlo.instructions.len(), 5);
        let div = &hlo.instructions["div.3"];
        assert_eq!(div.opcode, "divide");
        assert_eq!(div.op_name, "jit(f)/jvp()/div");
        assert_eq!(hlo.source_of(div), "/src/train.py:236");
        let cc = &hlo.instructions["cc"];
        assert_eq!(cc.custom_call_target, "xla_ffi_python_cpu_callback");
        assert_eq!(hlo.source_of(cc), "a.py:7");
        assert_eq!(hlo.instructions["tuple"].opcode, "tuple");
        assert_eq!(hlo.instructions["tuple"].op_name, "a = b");
        assert_eq!(hlo.source_of(&hlo.instructions["x.1"]), "");
    }

    #[test]
    fn a_module_without_aliases_has_none_donated() {
        let mut hlo = Hlo::default();
        hlo.read_module("HloModule f, is_scheduled=true\n");
        assert_eq!(hlo.aliases, Some(vec![]));
        assert!(hlo.has_module);
    }

    #[test]
    fn reads_instructions_from_a_values_dump() {
        let mut hlo = Hlo::default();
        hlo.read_values(
            "<2 reduce_max.5 @0>\n positions:\n  reduce_max.5\n uses:\n  (none)\n from instruction: %reduce_max.5 = f32[] maximum(%a, %b), metadata={op_name=\"jit(f)/jvp()/reduce_max\" stack_frame_id=6}\n",
        );
        assert_eq!(hlo.instructions["reduce_max.5"].opcode, "maximum");
        assert!(!hlo.has_module);
        assert_eq!(hlo.aliases, None);
    }

    #[test]
    fn ignores_lines_that_are_not_instructions() {
        for line in [
            "ENTRY %main.14 (x.1: f32[2]) -> f32[2] {",
            "}",
            "%a b = f32[] add(%x)",
            "%a = (f32[] add(%x)",
            "%a = f32[]",
            " = f32[] add()",
        ] {
            assert!(instruction(line).is_none(), "{line}");
        }
    }
}
