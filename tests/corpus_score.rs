//! The triage on real public messages, against what people who read each message and
//! its thread concluded (`tests/fixtures/errors/ANNOTATING.md`): the figures each states
//! and its cause. The tuning corpus (`tests/fixtures/errors`) is what the rules were
//! fitted to; the held-out corpus (`tests/heldout/errors`) was collected apart and
//! measured once the rules were done (its figures are in `docs/oom-messages.md`): here
//! both must stay at least where they were measured.

#[path = "support/corpus_score.rs"]
mod corpus_score;

use std::path::Path;

use corpus_score::{score, Score};

fn corpus(dir: &str) -> Score {
    score(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
}

/// A held-out corpus keeps at least `messages` messages, and its figures and triage at
/// least where they were last measured.
fn stays_at_least(dir: &str, messages: usize, figures: f64, triage: f64) {
    let score = corpus(dir);
    assert!(score.messages.len() >= messages, "{dir}");
    assert!(
        score.figures_pct() >= figures,
        "{dir}: figures {:.1}%",
        score.figures_pct()
    );
    assert!(
        score.triage_pct() >= triage,
        "{dir}: triage {:.1}%",
        score.triage_pct()
    );
}

/// Messages of the tuning corpus whose annotated cause the message alone cannot show
/// (the annotator knew it from the thread, or from prose oomlens does not read), or
/// where the rules take a stand the annotation does not: each with why.
const KNOWN_DISAGREEMENTS: [(&str, &str); 12] = [
    ("03-", "a TPU compile-time listing alone: the compile-time check fails only for a program too big, which oomlens says; the annotation says undetermined"),
    ("27-", "an XLA:GPU summary cut before its total, the pool drawn full: the program's size is unknown, so oomlens reads the full pool as the program's, an estimate (the thread found TensorFlow holding the GPU)"),
    ("36-", "a bare 176 MiB request: the thread found memory held outside XLA's pool"),
    ("38-", "a bare 5.14 GiB request: the thread found fragmentation of the on-demand allocator"),
    ("39-", "a single 18.65 GiB request: oomlens reads a whole program's temporaries that large as a program too big for most devices; the annotation says undetermined"),
    ("71-", "an 8 MiB buffer with 6.43 MiB free: oomlens reads HBM all but full with most of the request free as the program's own; the annotation says undetermined"),
    ("72-", "196 MiB with 60.94 MiB free: the annotation knows from the prose that Gemma-2 9B and 27B were loaded unsharded"),
    ("73-", "a bare 128 MiB request: the annotation knows from the thread that GPT-J 6B was loaded on an 8 GiB GPU"),
    ("79-", "a BFC failure after XLA's rematerialization warned it could bring the program down only to 24.56 GiB, above its 23.06 GiB limit: the message says the need exceeds the memory, does_not_fit by ANNOTATING.md's definition (as second annotators read every such message); this corpus's annotator said ran_out"),
    // TensorFlow's tensor message alone, for a batch's activation: oomlens says, as an
    // estimate, the batch is too big, as the annotators of the three held-out corpora
    // read such messages; this corpus's annotator called them undetermined.
    ("64-", "a 112.5 MiB activation [16,112,112,147] alone: oomlens estimates the batch too big; the annotation says undetermined"),
    ("65-", "a 2.17 GiB activation [500,17,17,4032] alone: oomlens estimates the batch too big; the annotation says undetermined"),
    ("66-", "a 1.50 GiB activation [128,3,8,128,8,128] alone: oomlens estimates the batch too big; the annotation says undetermined"),
];

#[test]
fn the_tuning_corpus_is_read_and_triaged_as_annotated() {
    let score = corpus("tests/fixtures/errors");
    assert!(score.messages.len() >= 79);
    assert!(
        score.figures_pct() >= 99.5,
        "figures {:.1}%: {:#?}",
        score.figures_pct(),
        score
            .messages
            .iter()
            .filter(|m| !m.missed.is_empty())
            .map(|m| (&m.name, &m.missed))
            .collect::<Vec<_>>()
    );
    let wrong: Vec<String> = score
        .messages
        .iter()
        .filter(|m| !m.triage_right())
        .filter(|m| {
            !KNOWN_DISAGREEMENTS
                .iter()
                .any(|(p, _)| m.name.starts_with(p))
        })
        .map(|m| format!("{}: {:?}, annotated {:?}", m.name, m.got, m.want))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The first held-out corpus, since its misses were read: no lower than last measured.
#[test]
fn the_first_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout/errors", 36, 100.0, 82.5);
}

/// The second held-out corpus, measured once, then a development set: no lower than
/// last measured.
#[test]
fn the_second_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout2/errors", 33, 100.0, 84.8);
}

