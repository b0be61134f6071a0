"""The fleet view: the per-run summary as a Markdown table and as one self-contained HTML
page (inline CSS, no script). Every string in them may come from a capture or a file
name (untrusted): HTML escapes it, Markdown escapes what would be markup, both drop
control characters and cut long strings."""

from __future__ import annotations

import html
import re
from typing import Any, Dict, List, Optional, Tuple

from .._native import TOOL

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")
# Inline markup a table cell could hold (block markup does not start inside a cell).
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
#: How many failed host files the view lists.
FAILED_LISTED = 50


def _clean(text: Any, limit: int = 160, strip: bool = True) -> str:
    s = _CONTROL.sub(" ", "" if text is None else str(text))
    s = s.strip() if strip else s
    return s if len(s) <= limit else s[: limit - 1] + "…"


def md(text: Any, limit: int = 160, strip: bool = True) -> str:
    """A table cell's text for Markdown: no markup, no HTML, one line."""
    s = _clean(text, limit, strip)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # No autolinks from untrusted names (GFM links `https://…` and `www.…`).
    s = s.replace("://", ":\\/\\/")
    return re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "\\.", s)


def esc(text: Any, limit: int = 160, strip: bool = True) -> str:
    """Text for HTML (element content or a quoted attribute)."""
    return html.escape(_clean(text, limit, strip), quote=True)


def size(n: Optional[int]) -> str:
    """``3.72 GiB``: bytes, 1024-based, as the reports write them."""
    if n is None:
        return "–"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(v) < 1024 or unit == "PiB":
            return f"{int(v)} B" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024
    return f"{n} B"


Cell = List[Tuple[str, bool]]  # (text, is an identifier shown as code)


def _cells(r: Dict[str, Any], short: str) -> List[Cell]:
    """One run's cells, each a list of (text, code) segments."""
    hosts = f"{r['hosts']}"
    if r["hosts_failed"]:
        hosts += f" ({r['hosts_failed']} not read)"
    ran = f"yes, {r['hosts_ran_out']} of {r['hosts']}" if r["ran_out"] else "no"
    where: Cell = []
    if r["first_host"]:
        where = [(r["first_host"], False), (" · ", False), (r["module"] or "no module", False)]
    cause: Cell = []
    if r["top_cause"]:
        cause = [(r["top_cause"], True), (f": {r['top_cause_title'] or ''}", False)]
    saving: Cell = []
    if r["largest_saving_bytes_estimated"] is not None:
        saving = [(f"{size(r['largest_saving_bytes_estimated'])}: ", False),
                  (r["largest_saving_fix"] or "", True),
                  (f" ({r['largest_saving_host']})", False)]
    peaks = (f"{size(r['plan_peak_bytes_read'])} / {size(r['runtime_peak_bytes_measured'])}"
             f" / {size(r['capacity_bytes_measured'])}")
    return [
        [(short, False)],
        [(hosts, False)],
        [(ran, False)],
        [(e, True) for e in r["evidence"]],
        where,
        [(r["verdict"], True)] if r["verdict"] else [],
        cause,
        saving,
        [(peaks, False)],
    ]


def _md_code(text: str) -> str:
    # Identifiers the engine writes (`ran_out`, `dominant_buffer`) as code; anything
    # else as escaped text.
    return f"`{text}`" if re.fullmatch(r"[A-Za-z0-9_.()-]{1,80}", text) else md(text)


def _md_cell(cell: Cell) -> str:
    codes = [_md_code(t) if code else md(t, strip=False) for t, code in cell]
    if cell and all(code for _, code in cell):
        return ", ".join(codes)
    return "".join(codes)


def _html_cell(cell: Cell) -> str:
    parts = [f"<code>{esc(t)}</code>" if code else esc(t, strip=False) for t, code in cell]
    if cell and all(code for _, code in cell):
        return ", ".join(parts)
    return "".join(parts)


HEADERS = [
    "run",
    "hosts",
    "ran out",
    "evidence",
    "where (first host · module)",
    "verdict",
    "top cause",
    "largest saving (estimated: fix, host)",
    "plan peak (read) / runtime peak (measured) / capacity (measured)",
]


def _title(runs: List[Dict[str, Any]]) -> Tuple[str, str]:
    hosts = sum(r["hosts"] for r in runs)
    failed = sum(r["hosts_failed"] for r in runs)
    ran = sum(r["ran_out"] for r in runs)
    title = f"{len(runs)} runs, {hosts} host files"
    line = f"{ran} of {len(runs)} runs ran out of memory (or would)"
    if failed:
        line += f"; {failed} host files could not be read"
    return title, line


