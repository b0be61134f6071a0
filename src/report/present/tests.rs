use super::*;

#[test]
fn changes_are_signed_and_compared() {
    assert_eq!(signed_size(-14_958_592), "−14.27 MiB");
    assert_eq!(signed_size(1 << 20), "+1.00 MiB");
    assert_eq!(signed_size(0), "0 B");
    assert_eq!(percent_change(200, 110), "−45.0%");
    assert_eq!(percent_change(100, 103), "+3.0%");
    assert_eq!(percent_change(7, 7), "unchanged");
    assert_eq!(size(3 << 30), "3.00 GiB");
}

#[test]
fn the_headline_says_whether_it_now_fits() {
    let mut h = DiffHeadline {
        text: String::new(),
        peak_before_bytes: Some(2 << 30),
        peak_after_bytes: Some(1_181_116_006),
        fit: Fit::NowFits,
        pool_bytes: Some(1_610_612_736),
        pool_label: None,
        short_bytes: None,
    };
    assert_eq!(
        diff_headline(&h),
        "peak 2.00 GiB → 1.10 GiB (−45.0%): now fits the 1.50 GiB pool"
    );
    h.fit = Fit::StillDoesNotFit;
    h.short_bytes = Some(322_122_547);
    assert_eq!(
        diff_headline(&h),
        "peak 2.00 GiB → 1.10 GiB (−45.0%): still does not fit the 1.50 GiB pool: 307.2 MiB short"
    );
    h.fit = Fit::Unknown;
    assert_eq!(diff_headline(&h), "peak 2.00 GiB → 1.10 GiB (−45.0%)");
}

#[test]
fn a_prediction_sits_beside_what_was_saved() {
    let p = Prediction {
        id: DiagnosisId::RoleForward,
        subject: None,
        lines: 1,
        estimated_saving_bytes: 456 << 20,
        actual_saving_bytes: 410 << 20,
        actual_in_use_saving_bytes: None,
        bound: None,
        fix: None,
    };
    assert_eq!(
            prediction(&p),
            "remat (jax.checkpoint) was estimated to save 456.0 MiB; it saved 410.0 MiB (90% of the estimate)"
        );
}

#[test]
fn execution_numbers_are_compressed() {
    assert_eq!(ranges(&mut [3, 1, 2, 5, 7, 8]), "1–3, 5, 7, 8");
    let mut many: Vec<usize> = (1..=40).step_by(2).collect();
    let text = ranges(&mut many);
    assert!(text.ends_with("… 39 (20 executions)"), "{text}");
    assert_eq!(executions(&[4]), "execution 4");
}

#[test]
fn durations_take_the_unit_that_suits_them() {
    assert_eq!(duration(1.25e9), "1.25 s");
    assert_eq!(duration(3.4e6), "3.400 ms");
    assert_eq!(duration(120e3), "120.0 µs");
    assert_eq!(duration(80.4), "80 ns");
    assert_eq!(duration(0.0), "0 ns");
}