/// The third held-out corpus (collected 2026-12-04), measured once untuned (figures
/// 86.5%, triage 57.1%), then a development set: no lower than last measured.
#[test]
fn the_third_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout3/errors", 35, 100.0, 82.8);
}

/// The fourth held-out corpus (collected 2026-12-05 by a session that never ran oomlens
/// on it), measured once untuned (figures 78.3%, triage 65.7%), then a development set:
/// no lower than last measured. Its triage was 77.1% until a failure after XLA's
/// rematerialization warned it could not reach its limit became `does_not_fit` (the
/// message says the need exceeds the memory, ANNOTATING.md's definition, and every second
/// annotator's reading): 01- and 25- were annotated `ran_out` by the first.
#[test]
fn the_fourth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout4/errors", 35, 100.0, 71.4);
}

/// The fifth held-out corpus (collected 2026-12-05 by a session that never ran oomlens
/// on it), measured once untuned (figures 86.2%, triage 62.9%), then a development set:
/// no lower than last measured. Its triage was 77.1% until IREE's HAL failures stopped
/// being read as the GPU driver's outside a pool: 32- (a size-less `hipErrorOutOfMemory`
/// in `queue.alloca`) is now too little to tell, where its thread found memory held
/// across iterations; then 68.6% when a failure after XLA's rematerialization warned it
/// could not reach its limit became `does_not_fit` (10- and 11-, annotated `ran_out` by the
/// first annotator; 10-'s second annotator says `does_not_fit`).
#[test]
fn the_fifth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout5/errors", 35, 99.3, 68.5);
}

/// The sixth held-out corpus (collected 2026-12-05 by a session that never ran oomlens
/// on it), measured once untuned (figures 77.0%, triage 40.0%), then a development set:
/// no lower than last measured.
#[test]
fn the_sixth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout6/errors", 30, 89.5, 69.9);
}

/// The seventh held-out corpus (27 messages, collected 2026-12-05 by a session that never
/// ran oomlens on it), measured once untuned (figures 76.2%, triage 51.9%), then a
/// development set: no lower than last measured.
#[test]
fn the_seventh_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout7/errors", 27, 94.0, 77.7);
}

/// The eighth held-out corpus (30 messages, collected 2026-12-06 by a session that never
/// ran oomlens on it), measured once untuned (figures 65.8%, triage 46.7%), then a
/// development set: no lower than last measured. Round 29 reads every host warning of 64
/// MiB and more as one array (a warning names one allocation), so ctrl#63's 1.18 GiB
/// warnings, annotated as the model outgrowing the host (the second annotator: too
/// little to tell), are one off since.
#[test]
fn the_eighth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout8/errors", 30, 92.7, 79.9);
}

/// The ninth held-out corpus (25 messages, collected 2026-12-06 by a session that never
/// ran oomlens on it), measured once untuned (figures 69.6%, triage 32.0%), then a
/// development set: no lower than last measured.
#[test]
fn the_ninth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout9/errors", 25, 94.7, 75.9);
}

/// The tenth, collected blind (half from web pages was asked; six came from them) and
/// measured once at 83.1% / 40.0% before the seventh round (its README); since then a
/// development set: no lower than last measured.
#[test]
fn the_tenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout10/errors", 25, 95.4, 71.9);
}

/// The eleventh, collected blind and measured once at 88.3% / 58.6% with the seventh
/// round in (its README); since then a development set: no lower than last measured.
#[test]
fn the_eleventh_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout11/errors", 29, 94.1, 79.2);
}

/// The twelfth, collected blind (17: the search reached few threads the earlier sets had
/// not taken) and measured once at 85.7% / 35.3% with the eighth round in; since then a
/// development set: no lower than last measured.
#[test]
fn the_twelfth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout12/errors", 17, 98.1, 47.0);
}

