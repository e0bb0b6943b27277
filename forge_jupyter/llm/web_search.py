"""Provider-native web search: asked for where litellm says the model has it, and what comes
back read off litellm's chunks as stream events.

Requested with litellm's one spelling, ``web_search_options`` — sent as is to OpenAI's search
models, turned into Anthropic's ``web_search_20250305`` server tool by litellm. The provider
runs the search itself, so nothing here executes anything; the stream carries what happened:
Anthropic's ``server_tool_use`` and ``web_search_tool_result`` blocks (litellm passes them in
``delta.provider_specific_fields`` as ``server_tool_calls`` and ``web_search_results``, each
list cumulative), its ``citations_delta`` (``citation``), and OpenAI's ``url_citation``
annotations (``delta.annotations``). They become ``ServerToolCall``/``ServerToolResult`` (a tool
part marked ``server``, never run here and never sent back as a call of ours) and ``Citation``
(kept, as the wire had it, on the text part it belongs to).
"""

from __future__ import annotations

from typing import Any

from .events import Citation, ServerToolCall, ServerToolResult, StreamEvent

SEARCH_FLAG = "search"  # Forge(flags=["search"]): webfetch, and this where the model has it
SEARCH_OPTIONS = {"search_context_size": "medium"}


def supports_web_search(model: str) -> bool:
    """Whether litellm's model table says ``model`` can search the web itself."""
    from .loading import litellm

    try:
        return bool(litellm().supports_web_search(model=model))
    except Exception:  # a model litellm does not know: no
        return False


class ServerTools:
    """What one model round's chunks say about the provider's own tools; each call and
    result once, in the order they arrived."""

    def __init__(self) -> None:
        self.calls: set[str] = set()
        self.results: set[str] = set()

    def feed(self, delta: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        extra = getattr(delta, "provider_specific_fields", None)
        if isinstance(extra, dict):
            for call in extra.get("server_tool_calls") or ():
                call = _plain(call)
                call_id = str(call.get("id") or "")
                if call_id and call_id not in self.calls:
                    self.calls.add(call_id)
                    fn = call.get("function") or {}
                    out.append(ServerToolCall(call_id, str(fn.get("name") or "web_search"),
                                              str(fn.get("arguments") or "")))
            for block in extra.get("web_search_results") or ():
                block = _plain(block)
                call_id = str(block.get("tool_use_id") or "")
                if call_id and call_id not in self.results:
                    self.results.add(call_id)
                    out.append(ServerToolResult(call_id, block))
            if isinstance(extra.get("citation"), dict):
                out.append(Citation(_plain(extra["citation"])))
        for annotation in getattr(delta, "annotations", None) or ():
            out.append(Citation(_plain(annotation)))
        return out


def _plain(value: Any) -> dict[str, Any]:
    """A wire object as a plain dict (litellm hands some over as pydantic models)."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else dict(value)


def result_text(block: dict[str, Any]) -> tuple[str, str | None]:
    """(what the person and the model read of a search result, an error or None)."""
    content = block.get("content")
    if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
        return "", f"The provider's web search failed: {content.get('error_code') or content}."
    if isinstance(content, dict):  # one fetched page (web_fetch_tool_result)
        content = [content]
    lines = []
    for i, item in enumerate(content or (), start=1):
        if isinstance(item, dict):
            age = f" ({item['page_age']})" if item.get("page_age") else ""
            lines.append(f"{i}. {item.get('title') or '(untitled)'} — {item.get('url')}{age}")
    return "\n".join(lines) or "No results.", None
