use super::super::merge::borrow;
use super::*;

#[test]
fn tracebacks_as_python_and_jupyter_print_them() {
    assert!(starts_traceback("Traceback (most recent call last):"));
    assert!(starts_traceback(
        "XlaRuntimeError                           Traceback (most recent call last)"
    ));
    assert!(!starts_traceback(
        "See the Traceback (most recent call last) above"
    ));
}

#[test]
fn open_brackets_and_quotes_keep_a_line_open() {
    assert!(left_open(
        "HLO temp 15.45G (60.9% utilization: Unpadded (9.40G) Padded (15.4"
    ));
    assert!(left_open(r#"Operator: op_name="jit(f)/cut"#));
    assert!(!left_open("Shape: f32[4096,256]"));
}

fn parsed(text: &str) -> OomMessage {
    super::super::parse(text).unwrap()
}

#[test]
fn keeps_every_later_try_but_not_an_echo() {
    // Retries at 90%, then the same size again.
    let m = parsed("failed to allocate 2.00G (2147483648 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\nfailed to allocate 1.80G (1932735232 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\nfailed to allocate 4.00G (4294967296 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n");
    assert_eq!(m.requested_bytes, Some(2_147_483_648));
    assert_eq!(m.retried_requests_bytes, [1_932_735_232, 4_294_967_296]);
    // TensorFlow's pinned-host allocator says each failure twice.
    let m = parsed("could not allocate pinned host memory of size: 221074944\nfailed to alloc 1073741824 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\ncould not allocate pinned host memory of size: 1073741824\nfailed to alloc 1073741824 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory\ncould not allocate pinned host memory of size: 1073741824\n");
    assert_eq!(m.requested_bytes, Some(221_074_944));
    assert_eq!(m.retried_requests_bytes, [1_073_741_824, 1_073_741_824]);
}

#[test]
fn a_count_beats_the_same_size_printed_in_gib() {
    let m = parsed("gpu_async_3 cuMemAllocAsync failed to allocate 131108848800 bytes: CUDA_ERROR_OUT_OF_MEMORY\njax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 122.10GiB. [executable_name='jit_train_step']");
    assert_eq!(m.requested_bytes, Some(131_108_848_800));
}

#[test]
fn the_exact_request_beats_the_rounded_one() {
    let m = parsed("Allocator (GPU_0_bfc) ran out of memory trying to allocate 38.52GiB (rounded to 41360702720)requested by op \nExecution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 41360702624 bytes.\n");
    assert_eq!(m.requested_bytes, Some(41_360_702_624));
    let rounded = m.allocator.and_then(|a| a.rounded_request_bytes);
    assert_eq!(rounded, Some(41_360_702_720));
    // Alone, the rounded count is the request, and no figure of its own.
    let m = parsed("Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to 3664773120)requested by op Mul\n");
    assert_eq!(m.requested_bytes, Some(3_664_773_120));
    assert_eq!(m.allocator.and_then(|a| a.rounded_request_bytes), None);
}

#[test]
fn a_warning_before_the_failure_is_kept() {
    let m = parsed("Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.38GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\nOOM when allocating tensor with shape[8,256,256,96] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n");
    assert!(!m.advisory);
    assert_eq!(m.advisory_request_bytes, Some(3_629_247_365));
    assert_eq!(m.requested_shape.as_deref(), Some("[8,256,256,96]"));
}

#[test]
fn a_warning_logged_again_is_another_an_echo_is_not() {
    let line = |at: &str| {
        format!("2018-08-28 14:31:{at}: W tensorflow/core/framework/allocator.cc:108] Allocation of 63539200 exceeds 10% of system memory.\n")
    };
    let m = parsed(&[line("25.554008"), line("26.177700"), line("26.177700")].concat());
    assert_eq!(m.host_allocations_bytes, vec![63_539_200, 63_539_200]);
}

#[test]
fn later_warnings_are_listed_in_order() {
    let warning = |size: &str| {
        format!("Allocator (GPU_0_bfc) ran out of memory trying to allocate {size} with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.\n")
    };
    let text = [warning("2.00GiB"), warning("1.00GiB"), warning("2.00GiB")].concat()
            + "Allocator (GPU_0_bfc) ran out of memory trying to allocate 512.0KiB (rounded to 524288)requested by op Add\n"
            + &warning("3.00GiB");
    let m = parsed(&text);
    assert_eq!(m.advisory_request_bytes, Some(2 << 30));
    // The warning after the failure is not one before it.
    assert_eq!(m.later_advisory_requests_bytes, vec![1 << 30, 2 << 30]);
}

#[test]
fn an_unformatted_message_takes_the_values_printed_after_it() {
    let m = parsed("Out of Memory: Not enough space to allocate {} B {} buffer across {} banks, where each bank needs to store {} B\n148897792\nDRAM\n8\n18612224\nbacktrace:\n");
    assert_eq!(m.requested_bytes, Some(148_897_792));
    assert_eq!(m.per_bank_request_bytes, Some(18_612_224));
}

#[test]
fn borrows_only_about_the_same_request() {
    let mut msg = OomMessage {
        requested_bytes: Some(6),
        ..OomMessage::default()
    };
    let named = |requested, op: &str| OomMessage {
        requested_bytes: requested,
        requested_op: Some(op.into()),
        ..OomMessage::default()
    };
    borrow(&mut msg, &named(Some(7), "other"));
    assert_eq!(msg.requested_op, None);
    borrow(&mut msg, &named(None, "same"));
    borrow(&mut msg, &named(Some(6), "later"));
    assert_eq!(msg.requested_op.as_deref(), Some("same"));
}

#[test]
fn a_failure_beats_a_more_detailed_warning() {
    let mut scanner = Scanner::default();
    let mut buf = String::new();
    for line in [
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure",
            "RESOURCE_EXHAUSTED: From /job:localhost/replica:0/task:0:",
        ] {
            scanner.physical(line, &mut buf);
        }
    let msg = scanner.finish().unwrap();
    assert_eq!(
        (msg.kind, msg.advisory, msg.requested_bytes),
        (OomKind::Short, false, None)
    );
}

#[test]
fn the_failing_ops_tensor_not_the_status_passed_on() {
    // The executor passes the first op's status on to the others: the tensor that
    // failed is the first one (heldout44/03, here with each record on a line of its own).
    let m = parsed("2025-03-12 16:17:33.380000: W tensorflow/core/framework/op_kernel.cc:1841] OP_REQUIRES failed at matmul_op.cc:1 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[128,128] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu\n2025-03-12 16:17:33.380804: I tensorflow/core/framework/local_rendezvous.cc:405] Local rendezvous is aborting with status: RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[256,128] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu\n");
    assert_eq!(m.requested_shape.as_deref(), Some("[128,128]"));
    // A record quoted after a line's own text is no log prefix of that line.
    let m = parsed("7.  `: RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[128,128] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu 2025-03-12 16:17:33.380804: I tensorflow/core/framework/local_rendezvous.cc:405] Local rendezvous is aborting with status: RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[256,128]`");
    assert_eq!(m.requested_shape.as_deref(), Some("[128,128]"));
}

#[test]
fn a_console_cut_at_a_space_keeps_the_space() {
    // An 80-column line ending a clause, then a word (heldout43/08), or ending a word,
    // then a number (heldout43/04).
    let m = parsed("[ERROR] [NCC_EOOM001] Maximum peak HBM usage of 32.00GB exceeds HBM limit of\n24.00GB for Trn2. This consists of 16.00GB I/O tensors, 0B intermediate tensors,\nand 16.00GB internal (scratchpad) allocations\n");
    assert_eq!(m.usage.len(), 3);
    let m = parsed("gave the real cause, `RESOURCE_EXHAUSTED: Out of memory while trying to allocate\n29.91GiB [executable_name='jit__train_step']`. JAX preallocates only **75%** of each\n");
    assert_eq!(m.requested_bytes, Some(32_115_617_956));
}