/// The thirteenth, collected blind (25: JAX/XLA, TensorFlow, the CUDA driver, host RAM)
/// and measured once at 98.1% / 32.0% with the tenth round in (its README); since then
/// a development set: no lower than last measured.
#[test]
fn the_thirteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout13/errors", 25, 99.9, 51.9);
}

/// The fourteenth, collected blind (22; a PyTorch/XLA TPU, Pallas VMEM, Triton shared
/// memory, TensorFlow) and measured once at 91.8% / 59.1% with the eleventh round in
/// (its README); since then a development set: no lower than last measured.
#[test]
fn the_fourteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout14/errors", 22, 97.8, 77.2);
}

/// The fifteenth, collected blind (15: the free pool of public threads is nearly
/// exhausted; TensorFlow, Triton shared memory, a TPU runtime request, the kernel's OOM
/// killer) and measured once at 93.4% / 73.3% with 1708248 (its README); since then a
/// development set: no lower than last measured.
#[test]
fn the_fifteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout15/errors", 15, 99.9, 79.9);
}

/// The sixteenth, collected blind (19: TensorFlow 1.x/2.x, Triton shared memory on Intel
/// GPUs, the CUDA driver, a JAX BFC request wrapped by a terminal) and measured once at
/// 88.1% / 63.2% with the thirteenth round in (its README); since then a development set:
/// no lower than last measured. It was 73.7% after the fourteenth round; the fifteenth
/// reads a batch of one's 2.86 GiB activation as one buffer, as three annotations of
/// other sets do, where this set's annotator says the program (05).
#[test]
fn the_sixteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout16/errors", 19, 99.9, 68.4);
}

/// The seventeenth, collected blind (20: TensorFlow users in science and vision, Keras 3
/// on JAX, a jaxlib PRNG kernel, the host) and measured once at 98.9% / 50.0% with the
/// fourteenth round in (its README); since then a development set.
#[test]
fn the_seventeenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout17/errors", 20, 98.8, 69.9);
}

/// The eighteenth, collected blind (15: TensorFlow, one JAX request of 53 GiB, the host)
/// and measured once at 94.9% / 53.3% with the fifteenth round in (its README); since
/// then a development set.
#[test]
fn the_eighteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout18/errors", 15, 96.6, 53.3);
}

/// The nineteenth, collected blind (17: TensorFlow on Intel GPUs and DirectML, Graphcore's
/// Poplar, TensorFlow 0.x, JAX, EXLA on the host; of more than 100 threads reached in the
/// TPU, Pallas, Triton, ROCm, driver and BufferAssignment families, one was free) and
/// measured once at 74.5% / 35.3% with the seventeenth round in (its README); since then
/// a development set.
#[test]
fn the_nineteenth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout19/errors", 17, 98.1, 47.0);
}

/// The twentieth, collected blind (20: TensorFlow 0.x to 2.x BFC dumps and tensor lines,
/// TensorFlow.js, XLA:CPU's JIT, Triton shared memory on two vendors, a CUDA driver retry;
/// every TPU, Pallas, ROCm, PyTorch/XLA, EXLA and Reactant thread reached was taken) and
/// measured once at 94.2% / 45.0% with the eighteenth round in (its README); since then a
/// development set.
#[test]
fn the_twentieth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout20/errors", 20, 99.9, 64.9);
}

/// The twenty-first, collected blind (22: TensorFlow BFC dumps, warnings, CPU-allocator and
/// one-line failures, TensorFlow.js, CUDA driver retries, Triton through TorchInductor; no
/// JAX, XLA, TPU or ROCm thread reached was free) and measured once at 92.9% / 59.1% with
/// the nineteenth round in (its README); since then a development set.
#[test]
fn the_twenty_first_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout21/errors", 22, 93.7, 63.5);
}

/// The twenty-second, collected blind (21: JAX on GPU from downstream users, EXLA, CUDA
/// driver start-up, TensorFlow and TensorFlow.js, PyTorch's allocators on CUDA, ROCm, MPS,
/// DirectML and the CPU; every TPU, Pallas, Triton and PyTorch/XLA thread reached was
/// taken) and measured once at 73.0% / 33.3% with 57c87c3 (its README); since then a
/// development set.
#[test]
fn the_twenty_second_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout22/errors", 21, 89.8, 61.9);
}

