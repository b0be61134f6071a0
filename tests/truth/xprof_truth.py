#!/usr/bin/env python3
"""Records XProf's own figures for a capture, as ground truth for oomlens's tests.

    python3 tests/truth/xprof_truth.py CAPTURE.xplane.pb > truth.json

For every module: XProf Memory Viewer's peak (`peakHeapMib`, what the page headline
shows), its total buffer allocation (`totalBufferAllocationMib`, what
`xprof get_peak_allocations` reports as total_hbm_mib), the padded-free peak and the
indefinite memory. For the runtime: what `xprof get_memory_profile` prints.

XProf writes cache files next to the capture, so the capture is copied into a temporary
folder first; nothing is written beside the original. Needs `pip install xprof`.
"""
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = "run"


def memory_viewer(session: str) -> dict:
    # Imported late: only this script needs xprof.
    from xprof.cli.internal.oss import hlo_tools, xprof_client

    client = xprof_client.get_client()
    client.set_logdir(session)
    # XProf serves per-module data from `<module>.hlo_proto.pb` files it extracts
    # beside the capture (in our temporary copy).
    files = hlo_tools.get_hlo_proto_files(RUN)

    def fetch(**kw):
        result = client.fetch(tool_name="memory_viewer.json", session_id=RUN, format="json", **kw)
        data = result[1] if isinstance(result, tuple) and len(result) == 2 else result
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")

    modules = [f.name.removesuffix(".hlo_proto.pb") for f in files]
    out = {}
    for module in modules:
        try:
            d = json.loads(fetch(module_name=module))
        except (json.JSONDecodeError, TypeError):
            continue
        out[module] = {
            k: d.get(k)
            for k in (
                "peakHeapMib",
                "peakUnpaddedHeapMib",
                "totalBufferAllocationMib",
                "indefiniteBufferAllocationMib",
                "entryComputationParametersMib",
                "maybeLiveOutMib",
                "peakHeapSizePosition",
            )
        }
    return out


def main() -> None:
    capture = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "plugins" / "profile" / RUN
        run.mkdir(parents=True)
        shutil.copy(capture, run / "host.xplane.pb")
        truth = {"capture": capture.name, "memory_viewer": {}, "memory_profile": None}
        # The CLI converts the capture's HloProtos to files first; the per-module
        # Memory Viewer data is then served from them.
        peak = subprocess.run(
            ["xprof", "get_peak_allocations", tmp, "--output_format=json", "--limit=0"],
            capture_output=True, text=True, timeout=600,
        )
        try:
            truth["peak_allocations"] = {
                m["module_name"]: m["total_hbm_mib"] for m in json.loads(peak.stdout).get("modules", [])
            }
        except (json.JSONDecodeError, AttributeError):
            truth["peak_allocations"] = peak.stdout[-2000:]
        try:
            truth["memory_viewer"] = memory_viewer(tmp)
        except Exception as e:  # noqa: BLE001 - record why, keep the runtime part
            truth["memory_viewer_error"] = repr(e)
        p = subprocess.run(["xprof", "get_memory_profile", tmp], capture_output=True, text=True, timeout=600)
        try:
            truth["memory_profile"] = json.loads(p.stdout)
        except json.JSONDecodeError:
            truth["memory_profile"] = p.stdout[-4000:]
    json.dump(truth, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
