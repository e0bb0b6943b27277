"""Provider-native web search streams, written as the providers document them: Anthropic's
``web_search_20250305`` server tool (server_tool_use, web_search_tool_result, text with
citations_delta) and an OpenAI search model's chat chunks with ``url_citation`` annotations.
The fake model server replays them byte for byte (``Turn.replay``)."""

from __future__ import annotations

import json
from pathlib import Path

QUERY = "python 3.13 release date"
RESULT_URL = "https://www.python.org/downloads/release/python-3130/"
RESULT_TITLE = "Python Release Python 3.13.0"
CITED = "Python 3.13.0 is the newest major release of the Python programming language"
ANSWER_1 = "Python 3.13.0 was released on "
ANSWER_2 = "7 October 2024."


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, payload in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(payload)}\n\n")
    return "".join(out).encode()


def anthropic_search(model: str = "claude-sonnet-4-5-20250929", error: str | None = None) -> bytes:
    """The stream of one search; with ``error`` its result is a web_search_tool_result_error."""
    srv = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"
    citation = {"type": "web_search_result_location", "cited_text": CITED, "url": RESULT_URL,
                "title": RESULT_TITLE, "encrypted_index": "EpcBCioIAhgBIiQyNjU4"}
    return _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_01G4s9", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 2679, "output_tokens": 3}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Let me search."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "server_tool_use", "id": srv, "name": "web_search", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps({"query": QUERY})}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("content_block_start", {"type": "content_block_start", "index": 2, "content_block": {
            "type": "web_search_tool_result", "tool_use_id": srv, "content": {
                "type": "web_search_tool_result_error", "error_code": error} if error else [
                {"type": "web_search_result", "title": RESULT_TITLE, "url": RESULT_URL,
                 "encrypted_content": "EqgfCioIARgBIiQ3YTAw", "page_age": "October 7, 2024"},
                {"type": "web_search_result", "title": "What's New In Python 3.13",
                 "url": "https://docs.python.org/3/whatsnew/3.13.html",
                 "encrypted_content": "Eo8FCioIARgBIiQ5", "page_age": None}]}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        ("content_block_start", {"type": "content_block_start", "index": 3,
                                 "content_block": {"type": "text", "text": "", "citations": []}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 3,
                                 "delta": {"type": "citations_delta", "citation": citation}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 3,
                                 "delta": {"type": "text_delta", "text": ANSWER_1}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 3,
                                 "delta": {"type": "text_delta", "text": ANSWER_2}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 3}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 120,
                                     "server_tool_use": {"web_search_requests": 1}}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def openai_search(model: str = "gpt-4o-search-preview") -> bytes:
    base = {"id": "chatcmpl-Bx1", "object": "chat.completion.chunk", "created": 1745000000,
            "model": model}
    text = ANSWER_1 + ANSWER_2
    start = 0
    end = len(text)
    annotation = {"type": "url_citation", "url_citation": {
        "start_index": start, "end_index": end, "title": RESULT_TITLE, "url": RESULT_URL}}

    def chunk(delta: dict, finish: str | None = None, **extra) -> tuple[None, dict]:
        return None, {**base, "choices": [{"index": 0, "delta": delta,
                                           "finish_reason": finish}], **extra}

    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": ANSWER_1}),
              chunk({"content": ANSWER_2}), chunk({"annotations": [annotation]}),
              chunk({}, "stop"),
              (None, {**base, "choices": [], "usage": {"prompt_tokens": 20,
                                                       "completion_tokens": 12,
                                                       "total_tokens": 32}})]
    return _sse(events) + b"data: [DONE]\n\n"


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
