"""What one worker does: a host file found (:class:`HostFile`), analyzed by the engine,
reduced to one row (:func:`analyze_host`); the rows of a run compared, and each run
summed up in one row (:func:`summarize_runs`). Needs neither dask nor pyarrow."""

from __future__ import annotations

import json
import os
import posixpath
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from .. import _native
from .._error import OomlensError

#: The name of the row layout (docs/fleet.md); in every Parquet file's metadata.
FLEET_SCHEMA = "oomlens-fleet/1"

CAPTURE_SUFFIX = ".xplane.pb"

#: An error log read from a remote store is read up to this many bytes (its end: the
#: message closes a log). A local one is streamed whole by the engine.
MAX_REMOTE_LOG_BYTES = 32 << 20

# Error logs beside the host files: names that say error first, then log (the engine's
# own ranking of a folder's text files, src/inputs.rs `text_rank`), with a text-like
# extension or none.
_LOG_WORDS = (("error", "err", "oom", "traceback"), ("log", "stderr", "stdout", "out"))
_LOG_EXTENSIONS = ("", ".txt", ".log", ".err", ".out", ".stderr", ".stdout")


@dataclass(frozen=True)
class HostFile:
    """One host file of a run, as discovered."""

    #: The run: the folder holding the host file (a path, or a URL such as ``gs://…``).
    run: str
    #: The root given that it was found under.
    root: str
    #: Its path or URL.
    path: str
    #: Its size in bytes, as listed.
    size: int
    #: The error log of its run joined to its report (a path or URL), or ``None``.
    error_log: Optional[str] = None

    @property
    def file(self) -> str:
        return posixpath.basename(self.path.replace("\\", "/"))

    @property
    def host(self) -> str:
        name = self.file
        return name[: -len(CAPTURE_SUFFIX)] if name.endswith(CAPTURE_SUFFIX) else name


def is_local(url: str) -> bool:
    """Whether ``url`` is a local path (``file://`` URLs included)."""
    return "://" not in url or url.startswith("file://")


def local_path(url: str) -> str:
    return url[len("file://") :] if url.startswith("file://") else url


def log_rank(name: str) -> Optional[int]:
    """How likely a file beside host files is its run's error log (0 best), or ``None``
    when it is not one: named like an error (``error.txt``, ``oom.log``), then like a
    log (``train.log``, ``stderr``), with a text-like extension or none."""
    lower = name.lower()
    if lower.endswith(CAPTURE_SUFFIX):
        return None
    ext = os.path.splitext(lower)[1]
    if ext not in _LOG_EXTENSIONS:
        return None
    for rank, words in enumerate(_LOG_WORDS):
        if any(w in lower for w in words):
            return rank
    return None


def best_log(names: Iterable[str]) -> Optional[str]:
    ranked = sorted((r, n) for n in names for r in [log_rank(n)] if r is not None)
    return ranked[0][1] if ranked else None


# --- the row ---------------------------------------------------------------------

#: The columns of the per-host table, in order, with their Parquet types (docs/fleet.md).
#: A figure's label (measured / read / estimated) is its name's suffix.
HOST_COLUMNS: List[Tuple[str, str]] = [
    ("run", "string"),
    ("host", "string"),
    ("file", "string"),
    ("path", "string"),
    ("file_bytes", "int64"),
    ("status", "string"),
    ("error", "string"),
    ("error_kind", "string"),
    ("error_log", "string"),
    ("verdict", "string"),
    ("headline", "string"),
    ("module", "string"),
    ("plan_peak_bytes_read", "int64"),
    ("runtime_peak_bytes_measured", "int64"),
    ("capacity_bytes_measured", "int64"),
    ("growth_per_execution_bytes_measured", "int64"),
    ("oom_evidence", "list<string>"),
    ("ran_out", "bool"),
    ("ran_out_at_ns_measured", "double"),
    ("ran_out_first", "bool"),
    ("profile_start_ns", "int64"),
    ("top_diagnosis", "string"),
    ("top_title", "string"),
    ("top_label", "string"),
    ("top_saving_bytes_estimated", "int64"),
    ("top_fits_after", "bool"),
    ("best_fix", "string"),
    ("best_saving_bytes_estimated", "int64"),
    ("diagnosis", "list<diagnosis>"),
    ("notes", "list<string>"),
    ("tool", "string"),
    ("seconds", "double"),
]


