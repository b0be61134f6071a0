"""The captures of a log directory: the runs under ``plugins/profile`` and their host files.

``jax.profiler.trace(LOGDIR)`` writes ``LOGDIR/plugins/profile/<run>/<host>.xplane.pb``;
TensorBoard users often point ``--logdir`` one level higher (``LOGDIR/<name>/plugins/
profile/<run>/…``), so folders below the log directory are searched too, a few levels
deep. A run is named by the folders above ``plugins/profile`` (if any) and its own
folder, joined by ``/``: ``2024_05_01_12_00_00`` or ``train/2024_05_01_12_00_00``.

:func:`resolve` is the one way from a request to a file: it takes the run and host named
in the URL, accepts only plain folder and file names (no ``..``, no separators), builds
the path ``LOGDIR/<above>/plugins/profile/<run>/<host>.xplane.pb`` from them, and serves
it only if it is a regular file whose real path (symbolic links resolved) lies inside
that ``plugins/profile`` folder. No other file can be reached.
"""

from __future__ import annotations

import os
import stat
from typing import Dict, Iterator, List, Optional, Tuple

SUFFIX = ".xplane.pb"
# How many folders may stand between the log directory and `plugins/profile`.
MAX_DEPTH = 4
# Folders visited when searching a log directory, at most (a log dir of event files
# can be large; the captures are near its top).
MAX_FOLDERS = 20000


class CaptureError(Exception):
    """A run or host that is not a capture of this log directory.

    ``str(e)`` is one line; ``status`` the HTTP status to answer with (400 for a
    malformed name, 404 for one that names no capture).
    """

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


def _plain(name: str) -> bool:
    """A single folder or file name: not empty, not `.` or `..`, no separator or NUL."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\0")


def _inside(path: str, folder: str) -> bool:
    """Whether the real path `path` lies strictly inside the real folder `folder`."""
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _profile_dirs(logdir: str) -> Iterator[Tuple[Tuple[str, ...], str]]:
    """Each `plugins/profile` folder under `logdir`: (the folders above it, its path)."""
    seen = 0
    stack: List[Tuple[Tuple[str, ...], str]] = [((), logdir)]
    while stack:
        above, folder = stack.pop()
        seen += 1
        if seen > MAX_FOLDERS:
            return
        profile = os.path.join(folder, "plugins", "profile")
        if os.path.isdir(profile):
            yield above, profile
        if len(above) >= MAX_DEPTH:
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "plugins" or not _plain(entry.name):
                continue
            try:
                # Folders only, and not through symbolic links (no cycles, no escape).
                if entry.is_dir(follow_symlinks=False):
                    stack.append((above + (entry.name,), entry.path))
            except OSError:
                continue


def _host_files(profile: str, run_dir: str) -> List[Dict[str, object]]:
    real_profile = os.path.realpath(profile)
    hosts = []
    try:
        entries = list(os.scandir(run_dir))
    except OSError:
        return hosts
    for entry in entries:
        if not entry.name.endswith(SUFFIX) or len(entry.name) == len(SUFFIX):
            continue
        try:
            real = os.path.realpath(entry.path)
            st = os.stat(real)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not _inside(real, real_profile):
            continue
        hosts.append({"host": entry.name[: -len(SUFFIX)], "file": entry.name, "bytes": st.st_size, "mtime": st.st_mtime})
    hosts.sort(key=lambda h: h["host"])
    return hosts


def list_runs(logdir: Optional[str]) -> List[Dict[str, object]]:
    """Every run with at least one host file, newest name first (the profiler names
    runs by their start time), each as ``{run, hosts: [{host, file, bytes, mtime}]}``."""
    if not logdir or not os.path.isdir(logdir):
        return []
    runs = []
    for above, profile in _profile_dirs(logdir):
        try:
            entries = list(os.scandir(profile))
        except OSError:
            continue
        for entry in entries:
            if not _plain(entry.name):
                continue
            try:
                if not entry.is_dir():
                    continue
            except OSError:
                continue
            hosts = _host_files(profile, entry.path)
            if hosts:
                runs.append({"run": "/".join(above + (entry.name,)), "hosts": hosts})
    # Newest first within each folder (run names are timestamps), folders in name order.
    runs.sort(key=lambda r: r["run"].rsplit("/", 1)[-1], reverse=True)
    runs.sort(key=lambda r: r["run"].rsplit("/", 1)[0] if "/" in r["run"] else "")
    return runs


def resolve(logdir: Optional[str], run: str, file: str) -> Tuple[str, int]:
    """The path and size of the host file `file` (``<host>.xplane.pb``) of `run`.

    Raises :class:`CaptureError` (one line) for anything else.
    """
    if not logdir or not os.path.isdir(logdir):
        raise CaptureError(f"oomlens: the log directory {logdir!r} is not a local folder", 404)
    parts = run.split("/") if run else []
    if not parts or not all(_plain(p) for p in parts) or len(parts) > MAX_DEPTH + 1:
        raise CaptureError(f"oomlens: {run!r} is not a run name (a run folder under plugins/profile, optionally below sub-folders of the log directory)", 400)
    if not _plain(file) or not file.endswith(SUFFIX) or len(file) == len(SUFFIX):
        raise CaptureError(f"oomlens: {file!r} is not a host file (only <host>{SUFFIX} files under plugins/profile/<run>/ are served)", 400)
    above, name = parts[:-1], parts[-1]
    profile = os.path.join(logdir, *above, "plugins", "profile")
    path = os.path.join(profile, name, file)
    if not os.path.isdir(os.path.join(profile, name)):
        known = [r["run"] for r in list_runs(logdir)]
        listed = ", ".join(known[:10]) + (" …" if len(known) > 10 else "") if known else "none"
        raise CaptureError(f"oomlens: no run {run!r} under {os.path.join(logdir, *above, 'plugins', 'profile')} (runs: {listed})", 404)
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        hosts = [h["host"] for h in _host_files(profile, os.path.join(profile, name))]
        listed = ", ".join(hosts[:10]) + (" …" if len(hosts) > 10 else "") if hosts else "none"
        raise CaptureError(f"oomlens: run {run!r} has no host file {file!r} (hosts: {listed})", 404)
    if not _inside(real, os.path.realpath(profile)):
        raise CaptureError(f"oomlens: {run}/{file} leads outside the log directory's plugins/profile folder: not served", 403)
    return real, st.st_size
