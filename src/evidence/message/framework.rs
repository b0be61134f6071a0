//! Which framework's run printed the text, read from what its lines name: the paths of
//! its logs and tracebacks (`tensorflow/core/…`, `site-packages/jax/…`), its error
//! classes (`ResourceExhaustedError`, `XlaRuntimeError`, `torch.OutOfMemoryError`) and
//! its own wordings. The diagnosis words its fixes in that framework's API: a TensorFlow
//! user gets `tf.recompute_grad`, not `jax.checkpoint`.
//!
//! One text may name several: a JAX program that imports TensorFlow for its data, a
//! Keras 3 model on JAX, a PyTorch data loader feeding JAX. What the failure itself came
//! from decides, so the names are ranked: PyTorch's own out-of-memory wordings, then
//! TensorFlow.js (whose Node binding prints TensorFlow's logs), then anything of JAX,
//! then TensorFlow, then PyTorch's package named anywhere else.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::model::Framework;

/// The names, each with the rank it gives (none: a name that only hides a shorter one
/// inside it). A line is read leftmost-longest: `external/org_tensorflow/tensorflow/…`
/// is jaxlib's path, not TensorFlow's, and `torch_xla` is PyTorch/XLA's.
const NAMES: [(&str, Option<Rank>); 34] = [
    // PyTorch's caching allocator and its compilers: the failure is PyTorch's.
    (
        "OutOfMemoryError: CUDA out of memory",
        Some(Rank::PytorchFailure),
    ),
    ("torch.OutOfMemoryError", Some(Rank::PytorchFailure)),
    ("torch.cuda.OutOfMemoryError", Some(Rank::PytorchFailure)),
    ("is allocated by PyTorch", Some(Rank::PytorchFailure)),
    ("is reserved by PyTorch", Some(Rank::PytorchFailure)),
    ("reserved in total by PyTorch", Some(Rank::PytorchFailure)),
    // Its caching allocator's own wording (`CUDA out of memory. Tried to allocate …`,
    // also on ROCm and XPU), its MPS and CPU allocators'.
    (
        "out of memory. Tried to allocate",
        Some(Rank::PytorchFailure),
    ),
    // The same exception quoted without its module or device (`OutOfMemoryError: Tried
    // to allocate 16.00 GiB`): no other framework words a failure so.
    (
        "OutOfMemoryError: Tried to allocate",
        Some(Rank::PytorchFailure),
    ),
    ("MPS backend out of memory", Some(Rank::PytorchFailure)),
    ("DefaultCPUAllocator", Some(Rank::PytorchFailure)),
    ("PYTORCH_CUDA_ALLOC_CONF", Some(Rank::PytorchFailure)),
    ("torch_xla", Some(Rank::PytorchFailure)),
    ("torch/_inductor", Some(Rank::PytorchFailure)),
    ("torch._inductor", Some(Rank::PytorchFailure)),
    ("tfjs", Some(Rank::TensorflowJs)),
    ("@tensorflow/tfjs", Some(Rank::TensorflowJs)),
    // JAX and the libraries built on it; `XlaRuntimeError` is jaxlib's exception,
    // `XLA_PYTHON_CLIENT_…` its allocator's settings, and jaxlib built from
    // TensorFlow's tree logs its paths under `external/org_tensorflow`.
    ("jax", Some(Rank::Jax)),
    ("JAX", Some(Rank::Jax)),
    ("XlaRuntimeError", Some(Rank::Jax)),
    ("XLA_PYTHON_CLIENT", Some(Rank::Jax)),
    ("flax", Some(Rank::Jax)),
    ("external/org_tensorflow", Some(Rank::Jax)),
    // XLA inside TensorFlow's tree: jaxlib, PyTorch/XLA and TensorFlow all log it.
    ("tensorflow/compiler/xla", None),
    // TensorFlow's sources (its logs name them: `tensorflow/core/common_runtime/…`,
    // and its Python package `tensorflow/python/…`), Keras, its error class and its
    // wordings.
    ("tensorflow", Some(Rank::Tensorflow)),
    ("TensorFlow", Some(Rank::Tensorflow)),
    ("keras", Some(Rank::Tensorflow)),
    ("Keras", Some(Rank::Tensorflow)),
    ("ResourceExhaustedError", Some(Rank::Tensorflow)),
    ("OOM when allocating tensor", Some(Rank::Tensorflow)),
    // TensorFlow 2.16 on builds XLA and TSL as `local_xla` and `local_tsl` (jaxlib's
    // are `xla` and `tsl`): its allocator's lines name no `tensorflow` path.
    ("external/local_xla", Some(Rank::Tensorflow)),
    ("external/local_tsl", Some(Rank::Tensorflow)),
    // PyTorch's package in a traceback's paths and its modules in code; not the word
    // alone, which prose and folder names (`DietNeRF-pytorch`) hold.
    ("/torch/", Some(Rank::Pytorch)),
    ("pytorch.org", None),
    ("torch.", Some(Rank::Pytorch)),
];