/// The twenty-third, collected blind from run output committed to public repositories
/// (8: TPU compile-time HBM reports as agents' experiment pages quote them, the TPU
/// runtime's refused allocation and reservation, a Mosaic VMEM limit, a TensorFlow BFC
/// dump) and measured once at 90.2% / 87.5% with b65b4cf (its README);
/// since then a development set.
#[test]
fn the_twenty_third_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout23/errors", 8, 96.6, 99.9);
}

/// The twenty-fourth, collected blind from committed run output as well (15: a TPU
/// compile-time listing and runtime refusal of PyTorch/XLA, JAX on GPU with remat,
/// `new constant`, `Failed to allocate request for` and `executable_name`, a TensorFlow 1.4
/// BFC dump, Mosaic VMEM, Triton shared memory on CUDA and ROCm, a CUDA context, PyTorch's
/// allocator) and measured once at 91.9% / 66.7% with the same build; since then a
/// development set.
#[test]
fn the_twenty_fourth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout24/errors", 15, 94.5, 79.9);
}

/// The twenty-fifth, collected blind from committed run output (10: XLA:GPU buffer
/// assignments of JAX runs, PyTorch on ROCm, CUDA driver retries and pinned host memory,
/// TensorFlow's host warnings) and measured once at 99.6% / 50.0% with b1c7a40 (its
/// README); nothing was tuned on it, the misses being thread-told causes and host warnings
/// the annotators read apart.
#[test]
fn the_twenty_fifth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout25/errors", 10, 99.5, 49.9);
}

/// The twenty-sixth, collected blind from committed run output (10: a TPU compile-time
/// report, Triton shared memory, PyTorch on ROCm and CUDA, TensorFlow's driver refusals,
/// BFC dumps and tensor lines, a host warning) and measured once at 92.5% / 50.0% with
/// b1c7a40 (its README); since then a development set.
#[test]
fn the_twenty_sixth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout26/errors", 10, 92.4, 79.9);
}

/// The twenty-seventh, collected blind from committed run output (9: TPU compile-time
/// reports of TensorFlow, PyTorch/XLA and MaxText runs, the TPU runtime refusing device
/// buffers and a program's reservation) and measured once at 98.9% / 66.7% with aaeab64
/// (its README); since then a development set.
#[test]
fn the_twenty_seventh_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout27/errors", 9, 98.8, 77.7);
}

/// The twenty-eighth, collected blind beside it (8: TensorFlow's BFC warning and tensor
/// line, CUDA driver refusals with device properties and a decimal-comma locale, Triton
/// shared memory, PyTorch's allocator) and measured once at 86.7% / 75.0% with the same
/// build; since then a development set.
#[test]
fn the_twenty_eighth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout28/errors", 8, 96.6, 74.9);
}

/// The twenty-ninth, collected blind from committed run output (8: XLA:GPU buffer
/// assignments and rematerialization under TensorFlow and JAX, XLA:CPU, BFC lines of
/// vmapped JAX code, one broken by its poster before the size) and measured once at
/// 96.4% / 25.0% with 66f7613 (its README); since then a development set.
#[test]
fn the_twenty_ninth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout29/errors", 8, 99.0, 37.4);
}

/// The thirtieth, collected blind beside it (9: pinned host memory on Jetsons, a CUDA
/// driver asked for the whole device, TensorFlow's tensor line, PyTorch on ROCm, CuPy's
/// pool, the kernel killing a job) and measured once at 97.2% / 44.4% with the same
/// build; since then a development set.
#[test]
fn the_thirtieth_held_out_corpus_stays_where_it_was_measured() {
    stays_at_least("tests/heldout30/errors", 9, 99.9, 55.5);
}

/// The thirty-first and thirty-second, collected blind from committed run output and
/// threads (8 each: JAX and XLA on GPU and CPU; TensorFlow's BFC and tensor lines and
/// PyTorch on ROCm) and measured last, once, with 5970f53 at 100% / 25.0% and 94.2% /
/// 62.5% (their READMEs); since round 26 (tuned on the thirty-second), development sets.
#[test]
fn the_thirty_first_and_second_stay_where_they_were_measured() {
    stays_at_least("tests/heldout31/errors", 8, 99.9, 24.9);
    stays_at_least("tests/heldout32/errors", 8, 99.9, 87.4);
}

