"""The plugin's routes, as one plain WSGI application (no TensorBoard or werkzeug import).

Under TensorBoard every route sits below ``data/plugin/oomlens/``:

==========================  ==========================================================
``index.js``                the tab: an ES module TensorBoard loads in the plugin's
                            iframe (``render()``); it lists the runs and shows the
                            oomlens page below, in an iframe of its own
``runs``                    the runs under ``plugins/profile`` and their host files (JSON)
``page/<path>``             the oomlens page (the files of ``dist/``, in the wheel)
``capture/<run>/<file>``    one host file's bytes, streamed
==========================  ==========================================================

The page opens a capture with ``page/index.html?url=../capture/<run>/<host>.xplane.pb``:
the page, its worker, its WebAssembly engine and the capture all come from
TensorBoard's own origin, so the page's Content-Security-Policy (``connect-src
'self'``) holds and nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import re
from typing import Callable, Dict, Iterable, List, Optional, Tuple
from urllib.parse import quote

from . import _captures

PLUGIN_NAME = "oomlens"
PREFIX = f"/data/plugin/{PLUGIN_NAME}/"
HERE = os.path.dirname(os.path.abspath(__file__))
# The page's built files (dist/), copied here when the wheel is built.
STATIC = os.path.join(HERE, "static")
FRONTEND = os.path.join(HERE, "frontend.js")
CHUNK = 1 << 20

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".wasm": "application/wasm",
    ".pb": "application/octet-stream",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
}

_CSP_META = re.compile(rb'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', re.I)

StartResponse = Callable[..., object]


def capture_url(run: str, file: str) -> str:
    """The capture route of a host file, relative to the plugin's routes."""
    return "capture/" + "/".join(quote(p, safe="") for p in run.split("/")) + "/" + quote(file, safe="")


def page_files() -> List[str]:
    """The page's files in this install, as relative paths with `/` (``views/plan.js``);
    empty when the wheel was built without dist/. Only these are served."""
    out = []
    for folder, dirs, files in os.walk(STATIC):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = os.path.relpath(folder, STATIC)
        for name in files:
            if not name.startswith(".") and os.path.isfile(os.path.join(folder, name)):
                out.append(name if rel == "." else f"{rel.replace(os.sep, '/')}/{name}")
    return sorted(out)


def _header_csp(html: bytes) -> Optional[str]:
    """The Content-Security-Policy header to send with the page's index.html.

    It is the page's own policy (its <meta>), with `frame-ancestors 'self'` added (only
    TensorBoard's own pages may frame it; a <meta> cannot say this). The browser
    enforces the header and the <meta> both, so the document gets the stricter of the
    two, which is the <meta>'s. One change: `'wasm-unsafe-eval'` is written
    `'unsafe-eval'` in the header, because TensorBoard's response checker accepts the
    latter in script-src and warns on the former at every page load; the <meta> still
    forbids eval(), and the WebAssembly engine runs in the worker, whose own response
    (worker.js) carries no policy.
    """
    m = _CSP_META.search(html)
    if not m:
        return None
    policy = m.group(1).decode("utf-8").replace("&#39;", "'").replace("&quot;", '"')
    directives = [d.strip() for d in policy.split(";") if d.strip()]
    directives = [d.replace("'wasm-unsafe-eval'", "'unsafe-eval'") for d in directives if not d.lower().startswith("frame-ancestors")]
    directives.append("frame-ancestors 'self'")
    return "; ".join(directives)


def _route(environ) -> str:
    """The part of the request path after the plugin's prefix, as text."""
    path = environ.get("PATH_INFO", "")
    # PEP 3333: the path's bytes are carried as latin-1 characters.
    try:
        path = path.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    i = path.find(PREFIX)
    return path[i + len(PREFIX) :] if i >= 0 else path.lstrip("/")


def _headers(content_type: str, length: Optional[int] = None, extra: Iterable[Tuple[str, str]] = ()) -> List[Tuple[str, str]]:
    h = [
        ("Content-Type", content_type),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-cache"),
        ("Referrer-Policy", "no-referrer"),
    ]
    if length is not None:
        h.append(("Content-Length", str(length)))
    h.extend(extra)
    return h


def _text(start_response: StartResponse, status: str, message: str, method: str = "GET"):
    body = (message.rstrip("\n") + "\n").encode("utf-8")
    start_response(status, _headers("text/plain; charset=utf-8", len(body)))
    return [] if method == "HEAD" else [body]