def row_from_report(hf: HostFile, report: Dict[str, Any], engine_row: Dict[str, Any],
                    profile_start_ns: Optional[int], seconds: float) -> Dict[str, Any]:
    """A host's row: the engine's summary row (``hosts_summary[]``, docs/hosts.md) and,
    from its report, the headline and the diagnosis lines with their savings."""
    diagnosis = report.get("diagnosis") or []
    top = diagnosis[0] if diagnosis else {}
    best = None
    for d in diagnosis:
        s = d.get("saving_bytes")
        if s is not None and (best is None or s > best["saving_bytes"]):
            best = d
    evidence = list(engine_row.get("oom_evidence") or [])
    return {
        "run": hf.run,
        "host": engine_row["host"],
        "file": engine_row["file"],
        "path": hf.path,
        "file_bytes": engine_row["file_bytes"],
        "status": engine_row["status"],
        "error": engine_row.get("error"),
        "error_kind": engine_row.get("error_kind"),
        "error_log": hf.error_log,
        "verdict": engine_row.get("verdict"),
        "headline": (report.get("headline") or {}).get("text"),
        "module": engine_row.get("selected_module"),
        "plan_peak_bytes_read": engine_row.get("plan_peak_bytes"),
        "runtime_peak_bytes_measured": engine_row.get("runtime_peak_bytes"),
        "capacity_bytes_measured": engine_row.get("capacity_bytes"),
        "growth_per_execution_bytes_measured": engine_row.get("growth_per_execution_bytes"),
        "oom_evidence": evidence,
        "ran_out": bool(evidence),
        "ran_out_at_ns_measured": engine_row.get("ran_out_at_ns"),
        "ran_out_first": False,
        "profile_start_ns": profile_start_ns,
        "top_diagnosis": top.get("id"),
        "top_title": top.get("title"),
        "top_label": top.get("label"),
        "top_saving_bytes_estimated": top.get("saving_bytes"),
        "top_fits_after": top.get("fits_after"),
        "best_fix": best["id"] if best else None,
        "best_saving_bytes_estimated": best["saving_bytes"] if best else None,
        "diagnosis": [
            {
                "id": d.get("id"),
                "label": d.get("label"),
                "saving_bytes_estimated": d.get("saving_bytes"),
                "fits_after": d.get("fits_after"),
            }
            for d in diagnosis
        ],
        "notes": list(engine_row.get("notes") or []),
        "tool": report.get("tool") or _native.TOOL,
        "seconds": seconds,
    }


def failed_row(hf: HostFile, error: str, kind: str, seconds: float = 0.0) -> Dict[str, Any]:
    """The row of a host file that could not be analyzed: its one-line error and kind,
    as the engine's ``failed`` row of a folder (docs/hosts.md)."""
    row = {name: None for name, _ in HOST_COLUMNS}
    row.update(
        run=hf.run,
        host=hf.host,
        file=hf.file,
        path=hf.path,
        file_bytes=hf.size,
        status="failed",
        error=_one_line(error),
        error_kind=kind,
        error_log=hf.error_log,
        oom_evidence=[],
        ran_out=False,
        ran_out_first=False,
        diagnosis=[],
        notes=[],
        tool=_native.TOOL,
        seconds=seconds,
    )
    return row