/// The thirty-third and thirty-fourth, collected blind from committed run output and
/// threads (8 each: JAX on GPU with BFC and rematerialization warnings and `cuMemAllocAsync`;
/// TensorFlow's `cuda_async` pool, tensor lines, Triton shared memory, tcmalloc) and
/// measured once with 7ee1524 at 63.3% / 62.5% and 50.0% / 75.0% (their READMEs); since
/// round 27 (tuned on them), development sets.
#[test]
fn the_thirty_third_and_fourth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout33/errors", 8, 73.2, 62.4);
    stays_at_least("tests/heldout34/errors", 8, 99.9, 74.9);
}

/// The thirty-fifth and thirty-sixth, collected blind from committed run output (9: the
/// TPU runtime refusing parameters' buffers, Pallas VMEM and SMEM on TPU, GPU shared
/// memory, JAX on GPU, a Tenstorrent L1 failure; 8: Triton shared memory on ROCm,
/// TensorFlow's BFC warnings and driver refusals, HIP on a Hygon DCU, host warnings) and
/// measured last, once, with e8fca4d at 87.5% / 44.4% and 96.6% / 50.0% (their READMEs);
/// since round 28 (tuned on them), development sets.
#[test]
fn the_thirty_fifth_and_sixth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout35/errors", 9, 96.8, 44.3);
    stays_at_least("tests/heldout36/errors", 8, 96.5, 62.4);
}

/// The thirty-seventh and thirty-eighth, collected blind from committed run output and
/// threads (8: XLA:GPU and JAX requests and rematerialization, TPU compile-time reports and
/// runtime refusals; 9: CUDA driver refusals, PyTorch on ROCm, Triton shared memory on
/// ROCm, tcmalloc, TensorFlow's CPU allocator, EXLA's BFC, host warnings) and measured
/// last, once, with the code of round 28 (6c4b615) at 66.7% / 75.0% and 97.0% / 66.7%
/// (their READMEs); since round 29 (tuned on them), development sets.
#[test]
fn the_thirty_seventh_and_eighth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout37/errors", 8, 99.9, 99.9);
    stays_at_least("tests/heldout38/errors", 9, 99.9, 88.8);
}

/// The thirty-ninth and fortieth, collected blind from committed run output and threads
/// (9: TPU compile-time reports old and new, JAX on GPU requests, ZML on ROCm; 8: CUDA
/// driver refusals and cuDNN, TensorFlow's host warnings and BFC warnings, HIP) while
/// round 29 was made, and measured once with its build (2ea1746) at 100% / 22.2% and
/// 63.2% / 75.0% (their READMEs); since round 30 (tuned on them), development sets.
#[test]
fn the_thirty_ninth_and_fortieth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout39/errors", 9, 99.9, 22.2);
    stays_at_least("tests/heldout40/errors", 8, 71.0, 87.4);
}

/// The forty-first and forty-second, collected blind from committed run output (9: TPU
/// compile-time reports of JAX and PyTorch/XLA, the TPU runtime loading programs,
/// Tenstorrent DRAM banks; 8: Triton shared memory on GB10 and MI300X, TensorFlow's
/// tensor line, hosts killed by Slurm and SGE, PyTorch and NumPy) while round 30 was
/// made, and measured once with its build (8eb1025) at 100% / 44.4% and 80.0% / 50.0%
/// (their READMEs); since round 31 (tuned on them), development sets.
#[test]
fn the_forty_first_and_second_stay_where_they_were_measured() {
    stays_at_least("tests/heldout41/errors", 9, 99.9, 44.4);
    stays_at_least("tests/heldout42/errors", 8, 99.9, 74.9);
}

