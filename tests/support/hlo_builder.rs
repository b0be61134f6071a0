//! Builds small but realistic `HloProto`s (module + buffer assignment + heap-simulator
//! trace), field by field as XLA's `hlo.proto` numbers them
//! (docs/xplane.md#the-hlo-messages-we-read):
//! entry parameters in their own allocations (donated ones aliased to outputs through
//! `input_output_alias` and `is_parameter_aliased_with_output`), outputs in
//! maybe-live-out allocations, the root tuple's pointer table, and every temporary in
//! one preallocated temp allocation whose heap trace ALLOCs and FREEs them in order.
//! Sources go through `stack_frame_index` as current JAX writes them.

use std::collections::HashMap;

use oomlens::proto::xla::{
    buffer_allocation_proto::Assigned, heap_simulator_trace, hlo_input_output_alias_proto,
    logical_buffer_proto::Location, stack_frame_index_proto, BufferAllocationProto,
    BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto, HloInputOutputAliasProto,
    HloInstructionProto, HloModuleProto, HloProto, LayoutProto, LogicalBufferProto, OpMetadata,
    ShapeProto, StackFrameIndexProto, TileProto,
};

// PrimitiveType numbers (xla/xla_data.proto; docs/xplane.md#the-hlo-messages-we-read).
pub const PRED: i32 = 1;
pub const S8: i32 = 2;
pub const S32: i32 = 4;
pub const F32: i32 = 11;
pub const BF16: i32 = 16;
const TUPLE: i32 = 13;

const ALLOC: i32 = 0;
const FREE: i32 = 1;

pub fn width(ty: i32) -> u64 {
    match ty {
        PRED | S8 => 1,
        BF16 => 2,
        S32 | F32 => 4,
        _ => panic!("type {ty} not used by the scenarios"),
    }
}

