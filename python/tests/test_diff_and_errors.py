"""oomlens.diff on the recorded pairs (the CLI's `oomlens diff`, byte for byte) and
oomlens.from_error on the corpus of real out-of-memory messages."""

from __future__ import annotations

import json
import pickle

import pytest

import oomlens

from conftest import FIXTURES

PAIRS = FIXTURES / "pairs"
ERRORS = FIXTURES / "errors"


@pytest.mark.parametrize("pair", sorted(p.name for p in PAIRS.iterdir() if p.is_dir()))
def test_diff_equals_the_cli(pair, cli):
    before, after = PAIRS / pair / "before", PAIRS / pair / "after"
    d = oomlens.diff(before, after)
    for fmt, rendered in [("json", d.json_text), ("text", d.text()), ("markdown", d.markdown())]:
        status, out, err = cli("diff", before, after, "--format", fmt)
        assert status == 0, err
        assert rendered == out, fmt
    assert d == json.loads(d.json_text)
    assert d["schema"] == oomlens.DIFF_SCHEMA == "oomlens-diff/1"
    assert type(pickle.loads(pickle.dumps(d))) is dict


def test_donation_diff_figures_are_memory_analysis_figures():
    # The plans compared are the ones XLA's memory_analysis() gave for the two runs:
    # donating the state makes 1.5 MiB of outputs alias their parameters.
    def oracle(side):
        modules = json.loads((PAIRS / "donation" / side / "oracle.json").read_text())["modules"]
        return next(m for m in modules if m["name"] == "jit_train_step")

    d = oomlens.diff(PAIRS / "donation" / "before", PAIRS / "donation" / "after")
    for side in ("before", "after"):
        want, plan = oracle(side), d[side]["plan"]
        assert d[side]["module"] == f"jit_train_step({want['program_id']})"
        assert plan["temp_bytes"] == want["temp_size_in_bytes"]
        assert plan["argument_bytes"] == want["argument_size_in_bytes"]
        assert plan["alias_bytes"] == want["alias_size_in_bytes"]
    assert d["after"]["plan"]["alias_bytes"] == 1572864
    assert d["headline"]["peak_before_bytes"] == 67125376
    assert d["headline"]["peak_after_bytes"] == 65978496
    assert d["headline"]["text"] == "peak 64.02 MiB → 62.92 MiB (−1.7%)"


def test_diff_of_bytes_matches_hosts_by_the_one_name():
    before = next((PAIRS / "batch_half" / "before").glob("*.xplane.pb"))
    after = next((PAIRS / "batch_half" / "after").glob("*.xplane.pb"))
    from_bytes = oomlens.diff(before.read_bytes(), after.read_bytes())
    from_paths = oomlens.diff(before, after)
    assert from_bytes["headline"] == from_paths["headline"]
    assert from_bytes["delta"] == from_paths["delta"]


def test_diff_errors_raise_oomlens_error(tmp_path):
    with pytest.raises(oomlens.OomlensError) as raised:
        oomlens.diff(tmp_path / "missing", PAIRS / "leak" / "after")
    assert raised.value.kind == "open"


def _first_difference(path, expected, actual):
    """As tests/error_messages.rs: the expectation's fields must be in `actual`."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        for key, want in expected.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            found = _first_difference(f"{path}.{key}", want, actual[key])
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {actual!r}"
        for i, (w, g) in enumerate(zip(expected, actual)):
            found = _first_difference(f"{path}[{i}]", w, g)
            if found:
                return found
        return None
    return None if expected == actual else f"{path}: expected {expected!r}, got {actual!r}"


MESSAGES = sorted(ERRORS.glob("*.txt"))


@pytest.mark.parametrize("txt", MESSAGES, ids=lambda p: p.stem)
def test_from_error_reads_the_transcribed_figures(txt):
    expected = json.loads(txt.with_suffix(".expected.json").read_text(encoding="utf-8"))
    # The triage and the figures no field holds are scored by tests/corpus_score.rs.
    expected.pop("triage", None)
    expected.pop("unmapped", None)
    report = oomlens.from_error(txt.read_text(encoding="utf-8"))
    assert report["schema"] == "oomlens/1"
    assert report["modules"] == [] and report["selected_module"] is None
    parsed = report["error"]
    assert _first_difference("", expected, parsed) is None, _first_difference("", expected, parsed)


def test_from_error_on_the_cpu_failure_text():
    text = (FIXTURES / "oom_first_call" / "error.txt").read_text()
    report = oomlens.from_error(text)
    assert report["error"]["requested_bytes"] == 281475043819520


def test_from_error_without_a_message():
    assert len(MESSAGES) >= 10
    with pytest.raises(oomlens.OomlensError) as raised:
        oomlens.from_error("Traceback (most recent call last):\nValueError: shapes differ\n")
    assert raised.value.kind == "no_oom_message"
    assert "RESOURCE_EXHAUSTED" in str(raised.value)
    with pytest.raises(TypeError):
        oomlens.from_error(b"RESOURCE_EXHAUSTED")
