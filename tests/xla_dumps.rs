//! Plans read from XLA dump directories (`oomlens::evidence::dump`), checked against
//! the capture of the same executable and against `memory_analysis()`:
//!
//! - `tests/fixtures/dump_attention_train/`: `attention_train.xplane.pb` (a capture),
//!   `xla_dump/` (the train step's proto dump, `--xla_dump_hlo_as_proto`),
//!   `oracle.json`;
//! - `tests/fixtures/dump_attention_train_text/`: the same program dumped as text
//!   (XLA's default), with its `oracle.json`.
//!
//! Two variables extend the checks to recordings made elsewhere (`make_captures.py
//! --worker NAME --out DIR` with `XLA_FLAGS=--xla_dump_to=DIR/xla_dump …`):
//! `OOMLENS_DUMP_RECORDINGS=DIR,…` (proto dumps against their captures) and
//! `OOMLENS_DUMP_PAIRS=PROTO_DUMP:TEXT_DUMP,…` (text plans against proto plans).

use std::path::{Path, PathBuf};

use oomlens::evidence::dump::{self, Dump, DumpFile, PlanSource};
use oomlens::report::model::{ModuleReport, Plan};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn proto_dir() -> PathBuf {
    fixture("dump_attention_train/xla_dump")
}

fn text_dir() -> PathBuf {
    fixture("dump_attention_train_text/xla_dump")
}

/// `(label, argument, output, alias, temp)` of every module an `oracle.json` measured.
fn oracle_totals_in(dir: &Path) -> Vec<(String, [u64; 4])> {
    let text = std::fs::read_to_string(dir.join("oracle.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let modules = oracle["modules"].as_array().unwrap();
    modules
        .iter()
        .map(|m| {
            let label = format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]);
            let field = |k: &str| m[k].as_u64().unwrap();
            let totals = [
                field("argument_size_in_bytes"),
                field("output_size_in_bytes"),
                field("alias_size_in_bytes"),
                field("temp_size_in_bytes"),
            ];
            (label, totals)
        })
        .collect()
}

fn oracle_totals() -> Vec<(String, [u64; 4])> {
    oracle_totals_in(&fixture("dump_attention_train"))
}

fn totals(plan: &Plan) -> [u64; 4] {
    [
        plan.argument_bytes,
        plan.output_bytes,
        plan.alias_bytes,
        plan.temp_bytes,
    ]
}

fn module<'a>(dump: &'a Dump, label: &str) -> &'a ModuleReport {
    dump.modules
        .iter()
        .find(|m| m.label == label)
        .unwrap_or_else(|| panic!("module {label} not in the dump"))
}

/// Every file of a folder, as the page hands them in.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = format!("xla_dump/{}", e.file_name().to_string_lossy());
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn read_files(files: &[(String, Vec<u8>)]) -> Result<Dump, dump::DumpError> {
    let handed: Vec<DumpFile<'_>> = files
        .iter()
        .map(|(name, bytes)| DumpFile { name, bytes })
        .collect();
    dump::read(&handed)
}

/// A recording folder: a capture (`*.xplane.pb`), its proto dump (`xla_dump/`) and
/// `oracle.json`. The dump's plans must equal the capture's, byte for byte, and
/// `memory_analysis()`.
fn check_proto_dump_against_capture(dir: &Path) {
    let dump = dump::read_dir(&dir.join("xla_dump")).expect("the proto dump reads");
    let capture =
        oomlens::analyze_path(dir, &oomlens::Options::default()).expect("the capture reads");
    let captured = &capture.hosts[0].modules;
    assert!(!dump.modules.is_empty());
    for m in &dump.modules {
        let theirs = captured
            .iter()
            .find(|c| c.label == m.label)
            .unwrap_or_else(|| panic!("{} is not in the capture", m.label));
        assert_eq!(
            serde_json::to_string(&m.plan).unwrap(),
            serde_json::to_string(&theirs.plan).unwrap(),
            "{}: the dump's plan differs from the capture's",
            m.label
        );
        assert_eq!(
            (&m.name, &m.program_id, m.executions),
            (&theirs.name, &theirs.program_id, 0)
        );
        assert_eq!(dump.source_of(&m.label).unwrap().plan, PlanSource::Proto);
    }
    for (label, expected) in oracle_totals_in(dir) {
        assert_eq!(totals(&module(&dump, &label).plan), expected, "{label}");
    }
    assert!(dump.notes.is_empty(), "{:?}", dump.notes);
}