/// An array shape with XLA's default layout (`minor_to_major` = n−1 … 0).
pub fn array(ty: i32, dims: &[i64]) -> ShapeProto {
    ShapeProto {
        element_type: ty,
        dimensions: dims.to_vec(),
        layout: Some(LayoutProto {
            minor_to_major: (0..dims.len() as i64).rev().collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The same array with a TPU tiled layout (`T(8,128)`) and, optionally, a memory space
/// (5 = host, `S(5)`).
pub fn tiled(ty: i32, dims: &[i64], memory_space: i64) -> ShapeProto {
    let mut s = array(ty, dims);
    if let Some(l) = s.layout.as_mut() {
        l.tiles = vec![TileProto {
            dimensions: vec![8, 128],
        }];
        l.memory_space = memory_space;
    }
    s
}

pub fn tuple(shapes: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: TUPLE,
        tuple_shapes: shapes,
        ..Default::default()
    }
}

/// Dense bytes of an array shape.
pub fn bytes(shape: &ShapeProto) -> u64 {
    shape.dimensions.iter().product::<i64>() as u64 * width(shape.element_type)
}

/// What a buffer is for, as the scenario author intends it (docs/diagnosis.md#roles); tests
/// compare oomlens's roles with these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intent {
    Forward,
    Backward,
    Workspace,
    Other,
}

/// One instruction to add: its name, opcode, shape, JAX name stack and source line.
#[derive(Debug, Clone)]
pub struct Op {
    pub name: String,
    pub opcode: String,
    pub shape: ShapeProto,
    pub op_name: String,
    pub source: Option<(String, i32)>,
    pub custom_call_target: String,
    /// The padded size XLA assigned (`LogicalBufferProto.size`), when it is not dense.
    pub padded: Option<u64>,
}

pub fn op(name: &str, opcode: &str, shape: ShapeProto, op_name: &str) -> Op {
    Op {
        name: name.to_owned(),
        opcode: opcode.to_owned(),
        shape,
        op_name: op_name.to_owned(),
        source: None,
        custom_call_target: String::new(),
        padded: None,
    }
}

impl Op {
    pub fn at(mut self, file: &str, line: i32) -> Self {
        self.source = Some((file.to_owned(), line));
        self
    }

    pub fn target(mut self, target: &str) -> Self {
        self.custom_call_target = target.to_owned();
        self
    }

    /// A padded buffer size (TPU tiles: `(129, 1024)` → `(136, 1024)`, minor 129 → 256).
    pub fn padded(mut self, bytes: u64) -> Self {
        self.padded = Some(bytes);
        self
    }

    fn size(&self) -> u64 {
        self.padded.unwrap_or_else(|| bytes(&self.shape))
    }
}

/// What the builder put in, summed by the builder itself (not by oomlens).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub parameter_bytes: u64,
    pub parameter_sizes: Vec<u64>,
    pub donated_bytes: u64,
    pub donated_count: u64,
    pub output_bytes: u64,
    pub non_aliased_output_bytes: u64,
    pub non_aliased_output_sizes: Vec<u64>,
    pub temp_bytes: u64,
    pub heap_peak: u64,
    /// Temporaries live at the heap peak: (instruction, shape bytes, intent, source).
    pub live_at_peak: Vec<(String, u64, Intent, String)>,
    pub remat_instructions: u64,
}

impl Facts {
    pub fn role_bytes(&self, intent: Intent) -> u64 {
        self.live_at_peak
            .iter()
            .filter(|b| b.2 == intent)
            .map(|b| b.1)
            .sum()
    }

    /// argument + output + temp − alias, as `memory_analysis()` adds them up.
    pub fn needs(&self) -> u64 {
        self.parameter_bytes + self.output_bytes + self.temp_bytes - self.donated_bytes
    }
}

pub struct ModuleBuilder {
    pub name: String,
    pub id: i64,
    computation_id: i64,
    instructions: Vec<HloInstructionProto>,
    buffers: Vec<LogicalBufferProto>,
    allocations: Vec<BufferAllocationProto>,
    temps: Vec<(i64, u64)>,
    trace: Vec<heap_simulator_trace::Event>,
    aliases: Vec<hlo_input_output_alias_proto::AliasEntryProto>,
    outputs: Vec<(i64, ShapeProto)>,
    frames: StackFrameIndexProto,
    frame_ids: HashMap<(String, i32), i32>,
    next_local: i64,
    next_buffer: i64,
    parameters: i64,
    facts: Facts,
    live: Vec<(i64, String, u64, Intent, String)>,
    live_bytes: u64,
}

impl ModuleBuilder {
    /// `name` is the HloModule name (`jit_train_step`); `id` its unique id, which is
    /// the program id on CPU/GPU (docs/xplane.md#where-the-plans-live).
    pub fn new(name: &str, id: i64) -> Self {
        Self {
            name: name.to_owned(),
            id,
            computation_id: 1,
            instructions: Vec::new(),
            buffers: Vec::new(),
            allocations: Vec::new(),
            temps: Vec::new(),
            trace: Vec::new(),
            aliases: Vec::new(),
            outputs: Vec::new(),
            frames: StackFrameIndexProto::default(),
            frame_ids: HashMap::new(),
            next_local: 1,
            next_buffer: 1,
            parameters: 0,
            facts: Facts::default(),
            live: Vec::new(),
            live_bytes: 0,
        }
    }

    fn frame(&mut self, file: &str, line: i32) -> i32 {
        if let Some(&id) = self.frame_ids.get(&(file.to_owned(), line)) {
            return id;
        }
        let f = &mut self.frames;
        f.file_names.push(file.to_owned());
        f.function_names.push("<module>".to_owned());
        f.file_locations
            .push(stack_frame_index_proto::FileLocation {
                file_name_id: f.file_names.len() as i32,
                function_name_id: f.function_names.len() as i32,
                line,
                column: 1,
            });
        f.stack_frames.push(stack_frame_index_proto::StackFrame {
            file_location_id: f.file_locations.len() as i32,
            parent_frame_id: 0,
        });
        let id = f.stack_frames.len() as i32;
        self.frame_ids.insert((file.to_owned(), line), id);
        id
    }

    /// Adds an instruction; returns its 64-bit id (computation id << 32 | local id).
    pub fn instruction(&mut self, op: &Op) -> i64 {
        let id = (self.computation_id << 32) | self.next_local;
        self.next_local += 1;
        let stack_frame_id = match &op.source {
            Some((file, line)) => self.frame(file, *line),
            None => 0,
        };
        self.instructions.push(HloInstructionProto {
            name: op.name.clone(),
            opcode: op.opcode.clone(),
            shape: Some(op.shape.clone()),
            metadata: Some(OpMetadata {
                op_name: op.op_name.clone(),
                stack_frame_id,
                ..Default::default()
            }),
            custom_call_target: op.custom_call_target.clone(),
            id,
            ..Default::default()
        });
        id
    }

    fn buffer(&mut self, instruction: i64, name: &str, index: &[i64], size: u64) -> i64 {
        let id = self.next_buffer;
        self.next_buffer += 1;
        self.buffers.push(LogicalBufferProto {
            id,
            size: size as i64,
            defined_at: Some(Location {
                instruction_name: name.to_owned(),
                shape_index: index.to_vec(),
                instruction_id: instruction,
            }),
            color: 0,
        });
        id
    }

    fn allocation(&mut self, buffer: i64, size: u64) -> &mut BufferAllocationProto {
        let index = self.allocations.len() as i64;
        self.allocations.push(BufferAllocationProto {
            index,
            size: size as i64,
            assigned: vec![Assigned {
                logical_buffer_id: buffer,
                offset: 0,
                size: size as i64,
                ..Default::default()
            }],
            ..Default::default()
        });
        self.allocations.last_mut().expect("just pushed")
    }

    /// An entry parameter. A donated one is aliased to a new output of the same shape
    /// (`jax.jit(..., donate_argnums=…)`), which costs no extra memory.
    pub fn parameter(&mut self, name: &str, shape: ShapeProto, donated: bool) -> i64 {
        let size = bytes(&shape);
        self.parameter_sized(name, shape, donated, size)
    }

    /// A parameter whose padded size (`LogicalBufferProto.size`) differs from dense.
    pub fn parameter_sized(
        &mut self,
        name: &str,
        shape: ShapeProto,
        donated: bool,
        size: u64,
    ) -> i64 {
        let number = self.parameters;
        self.parameters += 1;
        let mut o = op(name, "parameter", shape.clone(), "");
        o.op_name = String::new();
        let instruction = self.instruction(&o);
        if let Some(i) = self.instructions.last_mut() {
            i.parameter_number = number;
        }
        let buffer = self.buffer(instruction, name, &[], size);
        let host = shape
            .layout
            .as_ref()
            .map(|l| l.memory_space == 5)
            .unwrap_or(false);
        let a = self.allocation(buffer, size);
        a.is_entry_computation_parameter = true;
        a.parameter_number = number;
        if donated {
            a.maybe_live_out = true;
            a.is_parameter_aliased_with_output = true;
        }
        if !host {
            self.facts.parameter_bytes += size;
            self.facts.parameter_sizes.push(size);
        }
        if donated {
            self.facts.donated_bytes += size;
            self.facts.donated_count += 1;
            self.facts.output_bytes += size;
            let index = self.outputs.len() as i64;
            self.aliases
                .push(hlo_input_output_alias_proto::AliasEntryProto {
                    output_shape_index: vec![index],
                    parameter_number: number,
                    parameter_shape_index: vec![],
                    kind: 1, // MAY_ALIAS, as JAX's donation asks
                });
            self.outputs.push((instruction, shape));
        }
        buffer
    }

    /// A non-aliased output (its own maybe-live-out allocation).
    pub fn output(&mut self, op: &Op) -> i64 {
        let size = op.size();
        let instruction = self.instruction(op);
        let buffer = self.buffer(instruction, &op.name, &[], size);
        self.allocation(buffer, size).maybe_live_out = true;
        self.facts.output_bytes += size;
        self.facts.non_aliased_output_bytes += size;
        self.facts.non_aliased_output_sizes.push(size);
        self.outputs.push((instruction, op.shape.clone()));
        buffer
    }

    fn alloc_temp(
        &mut self,
        instruction: i64,
        name: &str,
        index: &[i64],
        size: u64,
        intent: Intent,
        source: String,
    ) -> i64 {
        let buffer = self.buffer(instruction, name, index, size);
        self.temps.push((buffer, size));
        self.trace.push(heap_simulator_trace::Event {
            kind: ALLOC,
            buffer_id: buffer,
            computation_name: format!("main.{}", self.computation_id),
            instruction_name: name.to_owned(),
            share_with_canonical_id: 0,
        });
        let label = if index.is_empty() {
            name.to_owned()
        } else {
            format!(
                "{name}{{{}}}",
                index
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        self.live.push((buffer, label, size, intent, source));
        self.live_bytes += size;
        if self.live_bytes > self.facts.heap_peak {
            self.facts.heap_peak = self.live_bytes;
            self.facts.live_at_peak = self
                .live
                .iter()
                .map(|(_, n, b, i, s)| (n.clone(), *b, *i, s.clone()))
                .collect();
        }
        buffer
    }

    /// A temporary in the preallocated temp block, allocated now in the heap trace.
    pub fn temp(&mut self, op: &Op, intent: Intent) -> i64 {
        let size = op.size();
        let instruction = self.instruction(op);
        let source = op
            .source
            .as_ref()
            .map(|(f, l)| format!("{f}:{l}"))
            .unwrap_or_default();
        self.alloc_temp(instruction, &op.name, &[], size, intent, source)
    }

    /// A library call (`__cublas$lt$matmul`, `__cudnn$convForward`) whose output is a
    /// tuple (result, `s8[workspace]`): the s8 element is the library's scratch.
    pub fn library_call(&mut self, op: &Op, result_intent: Intent, workspace: u64) -> (i64, i64) {
        let result_shape = op.shape.clone();
        let mut call = op.clone();
        call.opcode = "custom-call".into();
        call.shape = tuple(vec![result_shape.clone(), array(S8, &[workspace as i64])]);
        let instruction = self.instruction(&call);
        let source = op
            .source
            .as_ref()
            .map(|(f, l)| format!("{f}:{l}"))
            .unwrap_or_default();
        let result = self.alloc_temp(
            instruction,
            &op.name,
            &[0],
            bytes(&result_shape),
            result_intent,
            source.clone(),
        );
        let scratch = self.alloc_temp(
            instruction,
            &op.name,
            &[1],
            workspace,
            Intent::Workspace,
            source,
        );
        (result, scratch)
    }

    /// Frees a temporary in the heap trace.
    pub fn free(&mut self, buffer: i64) {
        let pos = self
            .live
            .iter()
            .position(|l| l.0 == buffer)
            .expect("freeing a live temporary");
        let (_, name, size, _, _) = self.live.remove(pos);
        self.live_bytes -= size;
        self.trace.push(heap_simulator_trace::Event {
            kind: FREE,
            buffer_id: buffer,
            computation_name: format!("main.{}", self.computation_id),
            instruction_name: name,
            share_with_canonical_id: 0,
        });
    }

    pub fn free_all(&mut self) {
        let ids: Vec<i64> = self.live.iter().map(|l| l.0).collect();
        for id in ids {
            self.free(id);
        }
    }

    /// `n` instructions XLA's rematerialization pass cloned (`<name>.remat`, `.remat2`).
    pub fn remat_instructions(&mut self, n: u64, op_name: &str) {
        for i in 0..n {
            let suffix = if i % 3 == 2 { "remat2" } else { "remat" };
            let o = op(
                &format!("loop_multiply_fusion.{}.{suffix}", 100 + i),
                "fusion",
                array(F32, &[8, 1024]),
                op_name,
            );
            self.instruction(&o);
        }
        self.facts.remat_instructions += n;
    }

    /// Builds the HloProto. `temp_bytes` is the temp allocation's size; `None` means
    /// the heap peak (what the heap simulator would size it to).
    pub fn build(mut self, temp_bytes: Option<u64>) -> (HloProto, Facts) {
        // The root tuple and its pointer table (an output allocation of 8 bytes/element).
        let root_shape = tuple(self.outputs.iter().map(|(_, s)| s.clone()).collect());
        let root_ids: Vec<i64> = self.outputs.iter().map(|(i, _)| *i).collect();
        let table = 8 * root_ids.len() as u64;
        let root = self.instruction(&op("tuple", "tuple", root_shape, ""));
        if let Some(i) = self.instructions.last_mut() {
            i.operand_ids = root_ids;
        }
        let table_buffer = self.buffer(root, "tuple", &[], table);
        {
            let a = self.allocation(table_buffer, table);
            a.maybe_live_out = true;
            a.is_tuple = true;
        }
        self.facts.output_bytes += table;
        self.facts.non_aliased_output_bytes += table;

        let temp_size = temp_bytes.unwrap_or(self.facts.heap_peak);
        assert!(
            temp_size >= self.facts.heap_peak,
            "scenario bug: temp block {temp_size} below its heap peak {}",
            self.facts.heap_peak
        );
        if !self.temps.is_empty() {
            let index = self.allocations.len() as i64;
            // Offsets: first fit in allocation order (never exceeds the peak since the
            // trace allocates then frees in stack order in these scenarios).
            let mut offset = 0u64;
            let assigned = self
                .temps
                .iter()
                .map(|&(b, s)| {
                    let a = Assigned {
                        logical_buffer_id: b,
                        offset: offset as i64,
                        size: s as i64,
                        ..Default::default()
                    };
                    offset = (offset + s) % temp_size.max(1);
                    a
                })
                .collect();
            self.allocations.push(BufferAllocationProto {
                index,
                size: temp_size as i64,
                assigned,
                ..Default::default()
            });
            self.facts.temp_bytes = temp_size;
        }
        let entry_name = format!("main.{}", self.computation_id);
        let module = HloModuleProto {
            name: self.name.clone(),
            entry_computation_name: entry_name.clone(),
            computations: vec![HloComputationProto {
                name: entry_name,
                instructions: self.instructions,
                id: self.computation_id,
                root_id: root,
                ..Default::default()
            }],
            id: self.id,
            entry_computation_id: self.computation_id,
            input_output_alias: Some(HloInputOutputAliasProto {
                entries: self.aliases,
            }),
            stack_frame_index: Some(self.frames),
            ..Default::default()
        };
        let assignment = BufferAssignmentProto {
            logical_buffers: self.buffers,
            buffer_allocations: self.allocations,
            heap_simulator_traces: if self.trace.is_empty() {
                vec![]
            } else {
                vec![HeapSimulatorTrace {
                    events: self.trace,
                    whole_module_simulation: false,
                    buffer_allocation_index: 0,
                }]
            },
            ..Default::default()
        };
        (
            HloProto {
                hlo_module: Some(module),
                buffer_assignment: Some(assignment),
            },
            self.facts,
        )
    }
}
