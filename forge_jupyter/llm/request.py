"""Building a model request: the session's Messages in litellm's (OpenAI) format, and the
keyword arguments of one streamed call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..message import FilePart, Message, ToolPart
from .request_images import BOUNDARY, ImagePlan, ImageSending, pasted


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def to_model_messages(view: list[Message], *, model: str,
                      images: ImageSending | None = None) -> list[dict[str, Any]]:
    """Messages in litellm's (OpenAI) format. Unfinished tool calls are never sent. With
    ``images``, a vision model gets the images the calls showed (request_images.py): inside
    the tool result for Anthropic (its tool_result takes images), else in a user message right
    after the step's tool results (OpenAI's tool messages take text only)."""
    anthropic = provider_of(model) == "anthropic"
    plan = ImagePlan.of(view, model, images)
    out: list[dict[str, Any]] = []
    for message in view:
        if message.role == "user":
            texts: list[str] = []
            pictures: list[dict[str, Any]] = []
            for p in message.parts:
                if p.type == "text" and p.text:
                    texts.append(p.text)
                elif isinstance(p, FilePart) and p.image is not None:  # pasted with the prompt
                    shown = pasted(p, model, images)
                    if isinstance(shown, str):
                        texts.append(shown)
                    else:
                        pictures.append(shown)
                elif p.type == "file":
                    texts.append(f"[attached file: {p.path or p.url} ({p.mime})]")
                elif p.type == "compaction":
                    texts.append(
                        "Summarize our conversation so far for continuing the work "
                        "(this is a context compaction)."
                    )
                elif isinstance(p, ToolPart) and p.is_terminal:  # the person ran it (shell)
                    texts.append(person_ran(p))
            if pictures:
                out.append({"role": "user", "content": [
                    {"type": "text", "text": "\n\n".join(texts)}, *pictures]})
            elif texts:
                out.append({"role": "user", "content": "\n\n".join(texts)})
            continue
        texts = [p.text for p in message.parts if p.type == "text" and p.text]
        # the provider's own searches (metadata.server) were never calls of ours: its text,
        # which cites them, is what the model reads back
        tools = [p for p in message.parts if isinstance(p, ToolPart) and p.is_terminal
                 and not p.metadata.get("server")]
        entry: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if anthropic:
            blocks = [
                {"type": "thinking", "thinking": p.text, "signature": p.metadata["signature"]}
                for p in message.parts
                if p.type == "reasoning" and p.metadata.get("signature")
            ]
            if blocks:
                entry["thinking_blocks"] = blocks
        if tools:
            entry["tool_calls"] = [
                {
                    "id": t.call_id,
                    "type": "function",
                    "function": {
                        "name": t.tool,
                        # Invalid JSON is never sent back (Anthropic's transform rejects it
                        # client-side, poisoning every later request); the tool's error
                        # message quotes what the model wrote instead.
                        "arguments": json.dumps(t.input) if t.raw_input is None else "{}",
                    },
                }
                for t in tools
            ]
        if entry["content"] is None and not tools:
            continue  # an empty or failed round: nothing for the model to read
        out.append(entry)
        hoisted: list[dict[str, Any]] = []
        shown_by: list[str] = []
        for t in tools:
            content = t.output if t.state == "completed" else f"Error: {t.error}"
            pictures, notes = plan.for_call(message, t.call_id)
            text = "\n".join([content or "", *notes]) if notes else content or ""
            if pictures and anthropic:
                out.append({"role": "tool", "tool_call_id": t.call_id,
                            "content": [{"type": "text", "text": text or "(no output)"},
                                        *pictures]})
                continue
            out.append({"role": "tool", "tool_call_id": t.call_id, "content": text})
            hoisted.extend(pictures)
            shown_by.extend([t.call_id] * len(pictures))
        if hoisted:
            which = ", ".join(f"{n} from {c}" for c, n in _counts(shown_by))
            out.append({"role": "user", "content": [
                {"type": "text", "text": BOUNDARY.format(which=which)}, *hoisted]})
    return out


def _counts(ids: list[str]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
    return list(seen.items())


def person_ran(part: ToolPart) -> str:
    """A command the person ran themselves (``session.shell``), as the model reads it: said
    to be theirs, not a call of the model's, with its output and how it ended."""
    command = part.input.get("command", "") if isinstance(part.input, dict) else ""
    body = part.output if part.state == "completed" else f"Error: {part.error}"
    return (f"[I ran this {part.tool} command myself in {part.input.get('directory', '?')}; it "
            f"is not a tool call of yours]\n$ {command}\n{body or ''}")


@dataclass
class LLMRequest:
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)  # api_base, api_key, temperature, …
    # Characters of output (text, reasoning, tool arguments) past which the step is stopped
    # here, whatever the server does; None: no local stop. Never sent.
    output_cap: int | None = None
    # Read the answer lean (llm/lean.py) where the route allows; never sent.
    lean: bool = False

    def wire_messages(self) -> list[dict[str, Any]]:
        """The messages as sent: the system prompt first, when there is one."""
        return [{"role": "system", "content": self.system}, *self.messages] if self.system else self.messages

    def litellm_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "max_retries": 0,  # the OpenAI client would silently retry 429s twice
            **self.params,
            "model": self.model,
            "messages": self.wire_messages(),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.tools:
            kwargs["tools"] = self.tools
        return kwargs
