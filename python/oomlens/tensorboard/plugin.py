"""The TensorBoard plugin classes of the OOM tab (this module imports TensorBoard).

The ``tensorboard_plugins`` entry point names :class:`OomlensLoader`.
"""

from __future__ import annotations

try:
    from tensorboard.plugins import base_plugin
except ImportError as e:  # pragma: no cover - exercised without tensorboard
    raise ImportError(
        "oomlens.tensorboard.plugin is a TensorBoard plugin and needs TensorBoard: pip install 'oomlens[tensorboard]'"
    ) from e

from ._wsgi import PLUGIN_NAME, OomlensApp

__all__ = ["OomlensLoader", "OomlensPlugin"]


class OomlensPlugin(base_plugin.TBPlugin):
    """The OOM tab: its routes are :class:`OomlensApp`'s."""

    plugin_name = PLUGIN_NAME

    def __init__(self, context):
        self._app = OomlensApp(getattr(context, "logdir", None) or None)

    def get_plugin_apps(self):
        return self._app.plugin_apps()

    def is_active(self):
        return bool(self._app.runs())

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="OOM", disable_reload=True)

    def data_plugin_names(self):
        # Captures are not summaries: activity comes from is_active() alone.
        return ()


class OomlensLoader(base_plugin.TBLoader):
    """What the ``tensorboard_plugins`` entry point names."""

    def load(self, context):
        return OomlensPlugin(context)
