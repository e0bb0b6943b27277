"""The offline demo model: deterministic answers by rule, for a notebook with no API key.

Rules, first match wins:
1. the conversation ends with tool results → quote the first lines of each and stop;
2. a tool named `variables` is offered → call it with {};
3. a tool named `python` is offered → run a small harmless snippet;
4. otherwise → echo what the user asked.
Every reply starts by saying that it is the demo model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from forge_jupyter.testing.turns import Event, Turn, text, tool_call

if TYPE_CHECKING:
    from forge_jupyter.testing.server import RecordedRequest

ANNOUNCEMENT = "I'm the offline demo model (no API key was found), so I answer by simple rules."
HINT = "Set OPENAI_API_KEY or ANTHROPIC_API_KEY (or start Ollama) to talk to a real model."
PYTHON_SNIPPET = (
    "import platform, sys\n"
    'print(f"Hello from the offline demo model: Python {platform.python_version()} on {sys.platform}")'
)
QUOTED_LINES = 5


def demo_turn(request: RecordedRequest, chunk_delay: float = 0.0) -> Turn:
    """The demo model's answer to `request` (either protocol)."""
    results = _trailing_tool_results(request.messages)
    offered = request.tools
    events: list[Event]
    if results:
        parts = [ANNOUNCEMENT]
        for name, output in results:
            parts.append(f"The `{name}` tool returned:\n\n{_quote(output)}")
        parts.append(HINT)
        events = [text("\n\n".join(parts))]
    elif "variables" in offered:
        events = [
            text(f"{ANNOUNCEMENT} Let me look at the variables in your notebook."),
            tool_call("variables", {}),
        ]
    elif "python" in offered:
        param = _code_parameter(request.body.get("tools") or [])
        events = [
            text(f"{ANNOUNCEMENT} Let me run a little Python to show how tools work."),
            tool_call("python", {param: PYTHON_SNIPPET}),
        ]
    else:
        asked = _last_user_text(request.messages)
        asked = asked if len(asked) <= 200 else asked[:200] + "…"
        echo = f"You asked: “{asked}”." if asked else "You sent an empty message."
        events = [text(f"{ANNOUNCEMENT} {echo} I can't really answer that. {HINT}")]
    return Turn(events, chunk_delay=chunk_delay)


def _text_of(content: Any) -> str:
    """Text of a message or tool-result content: a str or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text_of(b.get("text", b.get("content"))) for b in content if isinstance(b, dict)
        )
    return "" if content is None else str(content)


def _trailing_tool_results(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(tool name, output) of the tool results that end the conversation, in order."""
    names: dict[str, str] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:  # OpenAI assistant message
            names[call.get("id", "")] = call.get("function", {}).get("name", "tool")
        if isinstance(m.get("content"), list):  # Anthropic assistant content blocks
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    names[b.get("id", "")] = b.get("name", "tool")
    if not messages:
        return []
    last = messages[-1]
    if last.get("role") == "tool":
        trailing = []
        for m in reversed(messages):
            if m.get("role") != "tool":
                break
            trailing.append(
                (
                    names.get(m.get("tool_call_id", ""), m.get("name") or "tool"),
                    _text_of(m.get("content")),
                )
            )
        return trailing[::-1]
    if last.get("role") == "user" and isinstance(last.get("content"), list):
        return [
            (names.get(b.get("tool_use_id", ""), "tool"), _text_of(b.get("content")))
            for b in last["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
    return []


def _quote(output: str) -> str:
    lines = output.strip().splitlines() or ["(no output)"]
    quoted = [f"> {line[:120]}" for line in lines[:QUOTED_LINES]]
    if len(lines) > QUOTED_LINES:
        quoted.append(f"> … ({len(lines) - QUOTED_LINES} more lines)")
    return "\n".join(quoted)


def _code_parameter(tools: list[dict[str, Any]]) -> str:
    """The python tool's code argument: the first required string property, else `code`."""
    for t in tools:
        fn = t.get("function", t)
        if fn.get("name") != "python":
            continue
        schema = fn.get("parameters") or fn.get("input_schema") or {}
        props = schema.get("properties") or {}
        for name in [*(schema.get("required") or []), *props]:
            if (props.get(name) or {}).get("type") == "string":
                return name
    return "code"


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return _text_of(m.get("content")).strip()
    return ""
