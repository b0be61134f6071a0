//! TensorFlow's `OOM when allocating tensor with shape[…]` on its own: the message states
//! the tensor and nothing else (neither the device's memory nor what is in use). When
//! the tensor is an activation of a batch — three dimensions or more, the first one the
//! batch, tens of MiB or more — the usual cause, and the reading of most engineers who
//! answer such reports, is the model at that batch and input size needing more than the
//! GPU has. The line says so as an estimate and says how to tell the other case (memory
//! held by another process) apart; a small or weight-shaped tensor stays "too little to
//! tell".

use crate::diagnosis::line::{advice, Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::{OomKind, OomMessage};
use crate::plan::shape::dims_of;
use crate::report::model::{Diagnosis, DiagnosisId, Label};
use crate::units::size;

/// An activation this large is a batch's share of the model, not the last small
/// allocation that happened to fail (16 MiB: 4 Mi float32 elements).
const BATCH_ACTIVATION: u64 = 16 << 20;
/// The element count that makes [`BATCH_ACTIVATION`] in float32, for shapes printed
/// without their type.
const BATCH_ELEMENTS: u64 = BATCH_ACTIVATION / 4;

/// The failure message of a text with no plan, when no line before names a cause: what
/// the `likely_*` rules read a cause from.
pub(super) fn unexplained<'r>(cx: &Context<'r>, lines: &[Diagnosis]) -> Option<&'r OomMessage> {
    let m = cx.failure_message()?;
    let explained = cx.module.is_some() || lines.iter().any(|d| d.id.names_a_cause());
    (!explained).then_some(m)
}

/// The lead line for a TensorFlow tensor out-of-memory message that states nothing
/// else, when no line before names a cause.
pub fn likely_batch(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let activation = Activation::of(m)?;
    let batch = activation.dims[0];
    let size_text = match activation.bytes {
        Some(b) => format!("a {} ", size(b)),
        None => "an ".to_owned(),
    };
    let text = format!(
        "TensorFlow could not allocate {size_text}activation {} (read) and the message states nothing else: a tensor of {} dimensions whose first, {batch}, is most likely the batch, so the usual cause is the model at this batch and input size needing more than the GPU has (estimated)",
        activation.shape,
        activation.dims.len(),
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the batch's activations together with the model exceed the GPU's memory; the same message appears when another process holds the GPU, which the message cannot show",
    );
    let half = (batch / 2).max(1);
    let fix = advice;
    Some(line.fixes(vec![
        fix(
            format!("halve the batch ({batch} → {half}) or the input size"),
            Some("more steps per epoch"),
        ),
        fix(
            "use mixed precision (float16 activations)".into(),
            Some("some numerical care (loss scaling)"),
        ),
        fix(
            "recompute activations in the backward pass (tf.recompute_grad)".into(),
            Some("about a third more compute"),
        ),
        fix(
            "if a much smaller batch also fails, something else holds the GPU: nvidia-smi lists the processes; tf.config.experimental.set_memory_growth(gpu, True) stops TensorFlow taking it all".into(),
            None,
        ),
    ]))
}

/// A two-dimensional tensor this large (1 GiB) is no batch's activation, nor an
/// ordinary layer (VGG-16's largest weight, fc6, is 392 MiB): it is one weight,
/// embedding or one-hot sized wrong.
const OVERSIZED_MATRIX: u64 = 1 << 30;
/// …over an axis this long (a flattened feature map, a vocabulary).
const HUGE_AXIS: u64 = 16 << 10;