#[test]
fn the_proto_dump_gives_the_captures_plans_byte_for_byte() {
    check_proto_dump_against_capture(&fixture("dump_attention_train"));
    let dump = dump::read_dir(&proto_dir()).unwrap();
    assert!(module(&dump, "jit_train_step(10)").plan.has_heap_trace);
}

/// `OOMLENS_DUMP_RECORDINGS=DIR,…`: more recording folders, as `make_captures.py
/// --worker NAME --out DIR` writes them with `XLA_FLAGS=--xla_dump_to=DIR/xla_dump
/// --xla_dump_hlo_as_proto`.
#[test]
fn recordings_made_elsewhere_give_the_captures_plans() {
    let Ok(dirs) = std::env::var("OOMLENS_DUMP_RECORDINGS") else {
        return;
    };
    for dir in dirs.split(',').filter(|d| !d.is_empty()) {
        check_proto_dump_against_capture(Path::new(dir));
    }
}

#[test]
fn the_proto_dump_equals_memory_analysis() {
    let dump = dump::read_dir(&proto_dir()).unwrap();
    for (label, expected) in oracle_totals() {
        assert_eq!(totals(&module(&dump, &label).plan), expected, "{label}");
    }
    // Largest peak first, as a capture's report orders modules.
    let peaks: Vec<u64> = dump.modules.iter().map(|m| m.plan.peak_bytes).collect();
    assert!(peaks.windows(2).all(|w| w[0] >= w[1]), "{peaks:?}");
    assert_eq!(dump.modules[0].label, "jit_train_step(10)");
}

#[test]
fn the_text_dump_totals_equal_memory_analysis() {
    let dump = dump::read_dir(&text_dir()).expect("the text dump reads");
    let expected = oracle_totals_in(&fixture("dump_attention_train_text"));
    assert!(!expected.is_empty());
    for (label, expected) in expected {
        let m = module(&dump, &label);
        assert_eq!(totals(&m.plan), expected, "{label}");
        let source = dump.source_of(&label).unwrap();
        assert_eq!(source.plan, PlanSource::Text);
        assert!(source
            .files
            .iter()
            .any(|f| f.ends_with("-buffer-assignment.txt")));
    }
    assert!(dump.notes.is_empty(), "{:?}", dump.notes);
}

/// What a text plan must share with the proto plan of the same program.
fn assert_text_matches_proto(proto: &Dump, text: &Dump) {
    assert_eq!(proto.modules.len(), text.modules.len());
    for p in &proto.modules {
        let t = module(text, &p.label);
        let (pp, tp) = (&p.plan, &t.plan);
        let exact = |plan: &Plan| {
            (
                totals(plan),
                [
                    plan.host_argument_bytes,
                    plan.host_output_bytes,
                    plan.host_temp_bytes,
                ],
                [
                    plan.indefinite_bytes,
                    plan.allocation_bytes,
                    plan.total_bytes,
                ],
                [
                    plan.parameter_count,
                    plan.parameter_bytes,
                    plan.donated_parameter_count,
                ],
                [
                    plan.donated_bytes,
                    plan.non_aliased_output_bytes,
                    plan.remat_instructions,
                ],
                plan.host_callbacks.clone(),
            )
        };
        assert_eq!(exact(tp), exact(pp), "{}: exact fields", p.label);
        // Rebuilt from live ranges; equal on every recording so far.
        assert_eq!(
            tp.heap_peak_bytes, pp.heap_peak_bytes,
            "{}: heap peak",
            p.label
        );
        assert_eq!(tp.peak_bytes, pp.peak_bytes, "{}: peak", p.label);
        let live = |plan: &Plan| {
            let mut v: Vec<String> = plan
                .live_at_peak
                .iter()
                .map(|b| serde_json::to_string(b).unwrap())
                .collect();
            v.sort();
            v
        };
        let (lt, lp) = (live(tp), live(pp));
        let only_text: Vec<&String> = lt.iter().filter(|b| !lp.contains(b)).collect();
        let only_proto: Vec<&String> = lp.iter().filter(|b| !lt.contains(b)).collect();
        assert!(
            only_text.is_empty() && only_proto.is_empty(),
            "{}: buffers live at the peak differ: text only {only_text:?}, proto only {only_proto:?}",
            p.label
        );
        assert_eq!(tp.roles_at_peak, pp.roles_at_peak, "{}: roles", p.label);
        assert_eq!(
            serde_json::to_value(&tp.scan_stacks).unwrap(),
            serde_json::to_value(&pp.scan_stacks).unwrap(),
            "{}: scan stacks",
            p.label
        );
        if !pp.has_heap_trace {
            // Small modules: the whole plan reads alike.
            assert_eq!(
                serde_json::to_value(tp).unwrap(),
                serde_json::to_value(pp).unwrap()
            );
        }
    }
}