_STATUS = {400: "400 Bad Request", 403: "403 Forbidden", 404: "404 Not Found", 405: "405 Method Not Allowed", 500: "500 Internal Server Error"}


def _stream(environ, path: str, size: int):
    """The file's bytes in slices of 1 MiB: never read whole."""
    f = open(path, "rb")
    wrapper = environ.get("wsgi.file_wrapper")
    if wrapper is not None:
        return wrapper(f, CHUNK)

    def chunks():
        with f:
            left = size
            while left > 0:
                block = f.read(min(CHUNK, left))
                if not block:
                    break
                left -= len(block)
                yield block

    return chunks()


class OomlensApp:
    """The plugin's routes for one log directory (``None``: no local log directory)."""

    def __init__(self, logdir: Optional[str]):
        self.logdir = os.path.abspath(os.path.expanduser(logdir)) if logdir and "://" not in logdir else logdir

    # ---------------------------------------------------------------- for TensorBoard

    def plugin_apps(self) -> Dict[str, Callable]:
        return {"/index.js": self, "/runs": self, "/page/*": self, "/capture/*": self}

    def runs(self) -> List[Dict[str, object]]:
        if not self.logdir or "://" in self.logdir:
            return []
        return _captures.list_runs(self.logdir)

    # ---------------------------------------------------------------- WSGI

    def __call__(self, environ, start_response: StartResponse):
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            start_response(_STATUS[405], _headers("text/plain; charset=utf-8", 0, [("Allow", "GET, HEAD")]))
            return []
        route = _route(environ)
        try:
            if route == "index.js":
                return self._file(environ, start_response, FRONTEND, "text/javascript; charset=utf-8", method)
            if route == "runs":
                return self._runs(start_response, method)
            if route.startswith("page/"):
                return self._page(environ, start_response, route[len("page/") :], method)
            if route.startswith("capture/"):
                return self._capture(environ, start_response, route[len("capture/") :], method)
        except _captures.CaptureError as e:
            return _text(start_response, _STATUS.get(e.status, "404 Not Found"), str(e), method)
        return _text(start_response, _STATUS[404], f"oomlens: no such route {route!r}", method)

    def _file(self, environ, start_response, path: str, content_type: str, method: str, extra=()):
        size = os.path.getsize(path)
        start_response("200 OK", _headers(content_type, size, extra))
        return [] if method == "HEAD" else _stream(environ, path, size)

    def _runs(self, start_response, method: str):
        local = bool(self.logdir) and "://" not in self.logdir
        body = json.dumps(
            {
                "logdir": self.logdir,
                "local": local,
                "page": "index.html" in page_files(),
                "runs": [
                    {
                        "run": r["run"],
                        "hosts": [{"host": h["host"], "file": h["file"], "bytes": h["bytes"], "url": capture_url(r["run"], h["file"])} for h in r["hosts"]],
                    }
                    for r in self.runs()
                ],
            }
        ).encode("utf-8")
        start_response("200 OK", _headers("application/json", len(body)))
        return [] if method == "HEAD" else [body]

    def _page(self, environ, start_response, name: str, method: str):
        name = name or "index.html"
        if name not in page_files():
            if not page_files():
                raise _captures.CaptureError(
                    "oomlens: this install has no page files (oomlens/tensorboard/static): the wheel was built without dist/; build it with `node scripts/build.mjs` first",
                    404,
                )
            raise _captures.CaptureError(f"oomlens: the page has no file {name!r}", 404)
        path = os.path.join(STATIC, *name.split("/"))
        content_type = TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")
        if name.endswith(".html"):
            with open(path, "rb") as f:
                html = f.read()
            csp = _header_csp(html)
            extra = [("Content-Security-Policy", csp)] if csp else []
            start_response("200 OK", _headers(content_type, len(html), extra))
            return [] if method == "HEAD" else [html]
        return self._file(environ, start_response, path, content_type, method)

    def _capture(self, environ, start_response, rest: str, method: str):
        run, _, file = rest.rpartition("/")
        path, size = _captures.resolve(self.logdir, run, file)
        extra = [("Content-Disposition", "inline; filename*=UTF-8''" + quote(file, safe=""))]
        start_response("200 OK", _headers("application/octet-stream", size, extra))
        return [] if method == "HEAD" else _stream(environ, path, size)
