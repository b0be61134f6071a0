"""Analyzes every host file of a run folder in parallel and writes one JSON line per
host: what a fleet pipeline (Ray, Beam, Spark workers, or plain concurrent.futures)
runs per host file.

    python analyze_hosts.py RUN_FOLDER > reports.jsonl

The engine releases the GIL, so threads analyze hosts in parallel; a process pool
(or one task per host on a cluster) works the same way, as reports pickle as dicts.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import oomlens


def analyze_host(path):
    try:
        return oomlens.analyze(path)
    except oomlens.OomlensError as e:  # one bad host file does not stop the run
        return {"file": path.name, "error": {"kind": e.kind, "message": str(e)}}


def main(run_folder):
    hosts = sorted(Path(run_folder).glob("*.xplane.pb"))
    with ThreadPoolExecutor() as pool:
        for report in pool.map(analyze_host, hosts):
            print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main(sys.argv[1])
