"""Configuration the Jupyter way: a traitlets Configurable named ``Forge``.

    %config Forge.model = "anthropic/claude-sonnet-4-5"      # in a notebook
    c.Forge.db = "~/work/forge.duckdb"                       # in ipython_config.py
    FORGE_MODEL=openai/gpt-4o-mini jupyter lab               # from the environment

Its traits are derived from the one declaration of the settings (``settings.SETTINGS``).
Precedence: a value set in config (``%config``, ``ipython_config.py``) wins over a ``FORGE_*``
environment variable, which wins over the default. ``%forge config`` shows every value and
where it came from. API keys are never configured here: litellm reads them from its own
environment variables (OPENAI_API_KEY, …) and they are never written to the store.
"""

from __future__ import annotations

import os
import types
from typing import Any

from traitlets import (
    Bool,
    CaselessStrEnum,
    Dict,
    Float,
    Int,
    List,
    TraitError,
    TraitType,
    Unicode,
    Union,
    observe,
    validate,
)
from traitlets.config import Configurable

from .settings import BY_NAME, FORGE_SETTINGS, SETTINGS, Setting

ENV: dict[str, str] = {s.name: s.env for s in SETTINGS}  # setting → its FORGE_* variable


def _trait(s: Setting) -> TraitType:
    """The traitlets type of one declared setting."""
    trait: TraitType
    if s.kind == "str":
        trait = Unicode(s.default, allow_none=s.default is None, help=s.help)
    elif s.kind == "int":
        trait = Int(s.default, help=s.help)
    elif s.kind == "float":
        trait = Float(s.default, help=s.help)
    elif s.kind == "bool":
        trait = Bool(s.default, help=s.help)
    elif s.kind == "list":
        trait = List(Unicode(), default_value=list(s.default), help=s.help)
    elif s.kind == "dict":
        trait = Dict(default_value=dict(s.default), help=s.help)
    elif s.kind == "enum":
        trait = CaselessStrEnum(list(s.choices), s.default, help=s.help)
    else:  # duration: "30m", "1h" or seconds
        trait = Union([Unicode(), Float()], default_value=s.default, help=s.help)
    return trait.tag(config=True)


class _ForgeConfig(Configurable):
    """forge-jupyter settings for this kernel (the Python facade is ``forge_jupyter.Forge``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sources: dict[str, str] = {}
        configured = set(self.config.get("Forge", {}))
        for s in SETTINGS:
            if s.name in configured:
                self._sources[s.name] = "config"
            elif s.env in os.environ:
                self.set_trait(s.name, s.parse(os.environ[s.env]))
                self._sources[s.name] = f"env {s.env}"
            else:
                self._sources[s.name] = "default"
        self._ready = True

    @validate("permissions")
    def _valid_permissions(self, proposal: Any) -> Any:
        from .tools.permission import Rule

        try:  # refused as it is set (%config, FORGE_PERMISSIONS), not at the next prompt
            for rule in proposal["value"]:
                Rule.parse(rule)
        except (TypeError, ValueError) as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @validate("session_max_age")
    def _valid_session_max_age(self, proposal: Any) -> Any:
        from .session.poisoned import session_max_age

        try:
            session_max_age(proposal["value"])
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]

    @observe(*ENV)
    def _changed(self, change: Any) -> None:
        if getattr(self, "_ready", False):
            self._sources[change["name"]] = "config"

    def effective(self) -> list[tuple[str, Any, str]]:
        """(setting, value, where it came from) for ``%forge config``."""
        return [(s.name, getattr(self, s.name), self._sources.get(s.name, "default"))
                for s in SETTINGS]

    def forge_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``forge_jupyter.Forge``: every Forge setting, explicitly (so
        config wins over the environment there too), in the Python API's spelling."""
        kwargs = {s.name: s.to_api(getattr(self, s.name)) for s in FORGE_SETTINGS}
        if os.environ.get("FORGE_API_KEY"):  # for a key-less local server; read, never stored
            kwargs["api_key"] = os.environ["FORGE_API_KEY"]
        return kwargs


# The class people configure as ``Forge``: one trait per declared setting.
Forge = types.new_class("Forge", (_ForgeConfig,), exec_body=lambda ns: ns.update(
    {s.name: _trait(s) for s in SETTINGS} | {"__doc__": _ForgeConfig.__doc__,
                                            "__module__": __name__}))

__all__ = ["BY_NAME", "ENV", "Forge"]
