"""oomlens: why a JAX/XLA program ran out of accelerator memory, and what to change.

Reads the profiler capture (``*.xplane.pb``, written by ``jax.profiler.trace``) with the
same Rust engine as the ``oomlens`` command and its web page::

    import oomlens

    report = oomlens.analyze("/tmp/trace")       # a .xplane.pb file or a capture folder
    report["headline"]["text"]                    # the JSON report (schema oomlens/1), a dict
    report                                        # in a notebook: the HTML report
    print(report)                                 # in a terminal: the text report

- :func:`analyze` returns a :class:`Report`: a ``dict`` holding the JSON report, parsed,
  that also renders as text, Markdown and HTML (``_repr_html_`` in notebooks).
- :func:`analyze_json` returns the JSON text itself, byte for byte what
  ``oomlens PATH --format json`` prints.
- :func:`diff` compares two runs (``oomlens diff BEFORE AFTER``): a :class:`Diff`, the
  JSON comparison (schema ``oomlens-diff/1``) as a ``dict``.
- :func:`from_error` reports on an out-of-memory message alone: its figures and triage.
- Errors are :class:`OomlensError`, with ``e.kind`` and the one-line message.
- The analysis releases the GIL: threads analyze several captures at once.
- :mod:`oomlens.jax` explains an out-of-memory error where it happens.
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import Any, Optional, Union

from . import _native
from ._error import OomlensError

__all__ = [
    "DEFAULT_TOP",
    "DIFF_SCHEMA",
    "Diff",
    "OomlensError",
    "Report",
    "SCHEMA",
    "Source",
    "analyze",
    "analyze_json",
    "diff",
    "from_error",
    "__version__",
]

#: ``oomlens 0.1.0``: the engine, as every report's ``tool`` names it.
TOOL: str = _native.TOOL
__version__: str = TOOL.split(" ", 1)[1]
#: The JSON report's schema: ``oomlens/1``.
SCHEMA: str = _native.SCHEMA
#: The JSON comparison's schema: ``oomlens-diff/1``.
DIFF_SCHEMA: str = _native.DIFF_SCHEMA
#: How many live buffers the text, Markdown and HTML reports list by default.
DEFAULT_TOP: int = _native.DEFAULT_TOP

#: A capture: a path (``str`` or ``os.PathLike``) to a ``.xplane.pb`` file or a capture
#: folder, or the bytes of one capture file.
Source = Union[str, "_os.PathLike[str]", bytes, bytearray, memoryview]


def _source(source: Any) -> Any:
    if isinstance(source, bytes):
        return source
    if isinstance(source, (bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, _os.PathLike)):
        return _os.fspath(source)
    raise TypeError(
        "oomlens.analyze() takes a path (str or os.PathLike) or a capture's bytes, "
        f"not {type(source).__name__}"
    )


def _run(source: Any, module: Optional[str], error_text: Any, name: Optional[str]):
    # A path is read as `--error-text FILE` reads it (the report names the file); a str
    # is the text itself (named `pasted text`).
    if isinstance(error_text, _os.PathLike):
        return _native.analyze(_source(source), module, None, name, _os.fspath(error_text))
    if error_text is not None and not isinstance(error_text, str):
        raise TypeError(
            f"error_text must be a str or an os.PathLike, not {type(error_text).__name__}"
        )
    return _native.analyze(_source(source), module, error_text, name)


class Report(dict):
    """The JSON report (schema ``oomlens/1``) as a ``dict``, that also renders itself.

    It is exactly ``json.loads`` of what ``oomlens PATH --format json`` prints, so
    ``report["headline"]["text"]``, ``report["diagnosis"]`` and ``json.dumps(report)``
    work as on any dict. Besides:

    - ``report.json_text``: the engine's JSON text, byte for byte the CLI's;
    - ``report.text()``, ``report.markdown()``, ``report.html()``: the CLI's other
      formats (``top``: how many live buffers to list); ``report.save_html(path)``;
    - ``report.brief(lines)``: the verdict, the module and the first diagnosis lines;
    - in a notebook the report displays as the HTML report (``_repr_html_``), and
      ``print(report)`` writes the text report.

    These renderings show the analysis as it was made, whatever is later changed in
    the dict. A report pickles (for ``concurrent.futures`` processes, Ray, Spark, …) as
    a plain ``dict``: the JSON report, without the renderings.
    """

    __slots__ = ("_analysis", "_json")

    def __init__(self, analysis: Any) -> None:
        text = analysis.json()
        super().__init__(_json.loads(text))
        self._analysis = analysis
        self._json = text

    @property
    def json_text(self) -> str:
        """The JSON report as the engine wrote it (what ``--format json`` prints)."""
        return self._json

    def text(self, top: int = DEFAULT_TOP) -> str:
        """The text report, as ``oomlens PATH`` prints it."""
        return self._analysis.text(top)

    def markdown(self, top: int = DEFAULT_TOP) -> str:
        """The Markdown report, as ``oomlens PATH --format markdown`` prints it."""
        return self._analysis.markdown(top)

    def html(self, top: int = DEFAULT_TOP) -> str:
        """The HTML report, one self-contained document (``--format html``)."""
        return self._analysis.html(top, False)

    def save_html(self, path: Union[str, "_os.PathLike[str]"], top: int = DEFAULT_TOP) -> None:
        """Writes :meth:`html` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.html(top))

    def brief(self, lines: int = 3) -> str:
        """The verdict, the module and the first ``lines`` diagnosis lines."""
        return self._analysis.brief(lines)

    def _repr_html_(self) -> str:
        return self._analysis.html(DEFAULT_TOP, True)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        headline = self.get("headline") or {}
        where = self.get("file") or f"{len(self.get('hosts') or [])} hosts"
        return f"<oomlens.Report {where}: {headline.get('text', '')!s}>"

    def __reduce__(self):
        return (dict, (dict(self),))


