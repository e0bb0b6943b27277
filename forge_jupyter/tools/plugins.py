"""Plugin hooks (pluggy): another package can add tools and rewrite what a request carries.

A plugin is any object with ``@hookimpl`` methods, registered with ``forge.plugins.register``
or installed as an entry point in the ``forge_jupyter`` group:

    [project.entry-points.forge_jupyter]
    myplugin = "mypackage.forge_plugin"

Hooks sit on boundaries only (DESIGN §1): the tool table, the system prompt, request params
and headers, and the messages sent — never inside the loop's branches.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "forge_jupyter"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Specs:
    @hookspec
    def forge_tools(self, forge: Any) -> list[Any]:  # type: ignore[empty-body]
        """Tools this plugin adds (``Tool`` objects or plain functions)."""

    @hookspec
    def forge_tool_definition(self, tool: Any, definition: dict, model: str) -> dict | None:  # type: ignore[empty-body]
        """Return a rewritten tool-table entry, or None to keep it."""

    @hookspec
    def forge_system_prompt(self, system: str, agent: str, model: str) -> str | None:  # type: ignore[empty-body]
        """Return a rewritten system prompt, or None to keep it."""

    @hookspec
    def forge_request_params(self, params: dict, model: str) -> dict | None:  # type: ignore[empty-body]
        """Return params to merge into the litellm call (temperature, extra_headers, …)."""

    @hookspec
    def forge_transform_messages(self, messages: list, model: str) -> list | None:  # type: ignore[empty-body]
        """Return rewritten model messages, or None to keep them."""


def plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(Specs)
    if load_entry_points:
        pm.load_setuptools_entrypoints(PROJECT)
    return pm


def apply_chain(results: list, initial: Any) -> Any:
    """The last non-None result of a hook, else ``initial`` (pluggy calls newest first)."""
    for value in results:
        if value is not None:
            return value
    return initial
