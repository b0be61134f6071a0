"""oomlens's "OOM" tab in TensorBoard.

Installed with the wheel (``pip install 'oomlens[tensorboard]'``), TensorBoard finds it
through the ``tensorboard_plugins`` entry point ``oomlens =
oomlens.tensorboard.plugin:OomlensLoader``: ``tensorboard --logdir LOGDIR`` then has an *OOM*
tab that lists the runs under ``LOGDIR/plugins/profile/`` (and under sub-folders of
``LOGDIR``) with their host files, and opens the oomlens page on the host picked. The
page, its WebAssembly engine and the capture bytes are all served by the plugin's own
routes (:mod:`oomlens.tensorboard._wsgi`): the capture is analyzed in the browser,
nothing leaves the machine. See docs/tensorboard.md.
"""

from __future__ import annotations

from ._captures import CaptureError, list_runs, resolve
from ._wsgi import PLUGIN_NAME, OomlensApp, page_files

__all__ = ["CaptureError", "OomlensApp", "PLUGIN_NAME", "list_runs", "page_files", "resolve"]