/// The lead line for a TensorFlow tensor message whose tensor is a matrix of a GiB or more
/// over a huge axis (`[173056,4096]` after a Flatten, `[25000,30522]` a one-hot over
/// the vocabulary, an optimizer slot of such a weight): one layer sized wrong, whatever
/// the batch. Only when no line before names a cause and the message states no
/// capacity.
pub fn likely_oversized_matrix(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines).filter(|m| m.kind == OomKind::Short)?;
    if oom::capacity(m).is_some() {
        return None;
    }
    let shape = m.requested_shape.as_deref()?;
    let dims = tensor_dims(shape);
    let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d))?;
    // Without its type, a tensor is read as float32, TensorFlow's default.
    let (bytes, typed) = match m.requested_bytes_from_shape.or(m.requested_bytes) {
        Some(b) => (b, true),
        None => (elements.saturating_mul(4), false),
    };
    let huge_axis = dims.iter().copied().max().unwrap_or(0);
    if dims.len() != 2 || bytes < OVERSIZED_MATRIX || huge_axis < HUGE_AXIS {
        return None;
    }
    let typed = if typed { "" } else { ", if float32" };
    let text = format!(
        "TensorFlow could not allocate a {}{typed} matrix {shape} (read): a two-dimensional tensor this large, over an axis of {huge_axis}, is one weight, embedding or one-hot, not a batch's activation: one layer is sized wrong, whatever the batch (estimated)",
        size(bytes),
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Estimated,
        text,
        "a layer whose size comes from a huge axis: a Dense layer on a flattened feature map, a one-hot over the vocabulary; its optimizer slots (Adam keeps two) take as much again each",
    );
    let fix = |text: &str, cost: &str| advice(text, Some(cost));
    Some(line.fixes(vec![
        fix(
            "before a Dense layer, pool the feature map (GlobalAveragePooling2D) or shrink it with strided convolutions instead of flattening it",
            "a different head; retraining it",
        ),
        fix(
            "for labels or tokens over a vocabulary, look rows up (an Embedding layer, sparse_categorical_crossentropy on integer labels) instead of one-hot matrices",
            "none in accuracy",
        ),
        fix(
            "check the shape is the one intended (a transposed input, a wrong axis)",
            "none",
        ),
    ]))
}

/// Half the memory of the largest accelerators (288 GB): one tensor at least this large
/// is over half of any device, whatever the device.
const HALF_OF_ANY_DEVICE: u64 = 144 << 30;

/// The lead line for a TensorFlow tensor message whose one tensor is over half of any
/// accelerator's memory (`shape[50982027264] and type float`, 190 GiB): that tensor is
/// the problem, not the batch or the device: a shape gone wrong, or an op that
/// materializes far more than intended. Only when no line before names a cause.
pub fn likely_giant_tensor(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines).filter(|m| m.kind == OomKind::Short)?;
    let shape = m.requested_shape.as_deref()?;
    let bytes = m.requested_bytes_from_shape.or(m.requested_bytes)?;
    if bytes < HALF_OF_ANY_DEVICE {
        return None;
    }
    let text = format!(
        "TensorFlow could not allocate one tensor of {} {shape} (read): over half the memory of the largest accelerators, so this one tensor is the problem on any device: a shape gone wrong, or an op that materializes far more than intended (a vectorized gradient, an all-pairs or one-hot tensor) (estimated)",
        size(bytes),
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Estimated,
        text,
        "one tensor whose size comes from the inputs' sizes multiplied together",
    );
    Some(line.fixes(vec![
        advice(
            "find the op named in the message and check the shape it builds is the one intended (an axis multiplied in by mistake, a broadcast)",
            Some("none"),
        ),
        advice(
            "compute it in chunks (tf.map_fn, a loop over slices, or a smaller input per call) and reduce each chunk before the next",
            Some("more steps, slower"),
        ),
    ]))
}

/// Two trailing axes this long and equal make a square that grows with the square of a
/// length (a sequence of 2 Ki tokens, an image of 2 Ki pixels a side).
const SQUARE_AXIS: u64 = 2 << 10;