def ordered(runs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Runs that ran out first, then by name."""
    return sorted(runs, key=lambda r: (not r["ran_out"], r["run"]))


def _short(run: str, roots: List[str]) -> str:
    for root in sorted(roots, key=len, reverse=True):
        root = root.rstrip("/\\")
        if run == root:
            return root.replace("\\", "/").rsplit("/", 1)[-1] or run
        if run.startswith(root + "/") or run.startswith(root + "\\"):
            base = root.replace("\\", "/").rsplit("/", 1)[-1]
            return base + "/" + run[len(root) + 1 :].replace("\\", "/")
    return run


def markdown(runs: List[Dict[str, Any]], hosts: List[Dict[str, Any]],
             roots: List[str] = ()) -> str:
    """The per-run summary as Markdown: a title, one table row per run (those that ran
    out first), and the host files that could not be read."""
    title, line = _title(runs)
    out = [f"# oomlens fleet: {md(title)}", "", md(line, 400) + ".", ""]
    out.append("| " + " | ".join(md(h, 200) for h in HEADERS) + " |")
    out.append("|" + "---|" * len(HEADERS))
    for r in ordered(runs):
        cells = [_md_cell(c) for c in _cells(r, _short(r["run"], list(roots)))]
        out.append("| " + " | ".join(cells) + " |")
    failed = [h for h in hosts if h["status"] == "failed"]
    if failed:
        out += ["", f"## {len(failed)} host files could not be read", ""]
        out.append("| run | host | kind | error |")
        out.append("|---|---|---|---|")
        for h in failed[:FAILED_LISTED]:
            out.append(f"| {md(_short(h['run'], list(roots)))} | {md(h['host'])} | "
                       f"{_md_code(h['error_kind'] or '')} | {md(h['error'], 300)} |")
        if len(failed) > FAILED_LISTED:
            out.append(f"\n… and {len(failed) - FAILED_LISTED} more (the Parquet file has every row).")
    out += ["", f"Made by {md(TOOL)} (oomlens.fleet). Sizes are 1024-based; each figure "
            "is labelled read (from the compiled plan), measured (from runtime events) or "
            "estimated (derived by oomlens).", ""]
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d232a}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
p.sub{color:#555;margin:0 0 16px}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f5f7f9;font-weight:600;position:sticky;top:0}
tr.oom td:first-child{border-left:4px solid #c62828}
tr.ok td:first-child{border-left:4px solid #2e7d32}
td.yes{color:#c62828;font-weight:600}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f3f5;padding:1px 4px;border-radius:3px}
footer{color:#666;margin-top:16px;font-size:12px}
"""


def html_page(runs: List[Dict[str, Any]], hosts: List[Dict[str, Any]],
              roots: List[str] = ()) -> str:
    """The per-run summary as one HTML document: inline CSS, no script, every string
    escaped."""
    title, line = _title(runs)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>oomlens fleet: {esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>oomlens fleet: {esc(title)}</h1>",
        f'<p class="sub">{esc(line, 400)}.</p>',
        "<table><thead><tr>" + "".join(f"<th>{esc(h, 200)}</th>" for h in HEADERS)
        + "</tr></thead><tbody>",
    ]
    for r in ordered(runs):
        cls = "oom" if r["ran_out"] else "ok"
        tds = []
        for i, cell in enumerate(_cells(r, _short(r["run"], list(roots)))):
            if i == 0:
                tds.append(f'<td title="{esc(r["run"], 1000)}">{_html_cell(cell)}</td>')
            elif i == 2 and r["ran_out"]:
                tds.append(f'<td class="yes">{_html_cell(cell)}</td>')
            else:
                tds.append(f"<td>{_html_cell(cell)}</td>")
        out.append(f'<tr class="{cls}">' + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    failed = [h for h in hosts if h["status"] == "failed"]
    if failed:
        out.append(f"<h2>{len(failed)} host files could not be read</h2>")
        out.append("<table><thead><tr><th>run</th><th>host</th><th>kind</th><th>error</th>"
                   "</tr></thead><tbody>")
        for h in failed[:FAILED_LISTED]:
            out.append(f"<tr><td>{esc(_short(h['run'], list(roots)))}</td><td>{esc(h['host'])}</td>"
                       f"<td><code>{esc(h['error_kind'])}</code></td><td>{esc(h['error'], 300)}</td></tr>")
        out.append("</tbody></table>")
        if len(failed) > FAILED_LISTED:
            out.append(f"<p>… and {len(failed) - FAILED_LISTED} more (the Parquet file has every row).</p>")
    out.append(f"<footer>Made by {esc(TOOL)} (oomlens.fleet). Sizes are 1024-based; each "
               "figure is labelled read (from the compiled plan), measured (from runtime "
               "events) or estimated (derived by oomlens).</footer>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
