"""An out-of-memory error that explains itself.

::

    import oomlens.jax

    with oomlens.jax.explain_oom("oom-evidence", trace=True):
        state, loss = train_step(state, batch)
        print(float(loss))            # on the CPU backend the error surfaces here

    @oomlens.jax.explain_oom(trace=True)  # waits for the result, so the error is caught
    def step(state, batch):
        return train_step(state, batch)

When the block (or the decorated function) fails with ``RESOURCE_EXHAUSTED``
(``jax.errors.JaxRuntimeError``), :class:`explain_oom` saves the evidence into one
folder, analyzes it, and re-raises the error with the explanation under its traceback
(a note, on Python 3.11+; printed to standard error before it on older Pythons):

- ``error.txt``: the error with its traceback;
- ``memory.prof``: a device memory profile (``jax.profiler.save_device_memory_profile``);
- ``<host>.xplane.pb``: the profiler capture, when a trace ran: the one
  ``explain_oom(trace=True)`` runs, or one of yours (``jax.profiler.trace``) that is
  running when the error happens, which is stopped so that it is written;
- ``report.html``: the report on that capture and the error.

The folder is what the ``oomlens`` command reads: ``oomlens FOLDER --error-text
FOLDER/error.txt``. Errors other than running out of memory pass through untouched.

:func:`enable_dumps` turns XLA dumps on, before JAX starts.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, List, Optional, TypeVar, Union

import oomlens

__all__ = ["enable_dumps", "explain_oom", "is_oom"]

PathLike = Union[str, "os.PathLike[str]"]
F = TypeVar("F", bound=Callable[..., Any])

#: The evidence files explain_oom writes (a capture is ``<host>.xplane.pb``).
ERROR_FILE = "error.txt"
PROFILE_FILE = "memory.prof"
REPORT_FILE = "report.html"
CAPTURE_SUFFIX = ".xplane.pb"


def is_oom(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) is XLA running out of memory:
    a ``RESOURCE_EXHAUSTED`` status, or an out-of-memory ``JaxRuntimeError``."""
    seen = set()
    e: Optional[BaseException] = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        try:
            text = str(e)
        except Exception:  # noqa: BLE001 - a broken __str__ is not ours to fix
            text = ""
        if "RESOURCE_EXHAUSTED" in text:
            return True
        runtime = type(e).__name__ in ("JaxRuntimeError", "XlaRuntimeError")
        if runtime and "out of memory" in text.lower():
            return True
        e = e.__cause__ or e.__context__
    return False


def enable_dumps(folder: PathLike, *, as_text: bool = False) -> str:
    """Makes XLA dump every program it compiles from now on into ``folder``, the way
    oomlens reads dumps: adds ``--xla_dump_to=FOLDER`` (and, unless ``as_text``,
    ``--xla_dump_hlo_as_proto``) to ``XLA_FLAGS``, replacing an earlier
    ``--xla_dump_to``. Returns the new ``XLA_FLAGS``.

    XLA reads ``XLA_FLAGS`` once, when JAX starts its backend (the first computation):
    call this before that, best before ``import jax``. A warning says so when ``jax``
    is already imported.
    """
    folder = os.path.abspath(os.fspath(folder))
    os.makedirs(folder, exist_ok=True)
    flags = [
        f
        for f in os.environ.get("XLA_FLAGS", "").split()
        if not f.startswith("--xla_dump_to=")
        and not (f.startswith("--xla_dump_hlo_as_proto") and as_text)
    ]
    flags.append(f"--xla_dump_to={folder}")
    if not as_text and "--xla_dump_hlo_as_proto" not in flags:
        flags.append("--xla_dump_hlo_as_proto")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    if "jax" in sys.modules:
        started = _backend_started()
        warnings.warn(
            "oomlens.jax.enable_dumps: jax is already imported"
            + (
                " and its backend has started, so XLA has read XLA_FLAGS already: the "
                "dumps take effect only in a new process (call enable_dumps before "
                "`import jax`)"
                if started
                else "; the dumps take effect only if no computation has run yet (call "
                "enable_dumps before `import jax` to be sure)"
            ),
            RuntimeWarning,
            stacklevel=2,
        )
    return os.environ["XLA_FLAGS"]


def _backend_started() -> bool:
    try:
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "_backends", None))
    except Exception:  # noqa: BLE001 - private state may move; assume it has started
        return True


def _profile_state() -> Any:
    """JAX's record of the running trace (private; None where it is not found)."""
    try:
        from jax._src import profiler

        state = profiler._profile_state
    except Exception:  # noqa: BLE001
        return None
    if all(hasattr(state, a) for a in ("profile_session", "log_dir", "lock")):
        return state
    return None