#[test]
fn the_text_dump_rebuilds_the_proto_dumps_peak() {
    let proto = dump::read_dir(&proto_dir()).unwrap();
    let text = dump::read_dir(&text_dir()).unwrap();
    assert_text_matches_proto(&proto, &text);
    let note = module(&text, "jit_train_step(10)")
        .plan
        .replay_note
        .clone()
        .unwrap();
    assert!(note.contains("rebuilt"), "{note}");
}

#[test]
fn dumps_recorded_elsewhere_read_alike_from_proto_and_text() {
    let Ok(pairs) = std::env::var("OOMLENS_DUMP_PAIRS") else {
        return;
    };
    for pair in pairs.split(',').filter(|p| !p.is_empty()) {
        let (proto, text) = pair.split_once(':').expect("PROTO_DIR:TEXT_DIR");
        let proto = dump::read_dir(Path::new(proto)).unwrap();
        let text = dump::read_dir(Path::new(text)).unwrap();
        assert_text_matches_proto(&proto, &text);
    }
}

#[test]
fn a_folder_with_proto_and_text_prefers_the_proto() {
    let mut files = files_of(&proto_dir());
    files.extend(files_of(&text_dir()));
    let both = read_files(&files).unwrap();
    let proto_only = dump::read_dir(&proto_dir()).unwrap();
    assert_eq!(both.modules.len(), proto_only.modules.len());
    for s in &both.sources {
        assert_eq!(s.plan, PlanSource::Proto, "{}", s.label);
        assert_eq!(s.files.len(), 1);
        assert!(
            s.files[0].ends_with("after_optimizations.hlo.pb"),
            "{:?}",
            s.files
        );
    }
    assert_eq!(
        serde_json::to_string(&both.modules).unwrap(),
        serde_json::to_string(&proto_only.modules).unwrap()
    );
}