/// The lead line for a TensorFlow tensor message whose tensor of a GiB or more ends in
/// two equal, long axes (`[32,4,4096,4096]`, `[5,64,4890,4890]`): attention scores or
/// pairwise distances over a long sequence, or the feature map of a huge image. One
/// tensor quadratic in a length is the problem, not the batch: halving the batch still
/// leaves it. Only when no line before names a cause and the message states no capacity.
pub fn likely_square(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let activation = Activation::of(m)?;
    let [.., rows, cols] = activation.dims[..] else {
        return None;
    };
    let bytes = activation.bytes_or_float32();
    if rows != cols || rows < SQUARE_AXIS || bytes < OVERSIZED_MATRIX {
        return None;
    }
    let typed = activation.assumed_type();
    let text = format!(
        "TensorFlow could not allocate a {}{typed} tensor {} (read) that ends in {rows} × {rows}: one tensor quadratic in a length (attention scores or pairwise distances over {rows} positions, or the feature map of an image {rows} pixels a side), which halving the batch only halves (estimated)",
        size(bytes),
        activation.shape,
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Estimated,
        text,
        "a tensor that grows with the square of the sequence length or the image side: doubling that length takes four times the memory",
    );
    Some(line.fixes(vec![
        advice(
            "for attention: a memory-efficient attention that never holds the whole score matrix (flash attention, chunked or blockwise attention), or a shorter or windowed sequence",
            Some("a different kernel; windowed attention sees less context"),
        ),
        advice(
            "for images: resize, crop or tile the inputs, or downsample early (a strided first convolution)",
            Some("less resolution per pass"),
        ),
        advice(
            "for pairwise distances: compute them in blocks and reduce each block (top-k, sums) before the next",
            Some("more code"),
        ),
    ]))
}

/// A first axis this long is no training batch: a whole dataset run as one batch, or one
/// entry per pair of items.
const NOT_A_BATCH: u64 = 10_000;

/// What makes one activation of a GiB or more the problem rather than the batch.
enum Unsplittable {
    /// A batch of one: halving the batch is no longer possible.
    OneSample,
    /// A first axis of [`NOT_A_BATCH`] or more: a dataset in one batch, or all pairs.
    HugeFirstAxis(u64),
    /// A last axis over a vocabulary ([`HUGE_AXIS`] or more): logits over every word.
    Vocabulary(u64),
    /// One activation of [`A_WHOLE_GPU`] or more, whatever its axes.
    AWholeGpu,
}

/// The memory of the smallest GPUs that train (8 GiB): one activation this large is as
/// much as a whole device, which no batch of an ordinary training step needs. Across
/// the corpora every TensorFlow tensor this large (eleven, 8 to 190 GiB) was one buffer
/// to its annotators: an epoch's states in one batch (tensorforce#658, `[8580,200,150,
/// 64]`), a stack of whole slides (axondeepseg#156, `[243,1024,1024,16]`).
const A_WHOLE_GPU: u64 = 8 << 30;

/// The lead line for a TensorFlow tensor message whose activation of a GiB or more cannot
/// be fixed by a smaller training batch: a batch of one (`[1,32,195,666,1024]`, a whole
/// volume predicted untiled), a first axis of ten thousand or more (`[10000,64,24,24]`,
/// a test set as one batch; `[186446,100,100]`, one matrix per pair of atoms), or a last
/// axis over a vocabulary (`[32,1226,20003]`, logits for every word at every step), or
/// one of [`A_WHOLE_GPU`] or more. One tensor is the problem. Only when no line before names a cause and the message states
/// no capacity.
pub fn likely_one_activation(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let activation = Activation::of(m)?;
    let (first, last) = (*activation.dims.first()?, *activation.dims.last()?);
    let bytes = activation.bytes_or_float32();
    if bytes < OVERSIZED_MATRIX {
        return None;
    }
    let kind = if first == 1 {
        Unsplittable::OneSample
    } else if first >= NOT_A_BATCH {
        Unsplittable::HugeFirstAxis(first)
    } else if last >= HUGE_AXIS {
        Unsplittable::Vocabulary(last)
    } else if bytes >= A_WHOLE_GPU {
        Unsplittable::AWholeGpu
    } else {
        return None;
    };
    let typed = activation.assumed_type();
    let shape = activation.shape;
    let (why, cause, fixes) = match kind {
        Unsplittable::OneSample => (
            "its batch is already one: a single input's activation is too large, which no smaller batch helps".to_owned(),
            "one input too large for the network at full resolution: a whole volume or image processed at once",
            vec![
                advice("process the input in tiles (overlapping patches, stitched after: StarDist's n_tiles, a sliding window)", Some("more passes; seams to blend")),
                advice("downsample the input, or use fewer channels in the first layers", Some("less resolution")),
                advice("use mixed precision (float16 activations)", Some("some numerical care")),
            ],
        ),
        Unsplittable::HugeFirstAxis(n) => (
            format!("its first axis, {n}, is no training batch: a whole dataset run as one batch, or one entry per pair of items"),
            "one tensor over a whole dataset or over all pairs, materialized at once",
            vec![
                advice("run the data in batches (model.predict(x, batch_size=…), or a tf.data pipeline with .batch)", Some("none in results")),
                advice("for a tensor per pair of items, compute the pairs in chunks and reduce each chunk before the next", Some("more code, more steps")),
            ],
        ),
        Unsplittable::Vocabulary(n) => (
            format!("its last axis, {n}, is a vocabulary: logits for every word at every position, and their softmax and gradient as large again"),
            "the output layer over the whole vocabulary at every position of every sequence",
            vec![
                advice("use a sampled or chunked softmax loss (tf.nn.sampled_softmax_loss), or compute the loss over slices of the sequence", Some("an approximate loss in training")),
                advice("shrink the vocabulary (subwords, a frequency cut-off) or the sequence length", Some("a different tokenization")),
                advice("halve the batch: this tensor halves with it, but stays the largest", Some("more steps")),
            ],
        ),
        Unsplittable::AWholeGpu => (
            format!("one activation as large as the whole memory of most GPUs, which no ordinary training batch needs: its first axis, {first}, is the whole data of a step (an epoch's samples or a replay buffer in one batch), or the shape is not the one intended"),
            "one tensor over far more data at once than a training step takes",
            vec![
                advice("run the data through the layer in batches (model.predict(x, batch_size=…), a tf.data pipeline with .batch, or the agent's or trainer's batch-size setting)", Some("none in results")),
                advice("check the shape is the one intended: an axis multiplied in by mistake, a whole dataset where one batch was meant", Some("none")),
            ],
        ),
    };
    let text = format!(
        "TensorFlow could not allocate a {}{typed} activation {shape} (read): {why} (estimated)",
        size(bytes),
    );
    let line = Line::new(DiagnosisId::DominantBuffer, Label::Estimated, text, cause);
    Some(line.fixes(fixes))
}

