"""Which model a prompt uses (DESIGN §9) and the offline demo model.

In order: the prompt's option, the session's, the configuration, the first provider key
found in the environment, a local Ollama server if one answers, else the offline demo model
(``forge_jupyter.demo``) — announced as such, never silently.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .demo import DEMO_MODEL

if TYPE_CHECKING:
    from .demo import DemoServer

# Provider key variables litellm reads, and a sensible default model for each.
PROVIDER_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4o-mini"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("MISTRAL_API_KEY", "mistral/mistral-small-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("GROQ_API_KEY", "groq/llama-3.3-70b-versatile"),
    ("OPENROUTER_API_KEY", "openrouter/openai/gpt-4o-mini"),
    ("XAI_API_KEY", "xai/grok-3-mini"),
)
OLLAMA_URL = "http://127.0.0.1:11434"
# Sent as the key to a server at ``api_base`` when no key is configured: local OpenAI-compatible
# servers (llama.cpp, vLLM, LM Studio) need none, but litellm's OpenAI client refuses to send a
# request without one ("Missing credentials", reported as HTTP 500). Never stored, never shown.
PLACEHOLDER_KEY = "sk-forge-no-key-needed"
MAX_TOKENS_HINT = ("Give the most tokens one model step may generate, e.g. 2048 (Forge.max_tokens / "
                   "FORGE_MAX_TOKENS / %%forge --max-tokens), or none for the model server's default.")


@dataclass
class ModelChoice:
    model: str
    params: dict[str, Any] = field(default_factory=dict)
    source: str = "config"  # prompt, session, config, api_base, environment, ollama, demo
    notice: str | None = None  # what to tell the person (e.g. the demo model is in use)


_demo_lock = threading.Lock()
_demo_server: DemoServer | None = None


def demo_server() -> DemoServer:
    """The process-wide offline demo model server, started on first use."""
    global _demo_server
    with _demo_lock:
        if _demo_server is None:
            from .demo import DemoServer

            _demo_server = DemoServer().start()
        return _demo_server


def _ollama_model() -> str | None:
    try:
        with urllib.request.urlopen(OLLAMA_URL + "/api/tags", timeout=0.3) as r:
            import json

            models = json.load(r).get("models") or []
    except Exception:
        return None
    return f"ollama/{models[0]['name']}" if models else None


_SERVED_ID = re.compile(r"[A-Za-z0-9._:/@-]{1,200}")  # a model id a server lists, as we accept it


def served_model(api_base: str, timeout: float = 2.0) -> str | None:
    """The first model the OpenAI-compatible server at ``api_base`` lists (``GET …/models``,
    which llama.cpp, vLLM, LM Studio and Ollama's /v1 all answer), as a litellm name; None when
    it does not answer or lists nothing usable. The answer is the server's: an id that is not a
    plain model name is not used."""
    import json

    request = urllib.request.Request(api_base.rstrip("/") + "/models")
    if os.environ.get("FORGE_API_KEY"):
        request.add_header("Authorization", f"Bearer {os.environ['FORGE_API_KEY']}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            listed = json.loads(r.read(1 << 20)).get("data") or []
        first = listed[0].get("id") if isinstance(listed[0], dict) else None
    except Exception:
        return None
    return f"openai/{first}" if isinstance(first, str) and _SERVED_ID.fullmatch(first) else None


class ServedModels:
    """The model each server at an ``api_base`` lists, asked once for a Forge's life rather
    than at every prompt (a GET that may take its timeout). A server that did not answer, or
    listed nothing usable, is not remembered: the next prompt asks it again."""

    def __init__(self) -> None:
        self._found: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, api_base: str) -> str | None:
        key = api_base.rstrip("/")
        with self._lock:
            known = self._found.get(key)
        if known is not None:
            return known
        found = served_model(api_base)
        if found is not None:
            with self._lock:
                self._found[key] = found
        return found


def resolve(*candidates: tuple[str | None, str], probe_ollama: bool = True,
            api_base: str | None = None, served: ServedModels | None = None) -> ModelChoice:
    """The first model named by ``candidates`` ((model, source) pairs), else the fallbacks.

    With ``api_base`` set (a server of the person's own) and no model named, the model is the
    one that server lists — never a provider default or the demo model, which would send the
    prompt somewhere else than the person configured. ``served``: the Forge's memory of
    what each server listed (without it, the server is asked every time)."""
    for model, source in candidates:
        if model:
            if model == DEMO_MODEL:
                break
            return ModelChoice(model, source=source)
    else:
        if api_base:
            found = served.get(api_base) if served is not None else served_model(api_base)
            if found is None:
                from .errors import InvalidOption

                raise InvalidOption(
                    f"Forge.api_base is {api_base!r} but no model is set, and that server did not "
                    "list one at GET …/models. Set Forge.model (FORGE_MODEL, or %%forge -m) to "
                    "the server's model name with the openai/ prefix, e.g. "
                    "'openai/qwen2.5-7b-instruct'.")
            return ModelChoice(found, source="api_base", notice=(
                f"Using {found}, the model the server at Forge.api_base lists; set Forge.model "
                "to choose another."))
        for var, model in PROVIDER_DEFAULTS:
            if os.environ.get(var):
                return ModelChoice(model, source="environment",
                                   notice=f"Using {model} (found {var}); set Forge.model to choose.")
        if probe_ollama:
            found = _ollama_model()
            if found:
                return ModelChoice(found, params={"api_base": OLLAMA_URL}, source="ollama",
                                   notice=f"Using the local Ollama model {found}.")
    server = demo_server()
    return ModelChoice(
        DEMO_MODEL,
        params={"api_base": server.openai_base, "api_key": "sk-forge-demo"},
        source="demo",
        notice=("No model is configured and no provider key was found: using the OFFLINE DEMO "
                "model. Set e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY, or Forge.model, for real answers."),
    )


def key_variables(model: str) -> list[str]:
    """The environment variables litellm reads ``model``'s key from (``OPENAI_API_KEY``, …),
    whether set or not; empty for a provider that needs none or that litellm does not know."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    known = [var for var, default in PROVIDER_DEFAULTS if default.split("/", 1)[0] == provider]
    if known:
        return known
    from .llm import litellm

    try:
        return list(litellm().validate_environment(model=model).get("missing_keys") or [])
    except Exception:
        return []


def with_key(model: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a key for a server at ``api_base`` that has none configured:
    ``FORGE_API_KEY`` if set, else ``PLACEHOLDER_KEY``. Unchanged when there is no api_base, a
    key is given, or the provider's own variable is set (a proxy may need that one)."""
    if not params.get("api_base") or params.get("api_key"):
        return params
    if os.environ.get("FORGE_API_KEY"):
        return {**params, "api_key": os.environ["FORGE_API_KEY"]}
    from .llm import litellm

    try:
        found = litellm().validate_environment(model=model, api_base=params["api_base"]).get(
            "keys_in_environment")
    except Exception:  # a provider litellm cannot check: assume the key is missing
        found = False
    return params if found else {**params, "api_key": PLACEHOLDER_KEY}
