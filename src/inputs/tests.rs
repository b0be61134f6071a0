use super::*;

#[test]
fn names_and_contents_tell_inputs_apart() {
    assert_eq!(classify("x.txt", b""), Kind::Empty);
    assert_eq!(
        classify("error.txt", b"RESOURCE_EXHAUSTED: x\n"),
        Kind::Text
    );
    assert_eq!(
        classify("log", "caf\u{e9} \u{1b}[1m\n".as_bytes()),
        Kind::Text
    );
    assert_eq!(classify("p", &[0x1f, 0x8b, 8, 0]), Kind::DeviceProfile);
    assert_eq!(
        classify(
            "xla/module_0010.jit_f.cpu_after_optimizations.hlo.pb",
            &[1, 2, 0]
        ),
        Kind::DumpFile
    );
    assert_eq!(classify("a.xplane.pb", b"not one"), Kind::Capture);
    // An XSpace without its usual name: plane 1, id 7, name "/host:CPU".
    let mut xspace = vec![0x0a, 20, 0x08, 7, 0x12, 9];
    xspace.extend_from_slice(b"/host:CPU");
    assert_eq!(classify("trace", &xspace), Kind::Capture);
    // A raw pprof: sample_type {type: 1, unit: 2}.
    assert_eq!(
        classify("heap", &[0x0a, 4, 0x08, 1, 0x10, 2, 0x12, 0]),
        Kind::DeviceProfile
    );
    assert!(matches!(
        classify("blob", &[0, 1, 2, 3, 0xff]),
        Kind::Unknown(_)
    ));
    assert!(!is_dump_name("module_.x"));
    assert!(!is_dump_name("module_12"));
}

#[test]
fn profiles_sort_by_their_numbers() {
    let mut names = vec!["step10.prof", "step2.prof", "step1.prof"];
    names.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(names, ["step1.prof", "step2.prof", "step10.prof"]);
}