def _one_line(text: str, limit: int = 4000) -> str:
    text = re.sub(r"[\x00-\x1f\x7f]+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- analysis, on a worker -------------------------------------------------------


def _open(url: str, storage_options: Optional[Dict[str, Any]]):
    import fsspec

    return fsspec.open(url, "rb", **(storage_options or {})).open()


def _read_log(url: str, storage_options: Optional[Dict[str, Any]]) -> bytes:
    with _open(url, storage_options) as f:
        size = getattr(f, "size", None)
        if size is not None and size > MAX_REMOTE_LOG_BYTES:
            f.seek(size - MAX_REMOTE_LOG_BYTES)
        return f.read(MAX_REMOTE_LOG_BYTES)


def _spooled(hf: HostFile, storage_options, module):
    """A URL's host file copied to a local temporary folder in 8 MiB pieces (read once
    from the store, never held whole), then read by the engine's path reader."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="oomlens-fleet-") as tmp:
        local = os.path.join(tmp, hf.file)
        with _open(hf.path, storage_options) as src, open(local, "wb") as dst:
            shutil.copyfileobj(src, dst, 8 << 20)
        log = None
        if hf.error_log:
            log = os.path.join(tmp, "log", posixpath.basename(hf.error_log))
            os.mkdir(os.path.dirname(log))
            with _open(hf.error_log, storage_options) as src, open(log, "wb") as dst:
                shutil.copyfileobj(src, dst, 8 << 20)
        return _native.analyze(local, module, None, None, log)


def analyze_source(hf: HostFile, storage_options: Optional[Dict[str, Any]] = None,
                   module: Optional[str] = None, spool: bool = False):
    """The engine's analysis of one host file (``oomlens._native.Analysis``), its
    run's error log joined. A local file goes through the engine's own path reader
    (memory-mapped windows, bounded memory); a URL is opened with fsspec and read by the
    engine a block at a time through the file object (``_native.analyze_reader``:
    at most three 4 MiB blocks held), never whole, or with ``spool`` copied to a local
    temporary file first (the engine reads a capture in several passes: streamed,
    each pass reads the store again; spooled, the store is read once)."""
    if is_local(hf.path):
        log = local_path(hf.error_log) if hf.error_log else None
        return _native.analyze(local_path(hf.path), module, None, None, log)
    if spool:
        return _spooled(hf, storage_options, module)
    evidence = []
    if hf.error_log:
        name = posixpath.basename(hf.error_log)
        evidence.append((name, _read_log(hf.error_log, storage_options)))
    with _open(hf.path, storage_options) as f:
        size = getattr(f, "size", None)
        size = hf.size if size is None else size
        return _native.analyze_reader(f, int(size), hf.file, module, evidence or None)


def analyze_host(hf: HostFile, storage_options: Optional[Dict[str, Any]] = None,
                 module: Optional[str] = None, spool: bool = False) -> Dict[str, Any]:
    """One host file's row. Never raises for a file: one that cannot be read, opened or
    analyzed is a ``failed`` row with its error (``error_kind`` the engine's kind, or
    ``open`` for a file the store would not open, ``panic``/``internal`` otherwise)."""
    t0 = time.perf_counter()
    try:
        analysis = analyze_source(hf, storage_options, module, spool)
        report = json.loads(analysis.json())
        engine_rows = json.loads(analysis.host_rows())
        starts = analysis.profile_starts()
        seconds = time.perf_counter() - t0
        return row_from_report(hf, report, engine_rows[0], starts[0], seconds)
    except OomlensError as e:
        return failed_row(hf, e.message, e.kind, time.perf_counter() - t0)
    except OSError as e:
        return failed_row(hf, f"cannot open {hf.path}: {e}", "open", time.perf_counter() - t0)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a pyo3 PanicException is a BaseException
        kind = "panic" if type(e).__name__ == "PanicException" else "internal"
        return failed_row(hf, f"{type(e).__name__}: {e}", kind, time.perf_counter() - t0)


def analyze_batch(files: List[Dict[str, Any]], storage_options: Optional[Dict[str, Any]] = None,
                  module: Optional[str] = None, spool: bool = False) -> List[Dict[str, Any]]:
    """The rows of several host files (one Dask task)."""
    return [analyze_host(HostFile(**f), storage_options, module, spool) for f in files]


def host_file_args(hf: HostFile) -> Dict[str, Any]:
    return asdict(hf)


# --- runs ------------------------------------------------------------------------


def mark_first(rows: List[Dict[str, Any]]) -> None:
    """Marks the host of a run that ran out first, by the engine's rule (docs/hosts.md,
    ``hosts::compare``): the earliest ``ran_out_at_ns``, on the epoch clock
    (``profile_start_ns`` added) when every such host has a profile start, else on the
    hosts' own clocks; ties to the first host in order. ``rows``: one run's, in host
    order."""
    for r in rows:
        r["ran_out_first"] = False
    cands = [(i, r["ran_out_at_ns_measured"]) for i, r in enumerate(rows)
             if r.get("ran_out_at_ns_measured") is not None]
    if not cands:
        return
    on_epoch = all(rows[i].get("profile_start_ns") is not None for i, _ in cands)

    def at(c):
        i, t = c
        base = float(rows[i]["profile_start_ns"]) if on_epoch else 0.0
        return (base + t, i)

    rows[min(cands, key=at)[0]]["ran_out_first"] = True


def order_and_mark(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rows in run order, hosts in the engine's order within a run (by name), each
    run's first host to run out marked."""
    rows = sorted(rows, key=lambda r: (r["run"], r["host"], r["path"]))
    for _, group in _groups(rows):
        mark_first(group)
    return rows


