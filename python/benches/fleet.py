"""Throughput and memory of oomlens.fleet against the single-process CLI, on the same host
files: the real captures (tests/fixtures/**, ../shared/captures/**) linked into a tmp
dir as runs of HOSTS hosts (`<job>/plugins/profile/<run>/<host>.xplane.pb`).

    scripts/bench-fleet.sh [--files 1000] [--hosts 8] [--workers 1,2] [--repeat 3] [--big 300]

Prints one Markdown table: host files/s and MB/s (best of --repeat), and peak RSS:
of the largest CLI process, and of each Dask worker process (its `ru_maxrss`, read
on the worker after the run) beside an idle worker's. Modes:

- `cli per file`: `oomlens FILE --format json` once per host file (a process each);
- `cli per run, --jobs 1`: `oomlens RUN --format json --jobs 1` once per run folder
  (one process, one thread, the cross-host summary included);
- `cli per run`: the same with the CLI's default threads (the cores);
- `fleet, N workers`: `oomlens.fleet.run` on a LocalCluster of N one-thread worker
  processes, the cluster started beforehand (its start is given apart), local paths
  (the engine's path reader);
- `fleet, N workers, local://`: the same files as fsspec URLs (`local://`), read by the
  engine through the file object (`_native.analyze_reader`) block by block.

Then (`--big MB`, default 300) one large host file, a real capture repeated, analyzed
once per mode in a fresh process: the CLI, what a worker runs on a local path and on a
URL, and the whole file's bytes handed in, for contrast; each with its peak RSS.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def captures():
    found = sorted((ROOT / "tests" / "fixtures").rglob("*.xplane.pb"))
    shared = ROOT.parent / "shared" / "captures"
    if shared.is_dir():
        found += sorted(shared.glob("*.xplane.pb"))
    return found


def make_tree(root: Path, files: int, hosts: int):
    caps = captures()
    runs, paths = [], []
    i = 0
    while len(paths) < files:
        d = root / f"job{i:04}" / "plugins" / "profile" / "2025_01_01_00_00_00"
        d.mkdir(parents=True)
        runs.append(d)
        for k in range(min(hosts, files - len(paths))):
            p = d / f"host{k}.xplane.pb"
            p.symlink_to(caps[len(paths) % len(caps)])
            paths.append(p)
        i += 1
    total = sum(p.stat().st_size for p in paths)
    return runs, paths, total


class Children:
    """Runs child processes, keeping the largest peak RSS of any (`wait4`)."""

    def __init__(self):
        self.peak_mib = 0.0

    def run(self, cmd):
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"{cmd} failed ({child.returncode})")
        self.peak_mib = max(self.peak_mib, usage.ru_maxrss / 1024)


def worker_maxrss_mib() -> float:
    import resource as r

    return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--files", type=int, default=1000)
    a.add_argument("--hosts", type=int, default=8)
    a.add_argument("--workers", default="1,2")
    a.add_argument("--repeat", type=int, default=3)
    a.add_argument("--bin", default=str(ROOT / "target" / "release" / "oomlens"))
    a.add_argument("--big", type=float, default=300,
                   help="also one host file of about this many MB, per mode (0: none)")
    args = a.parse_args()

    from dask.distributed import Client, LocalCluster

    from oomlens import fleet

    tmp = Path(tempfile.mkdtemp(prefix="oomlens-fleet-bench-"))
    runs, paths, total = make_tree(tmp / "runs", args.files, args.hosts)
    n, mb = len(paths), total / 1e6
    rows = []

    def row(mode, seconds, rss, note=""):
        rows.append((mode, seconds, n / seconds, mb / seconds, rss, note))

    # Warm the page cache and the binary.
    Children().run([args.bin, str(runs[0]), "--format", "json"])

    def cli_per_file(c):
        def go():
            for p in paths:
                c.run([args.bin, str(p), "--format", "json"])
        return go

    def cli_per_run(c, jobs):
        def go():
            for d in runs:
                c.run([args.bin, str(d), "--format", "json"]
                      + (["--jobs", str(jobs)] if jobs else []))
        return go

    c = Children()
    row("cli per file (a process per host file)", best(cli_per_file(c), args.repeat), c.peak_mib)
    c = Children()
    row("cli per run folder, --jobs 1", best(cli_per_run(c, 1), args.repeat), c.peak_mib)
    c = Children()
    row(f"cli per run folder, --jobs {os.cpu_count()} (default)",
        best(cli_per_run(c, None), args.repeat), c.peak_mib)

    for w in [int(x) for x in args.workers.split(",")]:
        t0 = time.perf_counter()
        cluster = LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
        start = time.perf_counter() - t0
        idle = max(client.run(worker_maxrss_mib).values())
        for label, roots in (("", [tmp / "runs"]), (", local:// (fsspec reader)",
                                                     [f"local://{tmp / 'runs'}"])):
            result = {}

            def go():
                result["r"] = fleet.run(roots, client=client)

            seconds = best(go, args.repeat)
            assert len(result["r"].hosts) == n
            failed = sum(h["status"] == "failed" for h in result["r"].hosts)
            assert failed == 0, failed
            rss = client.run(worker_maxrss_mib)
            row(f"fleet, {w} worker{'s' if w > 1 else ''}{label}", seconds, max(rss.values()),
                f"idle worker {idle:.0f} MiB; cluster start {start:.1f} s")
        client.close()
        cluster.close()

    print(f"{n} host files ({mb:.1f} MB) in {len(runs)} runs of {args.hosts}, from "
          f"{len(captures())} real captures; {os.cpu_count()} cores; best of {args.repeat}\n")
    print("| mode | s | host files/s | MB/s | peak RSS (MiB) | note |")
    print("|---|---:|---:|---:|---:|---|")
    for mode, s, fps, mbs, rss, note in rows:
        print(f"| {mode} | {s:.2f} | {fps:.0f} | {mbs:.1f} | {rss:.0f} | {note} |")
    if args.big:
        big_file(tmp, args)
    subprocess.run(["rm", "-rf", str(tmp)])


BIG_MODES = {
    "cli (the engine's path reader)": None,
    "oomlens._native.analyze(path): what a fleet worker runs on a local path":
        "from oomlens import _native as n; n.analyze(P).json()",
    "analyze_reader on an fsspec file (local://): what a worker runs on a URL":
        "import fsspec; from oomlens import _native as n\n"
        "with fsspec.open('local://' + P, 'rb').open() as f: n.analyze_reader(f, f.size, 'big.xplane.pb').json()",
    "the same URL with --spool: copied to a temporary file, then the path reader":
        "from oomlens.fleet._rows import HostFile, analyze_source\n"
        "analyze_source(HostFile('', '', 'local://' + P, 0), spool=True).json()",
    "oomlens.analyze(bytes): the whole file in memory, for contrast":
        "import oomlens; oomlens.analyze(open(P, 'rb').read())",
    "python, importing oomlens and fsspec only (the baseline)":
        "import oomlens, fsspec",
}


def big_file(tmp: Path, args):
    """One large host file (a real capture repeated: protobuf messages concatenate into
    one XSpace), analyzed once per mode in a fresh process: its peak RSS."""
    shared = ROOT.parent / "shared" / "captures" / "xprof_tf_gpu_multi_worker_2020.xplane.pb"
    src = shared if shared.is_file() else max(captures(), key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    big = tmp / "big" / "big.xplane.pb"
    big.parent.mkdir()
    with open(big, "wb") as f:
        for _ in range(max(1, int(args.big * 1e6 / len(data)))):
            f.write(data)
    size = big.stat().st_size
    print(f"\nOne host file of {size / 1e6:.0f} MB ({src.name} repeated), one run each:\n")
    print("| mode | s | MB/s | peak RSS (MiB) |")
    print("|---|---:|---:|---:|")
    for mode, code in BIG_MODES.items():
        cmd = ([args.bin, str(big), "--format", "json"] if code is None else
               [sys.executable, "-c", f"P = {str(big)!r}\n{code}"])
        c = Children()
        t0 = time.perf_counter()
        c.run(cmd)
        s = time.perf_counter() - t0
        print(f"| {mode} | {s:.2f} | {size / 1e6 / s:.0f} | {c.peak_mib:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
