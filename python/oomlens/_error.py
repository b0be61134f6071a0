"""The one exception oomlens raises."""

from __future__ import annotations

__all__ = ["OomlensError"]


class OomlensError(Exception):
    """An input oomlens cannot analyze.

    ``str(e)`` is the one line the ``oomlens`` command prints after ``oomlens:`` (what is
    wrong and what to do); ``e.kind`` is the engine's stable name for the problem:
    ``open``, ``read``, ``empty``, ``not_a_capture``, ``corrupt``, ``truncated``,
    ``no_capture_in_dir``, ``unknown_module``, ``unknown_host``, … (the same ``kind`` the
    web page's ``AnalysisError`` carries).
    """

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind

    def __reduce__(self):  # pickles across processes (concurrent.futures, Ray, …)
        return (type(self), (self.message, self.kind))
