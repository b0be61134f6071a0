"""oomlens.fleet: which of many runs ran out of memory, where, why, and what each fix
would save: the engine mapped over every host file of every run with Dask.

::

    from oomlens import fleet

    result = fleet.run(["gs://bucket/jobs", "/data/runs"], workers=8)   # a LocalCluster
    result = fleet.run(["gs://bucket/jobs"], scheduler="tcp://sched:8786")
    result.write("fleet.parquet")      # + fleet.runs.parquet, fleet.md, fleet.html
    result.hosts                       # one dict per host file (HOST_COLUMNS)
    result.runs                        # one dict per run (RUN_COLUMNS)

    python -m oomlens.fleet ROOT... --out fleet.parquet [--scheduler ADDR] [--workers N]

Each root is a host file, a run folder, a log dir, or any folder above them, local or
an fsspec URL (``gs://``, ``s3://``, ``memory://`` …). A run is the folder holding host
files (``<logdir>/plugins/profile/<run>/``); a file beside them named like an error log
(``error.txt``, ``oom.log``, ``stderr``; else one in ``<logdir>``) is joined to each of
its hosts' reports, as ``oomlens FOLDER`` joins it. A local host file is read by the
engine's own path reader (memory-mapped windows); a URL is opened with fsspec and read
by the engine through the file object a block at a time, never whole. A host file that
cannot be read is a row with its error; a worker that dies costs only its files' rows.
See ``docs/fleet.md``. Needs the ``fleet`` extra (``pip install 'oomlens[fleet]'``):
dask, distributed, pyarrow, fsspec.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from .._native import TOOL
from ._discover import discover
from ._rows import (
    FLEET_SCHEMA,
    HOST_COLUMNS,
    RUN_COLUMNS,
    HostFile,
    analyze_batch,
    analyze_host,
    failed_row,
    host_file_args,
    order_and_mark,
    summarize_runs,
)
from ._views import html_page, markdown

__all__ = [
    "FLEET_SCHEMA",
    "HOST_COLUMNS",
    "RUN_COLUMNS",
    "Fleet",
    "HostFile",
    "analyze_host",
    "discover",
    "main",
    "run",
    "run_files",
]

_MISSING = ("oomlens.fleet needs dask, distributed, pyarrow and fsspec: "
            "pip install 'oomlens[fleet]'")


def _arrow_type(pa, kind: str):
    if kind == "list<string>":
        return pa.list_(pa.string())
    if kind == "list<diagnosis>":
        return pa.list_(pa.struct([
            ("id", pa.string()),
            ("label", pa.string()),
            ("saving_bytes_estimated", pa.int64()),
            ("fits_after", pa.bool_()),
        ]))
    return {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_(),
            "double": pa.float64()}[kind]


def _table(rows: List[Dict[str, Any]], columns, what: str):
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise ImportError(_MISSING) from e
    schema = pa.schema([(n, _arrow_type(pa, k)) for n, k in columns],
                       metadata={"oomlens.schema": FLEET_SCHEMA, "oomlens.table": what,
                                 "oomlens.tool": TOOL})
    return pa.Table.from_pylist([{n: r.get(n) for n, _ in columns} for r in rows],
                                schema=schema)


def _derived(out: str, suffix: str) -> str:
    base = out[: -len(".parquet")] if out.endswith(".parquet") else out
    return base + suffix


def _open_out(path: str, storage_options: Optional[Dict[str, Any]]):
    if "://" in path and not path.startswith("file://"):
        import fsspec

        return fsspec.open(path, "wb", **(storage_options or {})).open()
    path = path[len("file://"):] if path.startswith("file://") else path
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return open(path, "wb")


class Fleet:
    """The result of :func:`run`: ``hosts`` (one dict per host file, run by run, hosts
    by name) and ``runs`` (one dict per run), their Arrow tables, the Markdown and HTML
    views, and :meth:`write`."""

    def __init__(self, hosts: List[Dict[str, Any]], roots: Sequence[str] = (),
                 seconds: Optional[float] = None, workers: Optional[int] = None) -> None:
        self.hosts = order_and_mark(hosts)
        self.runs = summarize_runs(self.hosts)
        self.roots = [os.fspath(r) for r in roots]
        #: Wall time of the run (discovery, analysis, gathering), when timed.
        self.seconds = seconds
        self.workers = workers

    def hosts_table(self):
        """The per-host rows as a ``pyarrow.Table`` (:data:`HOST_COLUMNS`)."""
        return _table(self.hosts, HOST_COLUMNS, "hosts")

    def runs_table(self):
        """The per-run summary as a ``pyarrow.Table`` (:data:`RUN_COLUMNS`)."""
        return _table(self.runs, RUN_COLUMNS, "runs")

    def markdown(self) -> str:
        """The per-run summary as a Markdown table (strings escaped)."""
        return markdown(self.runs, self.hosts, self.roots)

    def html(self) -> str:
        """The per-run summary as one HTML page (inline CSS, no script, escaped)."""
        return html_page(self.runs, self.hosts, self.roots)

    def _repr_html_(self) -> str:
        return self.html()

    def write(self, out: str, storage_options: Optional[Dict[str, Any]] = None) -> List[str]:
        """Writes the per-host rows to ``out`` (Parquet), and beside it the per-run
        summary (``<out>.runs.parquet``, ``.parquet`` dropped first), the Markdown view
        (``.md``) and the HTML view (``.html``). ``out`` may be an fsspec URL. Returns
        the paths written."""
        import pyarrow.parquet as pq

        out = os.fspath(out)
        written = []
        for path, table in ((out, self.hosts_table()),
                            (_derived(out, ".runs.parquet"), self.runs_table())):
            with _open_out(path, storage_options) as f:
                pq.write_table(table, f)
            written.append(path)
        for path, text in ((_derived(out, ".md"), self.markdown()),
                           (_derived(out, ".html"), self.html())):
            with _open_out(path, storage_options) as f:
                f.write(text.encode("utf-8"))
            written.append(path)
        return written

    def summary_line(self) -> str:
        failed = sum(h["status"] == "failed" for h in self.hosts)
        ran = sum(r["ran_out"] for r in self.runs)
        mb = sum(h["file_bytes"] or 0 for h in self.hosts) / 1e6
        line = (f"{len(self.hosts)} host files ({mb:.1f} MB) in {len(self.runs)} runs: "
                f"{len(self.hosts) - failed} read, {failed} not read; "
                f"{ran} runs ran out of memory (or would)")
        if self.seconds:
            line += (f"; {self.seconds:.1f} s, {len(self.hosts) / self.seconds:.1f} host "
                     f"files/s, {mb / self.seconds:.1f} MB/s")
        return line


def _client(scheduler: Optional[str], workers: Optional[int], threads_per_worker: int,
            memory_limit: Any):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:
        raise ImportError(_MISSING) from e
    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=threads_per_worker,
        processes=True,
        memory_limit=memory_limit,
        dashboard_address=":0",
    )
    return Client(cluster), cluster


def _batches(files: List[HostFile], size: int) -> List[List[Dict[str, Any]]]:
    args = [host_file_args(f) for f in files]
    return [args[i:i + size] for i in range(0, len(args), size)]


def run_files(files: List[HostFile], client, *, storage_options=None, module=None,
              spool: bool = False, batch_size: Optional[int] = None,
              progress: Optional[Callable[[int, int], None]] = None) -> List[Dict[str, Any]]:
    """The rows of ``files``, analyzed on ``client``'s workers in batches. A batch whose
    worker died is retried a host file at a time; a host file whose task still fails is
    a ``failed`` row (``error_kind`` ``worker_died``), so the job always ends with
    a row per file."""
    from dask.distributed import as_completed

    if not files:
        return []
    nworkers = max(1, sum(client.nthreads().values()))
    size = batch_size or max(1, min(32, math.ceil(len(files) / (nworkers * 4))))
    batches = _batches(files, size)
    futures = client.map(analyze_batch, batches, storage_options=storage_options,
                         module=module, spool=spool, pure=False)
    batch_of = {f.key: b for f, b in zip(futures, batches)}
    rows: List[Dict[str, Any]] = []
    retry: List[Dict[str, Any]] = []
    done = 0
    for fut in as_completed(futures):
        try:
            got = fut.result()
        except Exception:  # the worker died (KilledWorker) or the task could not run
            retry.extend(batch_of[fut.key])
            continue
        finally:
            fut.release()
        rows.extend(got)
        done += len(got)
        if progress:
            progress(done, len(files))
    if retry:
        singles = client.map(analyze_batch, [[f] for f in retry],
                             storage_options=storage_options, module=module, spool=spool,
                             pure=False)
        for f, fut in zip(retry, singles):
            try:
                rows.extend(fut.result())
            except Exception as e:
                rows.append(failed_row(HostFile(**f), f"the worker analyzing it failed: "
                                       f"{type(e).__name__}: {e}", "worker_died"))
            done += 1
            if progress:
                progress(done, len(files))
    return rows


def run(roots: Iterable[str], *, scheduler: Optional[str] = None,
        workers: Optional[int] = None, client=None, threads_per_worker: int = 1,
        memory_limit: Any = "auto", storage_options: Optional[Dict[str, Any]] = None,
        module: Optional[str] = None, error_logs: bool = True, spool: bool = False,
        batch_size: Optional[int] = None,
        progress: Optional[Callable[[int, int], None]] = None) -> Fleet:
    """Analyzes every host file under ``roots`` on Dask and returns a :class:`Fleet`.

    ``client``: a ``dask.distributed.Client`` to use; else ``scheduler`` (an address such
    as ``tcp://host:8786``); else a ``LocalCluster`` of ``workers`` processes (default:
    the cores) of ``threads_per_worker`` threads each, closed at the end.
    ``storage_options``: for fsspec (credentials, project …). ``module``: report on this
    module in every host (by name or label). ``error_logs``: join each run's error log.
    ``spool``: copy each URL's host file to the worker's temporary folder first (the
    store read once) instead of streaming it to the engine (no local disk used).
    ``progress(done, total)`` is called as host files are done.
    """
    roots = [os.fspath(r) for r in roots]
    t0 = time.perf_counter()
    files = discover(roots, storage_options, error_logs)
    if not files:
        return Fleet([], roots, time.perf_counter() - t0, 0)
    own = None
    if client is None:
        client, own = _client(scheduler, workers, threads_per_worker, memory_limit)
        owned_client = client
    else:
        owned_client = None
    try:
        nworkers = len(client.scheduler_info().get("workers", {}))
        rows = run_files(files, client, storage_options=storage_options, module=module,
                         spool=spool, batch_size=batch_size, progress=progress)
    finally:
        if owned_client is not None:
            owned_client.close()
        if own is not None:
            own.close()
    return Fleet(rows, roots, time.perf_counter() - t0, nworkers)


def _storage_option(text: str):
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--storage-option takes KEY=VALUE, not {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m oomlens.fleet ROOT... --out fleet.parquet [--scheduler ADDR]
    [--workers N]``: writes the per-host rows, the per-run summary and the views;
    prints one line to standard error. Exit status 0, or 2 when no host file was found
    (or a usage error)."""
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m oomlens.fleet",
        description="Which runs ran out of accelerator memory, where, why, and what each "
        "fix would save: every host file (*.xplane.pb) under each ROOT analyzed on Dask.")
    p.add_argument("roots", nargs="+", metavar="ROOT",
                   help="a host file, run folder, log dir or any folder above them: a local "
                   "path or an fsspec URL (gs://…, s3://…, memory://…)")
    p.add_argument("--out", required=True,
                   help="the per-host Parquet file; beside it OUT.runs.parquet (the per-run "
                   "summary), OUT.md and OUT.html (the fleet view); a path or an fsspec URL")
    p.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster)")
    p.add_argument("--workers", type=int, help="LocalCluster worker processes (default: the cores)")
    p.add_argument("--threads-per-worker", type=int, default=1)
    p.add_argument("--memory-limit", default="auto",
                   help="LocalCluster memory limit per worker (default: auto)")
    p.add_argument("--batch-size", type=int, help="host files per task (default: adaptive, <= 32)")
    p.add_argument("--module", help="report on this module in every host (a name or a label)")
    p.add_argument("--no-error-logs", action="store_true",
                   help="do not join each run's error log (error.txt, *.log …) to its hosts")
    p.add_argument("--spool", action="store_true",
                   help="copy each URL's host file to the worker's temporary folder before "
                   "analyzing it (the store read once) instead of streaming it")
    p.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an fsspec storage option (VALUE parsed as JSON when it is)")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    a = p.parse_args(argv)
    try:
        storage = dict(_storage_option(s) for s in a.storage_option)
    except ValueError as e:
        p.error(str(e))
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if not a.quiet and (done == total or now - last[0] > 2):
            last[0] = now
            print(f"oomlens.fleet: {done}/{total} host files", file=sys.stderr)

    result = run(a.roots, scheduler=a.scheduler, workers=a.workers,
                 threads_per_worker=a.threads_per_worker, memory_limit=a.memory_limit,
                 storage_options=storage or None, module=a.module,
                 error_logs=not a.no_error_logs, spool=a.spool, batch_size=a.batch_size,
                 progress=progress)
    if not result.hosts:
        print("oomlens.fleet: no host file (*.xplane.pb) under "
              + ", ".join(a.roots), file=sys.stderr)
        return 2
    written = result.write(a.out, storage or None)
    print(f"oomlens.fleet: {result.summary_line()}", file=sys.stderr)
    print("oomlens.fleet: wrote " + ", ".join(written), file=sys.stderr)
    return 0