def _groups(rows: List[Dict[str, Any]]):
    group: List[Dict[str, Any]] = []
    for r in rows:
        if group and r["run"] != group[0]["run"]:
            yield group[0]["run"], group
            group = []
        group.append(r)
    if group:
        yield group[0]["run"], group


#: The columns of the per-run summary, in order, with their Parquet types.
RUN_COLUMNS: List[Tuple[str, str]] = [
    ("run", "string"),
    ("hosts", "int64"),
    ("hosts_read", "int64"),
    ("hosts_partial", "int64"),
    ("hosts_failed", "int64"),
    ("ran_out", "bool"),
    ("hosts_ran_out", "int64"),
    ("first_host", "string"),
    ("module", "string"),
    ("verdict", "string"),
    ("evidence", "list<string>"),
    ("headline", "string"),
    ("top_cause", "string"),
    ("top_cause_title", "string"),
    ("top_cause_label", "string"),
    ("top_cause_host", "string"),
    ("largest_saving_bytes_estimated", "int64"),
    ("largest_saving_fix", "string"),
    ("largest_saving_host", "string"),
    ("plan_peak_bytes_read", "int64"),
    ("runtime_peak_bytes_measured", "int64"),
    ("capacity_bytes_measured", "int64"),
    ("file_bytes", "int64"),
    ("error_log", "string"),
]

_EVIDENCE_ORDER = ["allocator_retry", "peak_at_capacity", "plan_exceeds_capacity",
                   "growth_held", "pasted_error"]


def summarize_run(run: str, rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One run in one row: did it run out, where (the host that ran out first, else the
    first with evidence, and its module), the top cause (that host's first diagnosis
    line), and the largest estimated saving of any diagnosis line of any of its hosts.
    The verdict, headline, cause and figures are those of the run's lead host: the one
    that ran out (as above), else the one with the largest plan peak."""
    read = [r for r in rows if r["status"] != "failed"]
    ran = [r for r in rows if r["ran_out"]]
    first = next((r for r in rows if r["ran_out_first"]), None) or (ran[0] if ran else None)
    lead = first
    if lead is None and read:
        lead = max(read, key=lambda r: (r["plan_peak_bytes_read"] or -1, -read.index(r)))
    best = None
    for r in read:
        for d in r["diagnosis"]:
            s = d.get("saving_bytes_estimated")
            if s is not None and (best is None or s > best[0]):
                best = (s, d.get("id"), r["host"])
    evidence = {e for r in rows for e in r["oom_evidence"]}

    return {
        "run": run,
        "hosts": len(rows),
        "hosts_read": len(read),
        "hosts_partial": sum(r["status"] == "partial" for r in rows),
        "hosts_failed": len(rows) - len(read),
        "ran_out": bool(ran),
        "hosts_ran_out": len(ran),
        "first_host": first["host"] if first else None,
        "module": lead["module"] if lead else None,
        "verdict": lead["verdict"] if lead else None,
        "evidence": [e for e in _EVIDENCE_ORDER if e in evidence]
        + sorted(evidence - set(_EVIDENCE_ORDER)),
        "headline": lead["headline"] if lead else None,
        "top_cause": lead["top_diagnosis"] if lead else None,
        "top_cause_title": lead["top_title"] if lead else None,
        "top_cause_label": lead["top_label"] if lead else None,
        "top_cause_host": lead["host"] if lead else None,
        "largest_saving_bytes_estimated": best[0] if best else None,
        "largest_saving_fix": best[1] if best else None,
        "largest_saving_host": best[2] if best else None,
        "plan_peak_bytes_read": lead["plan_peak_bytes_read"] if lead else None,
        "runtime_peak_bytes_measured": lead["runtime_peak_bytes_measured"] if lead else None,
        "capacity_bytes_measured": lead["capacity_bytes_measured"] if lead else None,
        "file_bytes": sum(r["file_bytes"] or 0 for r in rows),
        "error_log": next((r["error_log"] for r in rows if r["error_log"]), None),
    }


def summarize_runs(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The per-run summary of rows in run order (:func:`order_and_mark`)."""
    return [summarize_run(run, group) for run, group in _groups(rows)]