class _StoppedByOomlens:
    """Stands in for a trace that explain_oom stopped to have its capture written, so
    that the ``jax.profiler.trace(...)`` block around it ends as usual instead of
    raising "No profile started" over the out-of-memory error."""

    def stop_and_export(self, log_dir: str) -> None:
        pass

    def stop(self) -> bytes:
        return b""


def _newest_captures(log_dir: Path) -> List[Path]:
    """The host files of the newest run under a trace's log dir."""
    runs = log_dir / "plugins" / "profile"
    if not runs.is_dir():
        return []
    newest = sorted(
        (r for r in runs.iterdir() if r.is_dir() and any(r.glob("*" + CAPTURE_SUFFIX))),
        key=lambda r: r.name,
    )
    return sorted(newest[-1].glob("*" + CAPTURE_SUFFIX)) if newest else []


def _place(src: Path, dst: Path) -> None:
    """A hard link where the file system allows one (captures can be large), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _default_folder() -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(f"oomlens-oom-{stamp}")
    n = 1
    while folder.exists():
        n += 1
        folder = Path(f"oomlens-oom-{stamp}-{n}")
    return folder


class explain_oom(contextlib.ContextDecorator):
    """A context manager and decorator that explains an out-of-memory error.

    ``folder``: where the evidence goes (made when needed; default
    ``oomlens-oom-<date>-<time>`` in the working directory). The files oomlens writes
    there (see the module's doc) replace those of an earlier failure.

    ``trace``: run a profiler trace around the block, so that a failure comes with the
    capture of the program that ran out: ``True`` (into a temporary folder, removed when
    the block succeeds) or a log dir to trace into (kept). Without it, a trace of yours
    that is running when the error happens is stopped, so that its capture is written
    and explained, when ``stop_running_trace`` (the default); your
    ``jax.profiler.trace`` block then ends as usual.

    ``memory_profile``: save a device memory profile. ``lines``: how many diagnosis lines
    to show. ``file``: print the explanation there too (it is always a note on the
    error where Python has notes, 3.11+, and printed to standard error where not).

    ``block`` (decorator): wait for the function's result (``jax.block_until_ready``),
    so that an error the backend reports when the result is used (asynchronous
    dispatch) is raised, and explained, inside the function. In a ``with`` block, use
    the result there (``float(loss)``) or call :meth:`ready`.

    After a failure, ``.folder`` is where the evidence went and ``.report`` the
    :class:`oomlens.Report` (``None`` without a capture).
    """

    def __init__(
        self,
        folder: Optional[PathLike] = None,
        *,
        trace: Union[bool, PathLike] = False,
        memory_profile: bool = True,
        stop_running_trace: bool = True,
        lines: int = 3,
        file: Any = None,
        block: bool = True,
    ) -> None:
        self._folder_arg = folder
        self._trace_arg = trace
        self.memory_profile = memory_profile
        self.stop_running_trace = stop_running_trace
        self.lines = lines
        self.file = file
        self.block = block
        self.folder: Optional[Path] = None
        self.report: Optional[oomlens.Report] = None
        self.explanation: Optional[str] = None
        self._trace_dir: Optional[Path] = None
        self._trace_is_temporary = False

    # One object can decorate a function that is called many times, even recursively:
    # each call runs with a fresh copy.
    def _recreate_cm(self) -> "explain_oom":
        return explain_oom(
            self._folder_arg,
            trace=self._trace_arg,
            memory_profile=self.memory_profile,
            stop_running_trace=self.stop_running_trace,
            lines=self.lines,
            file=self.file,
            block=self.block,
        )

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def explained(*args: Any, **kwargs: Any) -> Any:
            with self._recreate_cm() as cm:
                out = func(*args, **kwargs)
                return cm.ready(out) if cm.block else out

        return explained  # type: ignore[return-value]

    def ready(self, value: Any) -> Any:
        """Waits until ``value`` (any pytree of arrays) is computed, so that an error
        the backend reports only then is raised here; returns ``value``."""
        import jax

        return jax.block_until_ready(value)

    def __enter__(self) -> "explain_oom":
        if self._trace_arg is not False and self._trace_arg is not None:
            self._start_trace()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> bool:
        if exc is not None and is_oom(exc):
            try:
                self._explain(exc)
            except Exception as failed:  # noqa: BLE001 - never hide the user's error
                self._show(exc, f"oomlens: could not explain this error: {failed!r}")
        else:
            self._stop_own_trace(keep=False)
        return False  # the error goes on, explained

    # ---------------------------------------------------------------- the trace

    def _start_trace(self) -> None:
        import jax

        state = _profile_state()
        if state is not None and state.profile_session is not None:
            # A trace is running already (yours): that one will be used.
            return
        if self._trace_arg is True:
            self._trace_dir = Path(tempfile.mkdtemp(prefix="oomlens-trace-"))
            self._trace_is_temporary = True
        else:
            self._trace_dir = Path(os.fspath(self._trace_arg))  # type: ignore[arg-type]
        jax.profiler.start_trace(str(self._trace_dir))

    def _stop_own_trace(self, keep: bool) -> Optional[Path]:
        """Stops the trace this object started; returns its log dir."""
        if self._trace_dir is None:
            return None
        import jax

        log_dir, self._trace_dir = self._trace_dir, None
        try:
            jax.profiler.stop_trace()
        except RuntimeError:  # stopped by someone else meanwhile
            pass
        if not keep and self._trace_is_temporary:
            shutil.rmtree(log_dir, ignore_errors=True)
            return None
        return log_dir

    def _stop_running_trace(self) -> "tuple[Optional[Path], Optional[str]]":
        """Stops a trace that someone else started, so that its capture is written;
        returns its log dir, or why it was not stopped."""
        state = _profile_state()
        if state is None or state.profile_session is None:
            return None, None
        log_dir = state.log_dir
        if not self.stop_running_trace:
            return None, (
                f"a profiler trace is running (log dir {log_dir}): stop it "
                "(jax.profiler.stop_trace()) and run: oomlens "
                f"{log_dir} --error-text {self.folder / ERROR_FILE}"
            )
        import jax

        jax.profiler.stop_trace()
        with state.lock:
            state.profile_session = _StoppedByOomlens()
            state.log_dir = log_dir
        return (Path(log_dir) if log_dir else None), None

    # ---------------------------------------------------------------- the evidence

    def _explain(self, exc: BaseException) -> None:
        folder = Path(os.fspath(self._folder_arg)) if self._folder_arg else _default_folder()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        for old in [folder / ERROR_FILE, folder / PROFILE_FILE, folder / REPORT_FILE]:
            old.unlink(missing_ok=True)
        for old in folder.glob("*" + CAPTURE_SUFFIX):
            old.unlink()

        error_text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        (folder / ERROR_FILE).write_text(error_text, encoding="utf-8")
        saved = [ERROR_FILE]
        remarks: List[str] = []

        log_dir = self._stop_own_trace(keep=True)
        if log_dir is None:
            log_dir, why = self._stop_running_trace()
            if why:
                remarks.append(why)
        captures = _newest_captures(log_dir) if log_dir else []
        for c in captures:
            _place(c, folder / c.name)
            saved.append(c.name)
        if self._trace_is_temporary and log_dir is not None:
            shutil.rmtree(log_dir, ignore_errors=True)

        if self.memory_profile:
            try:
                import jax

                jax.profiler.save_device_memory_profile(str(folder / PROFILE_FILE))
                saved.append(PROFILE_FILE)
            except Exception as e:  # noqa: BLE001
                remarks.append(f"no device memory profile: {e}")

        lines: List[str] = []
        if captures:
            try:
                self.report = oomlens.analyze(folder, error_text=folder / ERROR_FILE)
                self.report.save_html(folder / REPORT_FILE)
                saved.append(REPORT_FILE)
                lines.append(self.report.brief(self.lines).rstrip("\n"))
            except oomlens.OomlensError as e:
                remarks.append(f"the capture could not be analyzed: {e}")
        else:
            remarks.append(
                "no profiler capture to explain it with: run the step under "
                "oomlens.jax.explain_oom(..., trace=True), or inside "
                "jax.profiler.trace(logdir), so that the program that ran out is recorded"
            )
        lines.append(f"oomlens: evidence in {folder}{os.sep}: {', '.join(saved)}")
        if captures:
            lines.append(
                f"oomlens: the whole report: {folder / REPORT_FILE}, or: oomlens {folder} "
                f"--error-text {folder / ERROR_FILE}"
            )
        lines.extend(f"oomlens: {r}" for r in remarks)
        self.explanation = "\n".join(lines)
        self._show(exc, self.explanation)

    def _show(self, exc: BaseException, text: str) -> None:
        noted = False
        add_note = getattr(exc, "add_note", None)
        if add_note is not None:
            try:
                add_note(text)
                noted = True
            except Exception:  # noqa: BLE001
                pass
        if self.file is not None:
            print(text, file=self.file, flush=True)
        elif not noted:
            print(text, file=sys.stderr, flush=True)