#[test]
fn no_dump_files_is_an_error_that_says_how_to_dump() {
    let dir = std::env::temp_dir().join(format!("oomlens-no-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a dump").unwrap();
    let err = dump::read_dir(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(err.kind(), "no_dump_files");
    let text = err.to_string();
    assert!(text.contains("no XLA dump files in"), "{text}");
    assert!(text.contains("XLA_FLAGS=--xla_dump_to=DIR"), "{text}");
    assert!(!text.contains('\n'));
    assert_eq!(dump::read(&[]).unwrap_err().kind(), "no_dump_files");
    let missing = dump::read_dir(Path::new("/nonexistent/oomlens-dump")).unwrap_err();
    assert_eq!(missing.kind(), "unreadable");
}

#[test]
fn only_unoptimized_files_is_no_plan() {
    // The HLO before optimizations has no plan; nor has the optimized HLO alone.
    let hlo = files_of(&text_dir())
        .into_iter()
        .find(|(n, _)| n.ends_with("cpu_after_optimizations.txt"))
        .unwrap()
        .1;
    let files = vec![
        (
            "module_0010.jit_train_step.before_optimizations.txt".to_owned(),
            hlo.clone(),
        ),
        (
            "module_0010.jit_train_step.cpu_after_optimizations.txt".to_owned(),
            hlo,
        ),
    ];
    let err = read_files(&files).unwrap_err();
    assert_eq!(err.kind(), "no_plan_in_dump", "{err}");
    assert!(err.to_string().contains("--xla_dump_hlo_as_proto"), "{err}");
}

/// A second, small module's buffer assignment, so that a broken train step is one
/// module among others.
fn small_module() -> (String, Vec<u8>) {
    let text = "BufferAssignment:
allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:
 value: <0 x.1 @0> (size=16,offset=0): f32[4]{0}
allocation 1: size 16, output shape is |f32[4]|, maybe-live-out:
 value: <1 add @0> (size=16,offset=0): f32[4]{0}
";
    let name = "module_0001.jit_small.cpu_after_optimizations-buffer-assignment.txt";
    (name.to_owned(), text.as_bytes().to_vec())
}

/// The proto dump with the train step's proto cut or spoiled by `spoil`.
fn spoiled(spoil: impl Fn(&[u8]) -> Vec<u8>) -> Vec<(String, Vec<u8>)> {
    files_of(&proto_dir())
        .into_iter()
        .map(|(name, bytes)| {
            if name.ends_with("jit_train_step.cpu_after_optimizations.hlo.pb") {
                (name, spoil(&bytes))
            } else {
                (name, bytes)
            }
        })
        .collect()
}

fn with_small_module(mut files: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    files.push(small_module());
    files
}

/// A proto spoiler: takes the good bytes, returns broken ones.
type Spoil = dyn Fn(&[u8]) -> Vec<u8>;

#[test]
fn a_broken_proto_is_a_clear_error_alone_and_a_note_among_others() {
    let cuts: [&Spoil; 3] = [
        &|b| b[..b.len() / 2].to_vec(),
        &|b| b[..b.len() - 1].to_vec(),
        &|b| b.iter().map(|x| x ^ 0x5a).collect(),
    ];
    for cut in cuts {
        let err = read_files(&spoiled(cut)).unwrap_err();
        assert_eq!(err.kind(), "corrupt_proto", "{err}");
        assert!(err.to_string().contains("--xla_dump_hlo_as_proto"), "{err}");
        assert!(!err.to_string().contains('\n'));
        let dump = read_files(&with_small_module(spoiled(cut))).unwrap();
        let labels: Vec<&str> = dump.modules.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["jit_small(1)"]);
        let noted = dump.notes.iter().any(|n| n.id == "dump_proto_unreadable");
        assert!(noted, "{:?}", dump.notes);
    }
}

#[test]
fn a_broken_proto_falls_back_to_the_text_files() {
    let mut files = spoiled(|b| b[..b.len() / 3].to_vec());
    files.extend(files_of(&text_dir()));
    let dump = read_files(&files).unwrap();
    assert_eq!(dump.modules.len(), 1);
    let source = dump.source_of("jit_train_step(10)").unwrap();
    assert_eq!(source.plan, PlanSource::Text);
    assert!(dump.notes.iter().any(|n| n.id == "dump_proto_unreadable"));
    let expected = oracle_totals();
    let (_, train) = expected
        .iter()
        .find(|(l, _)| l == "jit_train_step(10)")
        .unwrap();
    assert_eq!(&totals(&module(&dump, "jit_train_step(10)").plan), train);
}

#[test]
fn a_proto_without_buffer_assignment_says_the_plan_is_missing() {
    use oomlens::proto::xla::HloProto;
    use prost::Message;
    let files = spoiled(|b| {
        let mut hlo = HloProto::decode(b).unwrap();
        assert!(
            hlo.buffer_assignment.is_some(),
            "the CPU dump holds field 3"
        );
        hlo.buffer_assignment = None;
        hlo.encode_to_vec()
    });
    assert_eq!(read_files(&files).unwrap_err().kind(), "no_plan_in_dump");
    let dump = read_files(&with_small_module(files)).unwrap();
    assert!(dump
        .notes
        .iter()
        .any(|n| n.id == "dump_proto_without_assignment"));
    assert!(!dump.modules.iter().any(|m| m.name == "jit_train_step"));
}

#[test]
fn text_files_cut_short_never_panic_and_say_so() {
    let files = files_of(&text_dir());
    let assignment = files
        .iter()
        .position(|(n, _)| n.contains("jit_train_step") && n.ends_with("-buffer-assignment.txt"))
        .unwrap();
    let full = files[assignment].1.clone();
    for cut in [0, 1, 17, full.len() / 3, full.len() / 2, full.len() - 1] {
        let mut cut_files = files.clone();
        cut_files[assignment].1 = full[..cut].to_vec();
        let dump = match read_files(&cut_files) {
            Ok(dump) => dump,
            Err(e) => {
                assert_eq!(e.kind(), "no_plan_in_dump", "cut at {cut}: {e}");
                continue;
            }
        };
        if let Some(m) = dump.modules.iter().find(|m| m.name == "jit_train_step") {
            let noted = dump.notes.iter().any(|n| n.text.contains("cut short"));
            assert!(noted, "cut at {cut}: {:?}", dump.notes);
            assert!(m.plan.temp_bytes <= 63356928);
        }
    }
}

#[test]
fn a_single_dump_file_can_be_read() {
    let path = std::fs::read_dir(proto_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("jit_train_step.cpu_after_optimizations.hlo.pb")
        })
        .unwrap();
    let dump = dump::read_dir(&path).unwrap();
    assert_eq!(dump.modules.len(), 1);
    assert_eq!(dump.modules[0].label, "jit_train_step(10)");
}