class Diff(dict):
    """The comparison of two runs (schema ``oomlens-diff/1``) as a ``dict``: exactly
    ``json.loads`` of what ``oomlens diff BEFORE AFTER --format json`` prints. Besides,
    ``json_text`` (the engine's text), ``text()`` and ``markdown()`` (the CLI's other
    formats); a notebook shows the Markdown comparison, ``print`` the text one. Pickles
    as a plain ``dict``."""

    __slots__ = ("_comparison", "_json")

    def __init__(self, comparison: Any) -> None:
        text = comparison.json()
        super().__init__(_json.loads(text))
        self._comparison = comparison
        self._json = text

    @property
    def json_text(self) -> str:
        """The JSON comparison as the engine wrote it (what ``--format json`` prints)."""
        return self._json

    def text(self, top: int = DEFAULT_TOP) -> str:
        """The text comparison, as ``oomlens diff BEFORE AFTER`` prints it."""
        return self._comparison.text(top)

    def markdown(self, top: int = DEFAULT_TOP) -> str:
        """The Markdown comparison (``--format markdown``)."""
        return self._comparison.markdown(top)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        headline = self.get("headline") or {}
        text = headline.get("text", "") if isinstance(headline, dict) else headline
        return f"<oomlens.Diff: {text!s}>"

    def __reduce__(self):
        return (dict, (dict(self),))


def analyze(
    source: Source,
    module: Optional[str] = None,
    error_text: Union[str, "_os.PathLike[str]", None] = None,
    *,
    name: Optional[str] = None,
) -> Report:
    """Analyzes a capture, as ``oomlens PATH [--module M] [--error-text FILE]`` does.

    ``source``: a ``.xplane.pb`` file or a capture folder (the log dir given to
    ``jax.profiler.trace``, its ``plugins/profile``, or one run folder: the newest run
    is taken and each host file analyzed), or the bytes of one capture file (``name``
    then names it in the report; default ``capture.xplane.pb``). ``module``: the module
    to report on, by label (``jit_step(12)``) or name (``jit_step``). ``error_text``:
    the out-of-memory message you got (a whole log or traceback is fine), as text, or
    as a path to the file holding it (then the report is byte for byte the CLI's with
    ``--error-text FILE``).

    Returns a :class:`Report`; raises :class:`OomlensError` for input oomlens cannot
    analyze. The GIL is released while the engine works.
    """
    return Report(_run(source, module, error_text, name))


def analyze_json(
    source: Source,
    module: Optional[str] = None,
    error_text: Optional[str] = None,
    *,
    name: Optional[str] = None,
) -> str:
    """:func:`analyze`, returning the JSON report's text: byte for byte what
    ``oomlens PATH --format json`` prints (a fleet pipeline can write it as it is)."""
    return _run(source, module, error_text, name).json()


def diff(
    before: Source,
    after: Source,
    module: Optional[str] = None,
    *,
    name: Optional[str] = None,
) -> Diff:
    """Compares two runs, as ``oomlens diff BEFORE AFTER [--module M]`` does: did the
    fix work, and did it save what was estimated?

    ``before``, ``after``: each what :func:`analyze` takes (a capture file or folder, or
    one capture file's bytes, then named ``name`` in both). ``module``: the module to
    compare, by name (``jit_step``) or label. Returns a :class:`Diff`; raises
    :class:`OomlensError`. The GIL is released while the engine works.
    """
    return Diff(_native.diff(_source(before), _source(after), module, name))


def from_error(text: str) -> Report:
    """The report on an out-of-memory message alone, as ``oomlens --error-text FILE``
    gives it without a capture: ``report["error"]`` holds the message's figures (the
    format ``kind``, the requested allocation, the memory used and its capacity, the
    program's split, padding, fragmentation, the allocations it lists, the allocator's
    stats; byte counts exact, ``None`` where the message says nothing), and the
    diagnosis holds the triage and its fixes. ``text`` may be a whole log, traceback or
    notebook output. Raises :class:`OomlensError` (kind ``no_oom_message``) when the
    text holds no out-of-memory message.
    """
    if not isinstance(text, str):
        raise TypeError(f"from_error() takes the message as a str, not {type(text).__name__}")
    return Report(_native.from_error(text))


def __getattr__(name: str) -> Any:
    # `import oomlens` then `oomlens.jax.explain_oom(...)`: jax is imported only then.
    if name == "jax":
        import importlib

        return importlib.import_module(".jax", __name__)
    raise AttributeError(f"module 'oomlens' has no attribute {name!r}")
