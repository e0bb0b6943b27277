"""The parts of what a provider did itself in a model round (its web search), as the wire said.

A ``server_tool_use`` becomes a tool part marked ``metadata.server`` — running when its call
arrives, completed (or failed) when its result block arrives, the block kept whole under
``metadata.result`` (Anthropic's encrypted contents included) and its titles and URLs as the
output a person reads. Such a part is never run here, never sent back as a call of ours
(llm/request.py) and never pending at the end of a round. Citations (Anthropic's ``citation``,
OpenAI's ``url_citation``) are kept as received under the ``citations`` of the text part they
belong to: the open one, else the next one, else the round's last.
"""

from __future__ import annotations

from typing import Any

from ..llm.events import Citation, ServerToolCall, ServerToolResult
from ..llm.web_search import result_text
from ..message import ReasoningPart, TextPart, ToolPart
from ..scrub import valid_data
from ..tools.arguments import parse_arguments
from .writer import Writer

NO_RESULT = "The provider sent no result for this search before the round ended."


class ServerParts:
    def __init__(self, writer: Writer, session_id: str, message_id: str) -> None:
        self.writer = writer
        self.session_id = session_id
        self.message_id = message_id
        self.calls: dict[str, ToolPart] = {}
        self.pending: list[dict[str, Any]] = []  # citations before their text opened
        self.last_text: TextPart | None = None

    def handle(self, ev: ServerToolCall | ServerToolResult | Citation,
               open_part: TextPart | ReasoningPart | None) -> None:
        if isinstance(ev, Citation):
            if isinstance(open_part, TextPart):
                open_part.metadata.setdefault("citations", []).append(ev.data)
            else:
                self.pending.append(ev.data)
        elif isinstance(ev, ServerToolCall):
            self.writer.update_part(self._call(ev.call_id, ev.name, ev.arguments))
        else:
            part = self.calls.get(ev.call_id) or self._call(
                ev.call_id, str(ev.block.get("type", "web_search")).removesuffix("_tool_result"), "")
            if part.is_terminal:
                return
            text, error = result_text(ev.block)
            meta = {"result": valid_data(ev.block)}
            self.writer.update_part(part.fail(error, **meta) if error else
                                    part.complete(text, title=_title(part), metadata=meta))

    def _call(self, call_id: str, name: str, arguments: str) -> ToolPart:
        part = ToolPart(session_id=self.session_id, message_id=self.message_id, call_id=call_id,
                        tool=name, metadata={"server": True})
        parsed = parse_arguments(name, arguments)  # the provider's call is bounded too
        if parsed.args is not None:
            part.input = parsed.args
        else:
            part.raw_input = parsed.kept
        self.calls[call_id] = part.start()
        return part

    def opened(self, part: TextPart | ReasoningPart) -> None:
        if isinstance(part, TextPart):
            self.last_text = part
            if self.pending:
                part.metadata["citations"], self.pending = self.pending, []

    def settle(self) -> None:
        """At the round's end: a search with no result fails; stray citations join the last
        text part."""
        for part in self.calls.values():
            if not part.is_terminal:
                self.writer.update_part(part.fail(NO_RESULT))
        if self.pending and self.last_text is not None:
            self.last_text.metadata.setdefault("citations", []).extend(self.pending)
            self.pending = []
            self.writer.update_part(self.last_text)


def _title(part: ToolPart) -> str:
    query = part.input.get("query") if isinstance(part.input, dict) else None
    return f"{part.tool}: {query}"[:200] if query else part.tool