/// A small deterministic generator, so that the mutations below are the same each run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

/// One mutation of a text: lines dropped, repeated or cut, numbers made huge or
/// negative, brackets and separators thrown in.
fn mutate(text: &str, rng: &mut Lcg) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.next(8) {
        if lines.is_empty() {
            break;
        }
        let i = rng.next(lines.len());
        match rng.next(7) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let line = lines[i].clone();
                lines.insert(i, line);
            }
            2 => {
                let cut = rng.next(lines[i].len() + 1);
                lines[i] = lines[i].chars().take(cut).collect();
            }
            3 => lines[i] = lines[i].replace(|c: char| c.is_ascii_digit(), "9"),
            4 => {
                lines[i] = lines[i]
                    .replacen("size=", "size=-", 1)
                    .replacen(':', "{(|", 1)
            }
            5 => lines[i] = lines[i].replace(['}', ')', '|', '"'], ""),
            _ => lines[i] = format!("{}99999999999999999999{}", lines[i], lines[i]),
        }
    }
    lines.join("\n")
}

#[test]
fn mutated_text_dumps_never_panic() {
    use oomlens::evidence::dump::text::{self as text_dump, TextFiles};
    let files = files_of(&text_dir());
    let find = |suffix: &str| {
        let (_, bytes) = files.iter().find(|(n, _)| n.ends_with(suffix)).unwrap();
        String::from_utf8(bytes.clone()).unwrap()
    };
    let originals = [
        find("-buffer-assignment.txt"),
        find("-buffer-assignment-values.txt"),
        find("-live-range.txt"),
        find("optimizations.txt"),
        find("-memory-usage-report.txt"),
    ];
    // `OOMLENS_MUTATIONS=N` runs more (and other) mutations.
    let rounds: usize = std::env::var("OOMLENS_MUTATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let mut rng = Lcg(7 + rounds as u64);
    let mut read = 0;
    for _ in 0..rounds {
        let mutated: Vec<String> = originals.iter().map(|t| mutate(t, &mut rng)).collect();
        let input = TextFiles {
            assignment: &mutated[0],
            values: Some(&mutated[1]),
            live_range: Some(&mutated[2]),
            hlo: Some(&mutated[3]),
            usage_report: Some(&mutated[4]),
        };
        if let Ok(rebuilt) = text_dump::plan(&input) {
            read += 1;
            let plan = &rebuilt.plan;
            assert!(plan.timeline.len() <= 2000);
            assert!(plan.live_at_peak.len() <= 200);
            assert_eq!(
                plan.peak_bytes,
                plan.heap_peak_bytes.saturating_add(plan.indefinite_bytes)
            );
        }
    }
    assert!(
        read > rounds / 2,
        "most mutations still read: {read} of {rounds}"
    );
}
