"""Fixtures for the fake model server's own tests: real litellm, over loopback HTTP."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from forge_jupyter.testing.fixtures import fake_model_server  # noqa: F401 - re-exported fixture

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import


@dataclass
class Streamed:
    """What litellm yielded for one streamed request, assembled by tool-call index."""

    chunks: list[Any] = field(default_factory=list)
    error: BaseException | None = None
    text: str = ""
    reasoning: str = ""
    tool_calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Any = None

    def add(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        if getattr(chunk, "usage", None):
            self.usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            self.text += delta.content or ""
            self.reasoning += getattr(delta, "reasoning_content", None) or ""
            for tc in delta.tool_calls or []:
                call = self.tool_calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = call["id"] or tc.id or ""
                call["name"] = call["name"] or tc.function.name or ""
                call["arguments"] += tc.function.arguments or ""
            self.finish_reason = choice.finish_reason or self.finish_reason


@pytest.fixture(scope="session")
def litellm() -> Any:
    import litellm as module

    module.suppress_debug_info = True
    return module


@pytest.fixture(scope="session")
def run() -> Iterator[Callable[[Awaitable[Any]], Any]]:
    """Run a coroutine on one event loop shared by the session (litellm caches async clients)."""
    loop = asyncio.new_event_loop()
    yield loop.run_until_complete
    loop.close()


@pytest.fixture(scope="session")
def stream(litellm: Any, run: Callable[[Awaitable[Any]], Any]) -> Callable[..., Streamed]:
    """stream(server, protocol, messages=None, tools=None, **kwargs) -> Streamed (never raises)."""

    async def collect(
        server: Any, protocol: str, messages: Any, tools: Any, kwargs: Any
    ) -> Streamed:
        out = Streamed()
        try:
            response = await litellm.acompletion(
                **server.model_kwargs(protocol),
                messages=messages or [{"role": "user", "content": "hi"}],
                tools=tools,
                stream=True,
                stream_options={"include_usage": True},
                max_retries=0,
                **kwargs,
            )
            async for chunk in response:
                out.add(chunk)
        except Exception as exc:  # the tests look at what was raised
            out.error = exc
        return out

    def stream(
        server: Any, protocol: str, messages: Any = None, tools: Any = None, **kwargs: Any
    ) -> Streamed:
        return run(collect(server, protocol, messages, tools, kwargs))

    return stream