/// A TensorFlow shape's dimensions, printed `[10000,14,14,64]` or, by TensorFlow 0.x, as
/// its protocol buffer (`dim { size: 10000 } dim { size: 14 } …`).
fn tensor_dims(shape: &str) -> Vec<u64> {
    if shape.starts_with('[') {
        return dims_of(shape);
    }
    shape
        .split("size:")
        .skip(1)
        .filter_map(|d| {
            let d = d.trim_start();
            let digits = d.len() - d.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            d.get(..digits)?.parse().ok()
        })
        .collect()
}

/// The failed tensor, when it is shaped like a batch's activation.
struct Activation<'m> {
    shape: &'m str,
    dims: Vec<u64>,
    /// From the shape and type; `None` when the type was not printed.
    bytes: Option<u64>,
}

impl<'m> Activation<'m> {
    /// Its size: from its type, else as float32, TensorFlow's default.
    fn bytes_or_float32(&self) -> u64 {
        self.bytes.unwrap_or_else(|| {
            let elements = self.dims.iter().fold(1u64, |n, &d| n.saturating_mul(d));
            elements.saturating_mul(4)
        })
    }

    /// What a size from [`Self::bytes_or_float32`] assumes, to follow it in a line.
    fn assumed_type(&self) -> &'static str {
        if self.bytes.is_some() {
            ""
        } else {
            ", if float32"
        }
    }

    fn of(m: &'m OomMessage) -> Option<Self> {
        if m.kind != OomKind::Short {
            return None;
        }
        let shape = m.requested_shape.as_deref()?;
        let dims = tensor_dims(shape);
        if dims.len() < 3 || dims.contains(&0) {
            return None;
        }
        let bytes = m.requested_bytes_from_shape.or(m.requested_bytes);
        let large = match bytes {
            Some(b) => b >= BATCH_ACTIVATION,
            None => dims
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d))
                .is_none_or(|n| n >= BATCH_ELEMENTS),
        };
        // A tensor too large for any device is a size gone wrong (`impossible_size`).
        let possible = bytes.is_none_or(|b| b < super::buffer::LARGER_THAN_ANY_DEVICE);
        (large && possible && oom::capacity(m).is_none()).then_some(Self { shape, dims, bytes })
    }
}