/// The ranks, highest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rank {
    PytorchFailure,
    TensorflowJs,
    Jax,
    Tensorflow,
    Pytorch,
}

const RANKS: [(Rank, Framework); 5] = [
    (Rank::PytorchFailure, Framework::Pytorch),
    (Rank::TensorflowJs, Framework::TensorflowJs),
    (Rank::Jax, Framework::Jax),
    (Rank::Tensorflow, Framework::Tensorflow),
    (Rank::Pytorch, Framework::Pytorch),
];

/// One automaton for every name: a line is read once whatever their number.
fn names() -> &'static AhoCorasick {
    static NAMES_AUTOMATON: OnceLock<AhoCorasick> = OnceLock::new();
    NAMES_AUTOMATON.get_or_init(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(NAMES.iter().map(|(name, _)| name))
            .expect("a few short constant patterns always build")
    })
}

/// Which ranks the lines read so far named.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FrameworkNames {
    named: [bool; RANKS.len()],
}

impl FrameworkNames {
    /// Notes what `line` names.
    pub(super) fn observe(&mut self, line: &str) {
        for found in names().find_iter(line) {
            let rank = NAMES.get(found.pattern().as_usize()).and_then(|(_, r)| *r);
            if let Some(i) = RANKS.iter().position(|(r, _)| Some(*r) == rank) {
                self.named[i] = true;
            }
        }
    }

    /// The framework the text's names point to, by rank; `None` when it names none.
    pub(super) fn framework(&self) -> Option<Framework> {
        (RANKS.iter().zip(self.named))
            .find_map(|((_, framework), named)| named.then_some(*framework))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framework(lines: &[&str]) -> Option<Framework> {
        let mut names = FrameworkNames::default();
        for line in lines {
            names.observe(line);
        }
        names.framework()
    }

    #[test]
    fn the_failures_framework_wins_over_what_else_the_text_names() {
        let bfc = "2019-01-01 W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.0KiB.";
        assert_eq!(framework(&[bfc]), Some(Framework::Tensorflow));
        // jaxlib built from TensorFlow's tree logs TensorFlow's paths.
        let jaxlib = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory";
        let old_jaxlib = "2021-01-01 W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:456] Allocator (GPU_0_bfc) ran out of memory";
        assert_eq!(framework(&[old_jaxlib]), Some(Framework::Jax));
        let xla_in_tf_tree =
            "2020-01-01 tensorflow/compiler/xla/xla_client/xla_util.cc:90] Resource exhausted";
        assert_eq!(framework(&[xla_in_tf_tree]), None);
        let tf_2_16 = "W0000 external/local_xla/xla/tsl/framework/bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out of memory";
        assert_eq!(framework(&[tf_2_16]), Some(Framework::Tensorflow));
        assert_eq!(
            framework(&[
                "on the pytorch vm image (download.pytorch.org), in DietNeRF-pytorch/dietnerf/logs"
            ]),
            None
        );
        assert_eq!(framework(&[bfc, jaxlib]), Some(Framework::Jax));
        let node =
            "at Engine.runKernelFunc (node_modules/@tensorflow/tfjs-core/dist/engine.js:578:27)";
        assert_eq!(framework(&[bfc, node]), Some(Framework::TensorflowJs));
        let torch = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.1 GiB of which 3.2 MiB is free. 78.4 GiB is allocated by PyTorch";
        assert_eq!(framework(&[jaxlib, torch]), Some(Framework::Pytorch));
        let loader =
            "  File \"/usr/lib/python3/site-packages/torch/utils/data/dataloader.py\", line 633";
        assert_eq!(framework(&[loader, jaxlib]), Some(Framework::Jax));
        assert_eq!(framework(&[loader]), Some(Framework::Pytorch));
        assert_eq!(
            framework(&["Out of memory while trying to allocate 1024 bytes."]),
            None
        );
    }
}
