//! Writes the scenario captures of `support/`
//! (docs/diagnosis.md#the-scenarios-the-tests-build: plan too big, gradients kept every
//! step, no donation, an eval copy left on the device, a memory fraction set, a debug
//! print) as `.xplane.pb` files, for the browser tests (`npm test`) to drop on the page.
//! Does nothing unless `OOMLENS_WRITE_SCENARIOS` names a folder.

mod support;

use support::scenarios::named;

#[test]
fn write_scenario_captures() {
    let Ok(dir) = std::env::var("OOMLENS_WRITE_SCENARIOS") else {
        eprintln!("SKIP: OOMLENS_WRITE_SCENARIOS is not set; nothing written");
        return;
    };
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).expect("the output folder");
    let scenarios = named();
    for (name, s) in scenarios {
        let path = dir.join(format!("{name}.xplane.pb"));
        std::fs::write(&path, &s.bytes).expect("write the capture");
        // The written file analyzes as the bytes do.
        let report = oomlens::analyze_path(&path, &oomlens::Options::default())
            .expect("the scenario capture analyzes");
        assert_eq!(report.hosts.len(), 1);
    }
}