/// The forty-third and forty-fourth, collected blind from committed run output (8: JAX
/// on GPU requests, a CUBIN load, a TPU compile-time report by its temporaries, a Pallas
/// VMEM window, a rematerialization warning, AWS Neuron's compiler; 9: TensorFlow's host
/// warning, CPU allocator and tensor lines, NumPy, BFC warnings, PyTorch on ROCm, Triton
/// shared memory) while round 31 was made, and measured once with its build (4997e37)
/// at 42.9% / 25.0% and 89.4% / 44.4% (their READMEs); since round 32 (tuned on them),
/// development sets.
#[test]
fn the_forty_third_and_fourth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout43/errors", 8, 99.9, 37.4);
    stays_at_least("tests/heldout44/errors", 9, 97.8, 55.5);
}

/// The forty-fifth and forty-sixth, collected blind from committed run output (8:
/// Tenstorrent's DRAM and L1 banks of tt-xla, TTNN and tt-metal runs; 8: hosts killed by
/// Slurm, LSF, a shell and Docker, TensorFlow's CPU tensor lines, PyTorch on ROCm) while
/// round 32 was made, and measured last with its build (2f55743) at 97.1% / 37.5% and
/// 65.8% / 25.0% (their READMEs); round 33 then read the forty-sixth's three refused
/// texts.
#[test]
fn the_forty_fifth_and_sixth_stay_where_they_were_measured() {
    stays_at_least("tests/heldout45/errors", 8, 97.0, 37.4);
    stays_at_least("tests/heldout46/errors", 8, 73.6, 24.9);
}

/// The sets a second annotator triaged again, blind (`triage_second`,
/// `docs/oom-messages.md#two-annotators`): every such message keeps its second reading,
/// and where the two annotators agree oomlens stays at least as right as last measured.
#[test]
fn where_two_annotators_agree() {
    let mut two = corpus_score::SecondOpinion::default();
    two += corpus("tests/heldout/errors").second_opinion();
    for n in 2..=46 {
        two += corpus(&format!("tests/heldout{n}/errors")).second_opinion();
    }
    assert_eq!(two.seconded, 600);
    assert_eq!(two.agreed, 394);
    assert!(
        two.right_where_agreed >= 325,
        "right on {} of the {} where the annotators agree",
        two.right_where_agreed,
        two.agreed
    );
}

#[test]
fn the_corpora_share_no_source() {
    let dirs = [
        "tests/fixtures/errors",
        "tests/heldout/errors",
        "tests/heldout2/errors",
        "tests/heldout3/errors",
        "tests/heldout4/errors",
        "tests/heldout5/errors",
        "tests/heldout6/errors",
        "tests/heldout7/errors",
        "tests/heldout8/errors",
        "tests/heldout9/errors",
        "tests/heldout10/errors",
        "tests/heldout11/errors",
        "tests/heldout12/errors",
        "tests/heldout13/errors",
        "tests/heldout14/errors",
        "tests/heldout15/errors",
        "tests/heldout16/errors",
        "tests/heldout17/errors",
        "tests/heldout18/errors",
        "tests/heldout19/errors",
        "tests/heldout20/errors",
        "tests/heldout21/errors",
        "tests/heldout22/errors",
        "tests/heldout23/errors",
        "tests/heldout24/errors",
        "tests/heldout25/errors",
        "tests/heldout26/errors",
        "tests/heldout27/errors",
        "tests/heldout28/errors",
        "tests/heldout29/errors",
        "tests/heldout30/errors",
        "tests/heldout31/errors",
        "tests/heldout32/errors",
        "tests/heldout33/errors",
        "tests/heldout34/errors",
        "tests/heldout35/errors",
        "tests/heldout36/errors",
        "tests/heldout37/errors",
        "tests/heldout38/errors",
        "tests/heldout39/errors",
        "tests/heldout40/errors",
        "tests/heldout41/errors",
        "tests/heldout42/errors",
        "tests/heldout43/errors",
        "tests/heldout44/errors",
        "tests/heldout45/errors",
        "tests/heldout46/errors",
    ];
    let mut seen: Vec<(&str, String)> = Vec::new();
    for dir in dirs {
        if !Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).is_dir() {
            continue;
        }
        for m in corpus(dir).messages {
            let Some(source) = m.source else {
                assert!(dir == dirs[0], "{dir}/{}: no source", m.name);
                continue;
            };
            if let Some((other, _)) = seen.iter().find(|(d, s)| *s == source && *d != dir) {
                panic!("{source} is in {other} and {dir}");
            }
            seen.push((dir, source));
        }
    }
}
