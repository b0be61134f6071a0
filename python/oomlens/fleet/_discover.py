"""Finding the host files of many runs: every ``*.xplane.pb`` under each root (a local
folder, or a URL fsspec lists: ``gs://…``, ``s3://…``, ``memory://…``), its run being
the folder that holds it (``<logdir>/plugins/profile/<run>/``), and the run's error log:
a file beside the host files named like one (``error.txt``, ``oom.log``, ``stderr``),
else one in the log dir above ``plugins/profile``."""

from __future__ import annotations

import os
import posixpath
from typing import Any, Dict, Iterable, List, Optional

from ._rows import CAPTURE_SUFFIX, HostFile, best_log, is_local, local_path


def _logdir(run: str, pathmod) -> Optional[str]:
    """``<logdir>`` when ``run`` is ``<logdir>/plugins/profile/<name>``."""
    parent = pathmod.dirname(run)
    if pathmod.basename(parent) == "profile" and pathmod.basename(pathmod.dirname(parent)) == "plugins":
        return pathmod.dirname(pathmod.dirname(parent))
    return None


def _discover_local(root: str, error_logs: bool) -> List[HostFile]:
    path = local_path(root)
    listing: Dict[str, List[str]] = {}
    if os.path.isfile(path):
        run = os.path.dirname(path) or "."
        try:
            listing[run] = sorted(os.listdir(run))
        except OSError:
            listing[run] = []
        hosts = {run: [os.path.basename(path)]}
    else:
        hosts = {}
        seen = set()
        for dirpath, dirnames, filenames in os.walk(path, followlinks=True):
            real = os.path.realpath(dirpath)
            if real in seen:  # a link back up the tree
                dirnames[:] = []
                continue
            seen.add(real)
            dirnames.sort()
            listing[dirpath] = sorted(filenames)
            found = [f for f in listing[dirpath] if f.endswith(CAPTURE_SUFFIX)]
            if found:
                hosts[dirpath] = found
    out = []
    for run, names in hosts.items():
        log = _find_log(run, listing, error_logs, os.path, _listdir_local)
        for name in names:
            p = os.path.join(run, name)
            try:
                size = os.stat(p).st_size
            except OSError:
                size = 0  # a dangling link: a failed row when analyzed
            out.append(HostFile(run=run, root=root, path=p, size=size, error_log=log))
    return out


def _listdir_local(d: str) -> List[str]:
    try:
        return [n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n))]
    except OSError:
        return []


def _find_log(run: str, listing: Dict[str, List[str]], error_logs: bool, pathmod,
              listdir) -> Optional[str]:
    if not error_logs:
        return None
    name = best_log(listing.get(run, []))
    if name:
        return pathmod.join(run, name)
    logdir = _logdir(run, pathmod)
    if logdir is None:
        return None
    names = listing[logdir] if logdir in listing else listdir(logdir)
    name = best_log(names)
    return pathmod.join(logdir, name) if name else None


def _discover_remote(root: str, storage_options: Optional[Dict[str, Any]],
                     error_logs: bool) -> List[HostFile]:
    import fsspec

    fs, path = fsspec.core.url_to_fs(root, **(storage_options or {}))
    path = path.rstrip("/") or path
    if fs.isfile(path):
        entries = {path: fs.info(path)}
        run = posixpath.dirname(path)
        try:
            siblings = fs.ls(run, detail=False)
        except OSError:
            siblings = []
        listing = {run: sorted(posixpath.basename(s.rstrip("/")) for s in siblings)}
    else:
        entries = fs.find(path, withdirs=False, detail=True)
        listing = {}
        for p in entries:
            listing.setdefault(posixpath.dirname(p), []).append(posixpath.basename(p))
        for names in listing.values():
            names.sort()

    def listdir(d: str) -> List[str]:
        try:
            return [posixpath.basename(i["name"].rstrip("/"))
                    for i in fs.ls(d, detail=True) if i.get("type") == "file"]
        except OSError:
            return []

    out = []
    for p in sorted(entries):
        if not p.endswith(CAPTURE_SUFFIX):
            continue
        run = posixpath.dirname(p)
        log = _find_log(run, listing, error_logs, posixpath, listdir)
        size = entries[p].get("size") or 0
        out.append(HostFile(
            run=fs.unstrip_protocol(run),
            root=root,
            path=fs.unstrip_protocol(p),
            size=int(size),
            error_log=fs.unstrip_protocol(log) if log else None,
        ))
    return out


def discover(roots: Iterable[str], storage_options: Optional[Dict[str, Any]] = None,
             error_logs: bool = True) -> List[HostFile]:
    """Every host file under ``roots`` (each a host file, a run folder, a log dir, or any
    folder above them; a local path or an fsspec URL), each once, by run then host.
    ``error_logs``: join each run's error log to its hosts' reports."""
    out: Dict[str, HostFile] = {}
    for root in roots:
        root = os.fspath(root)
        found = (_discover_local(root, error_logs) if is_local(root)
                 else _discover_remote(root, storage_options, error_logs))
        for hf in found:
            out.setdefault(hf.path, hf)
    return sorted(out.values(), key=lambda h: (h.run, h.host, h.path))
