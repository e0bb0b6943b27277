"""Calls of the REST API through pytest-jupyter's ``jp_fetch``, and what the store says the
answers must hold — read through the store's own API and the seed's filterCompacted, not the
SQL views the server uses."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from forge_jupyter.message import Message, StepFinishPart
from forge_jupyter.session.view import filter_compacted
from forge_jupyter.store.base import Store

Fetch = Callable[..., Awaitable[Any]]

TENANT, OTHER = "alice", "bob"


NOTEBOOK = "work/analysis.ipynb"


ODD_TITLE = "Ünïcode CAFÉ 数据: 100% sure_thing, 'quoted' -- ; done"


LONG = 230


def words(tag: str, n: int = 12) -> str:
    """``n`` distinct words (litellm refuses a stream that repeats one chunk)."""
    return " ".join(f"{tag}-{i}" for i in range(n))


async def get(jp_fetch: Fetch, *path: str, **params: Any) -> Any:
    response = await jp_fetch("forge", "api", *path, params=params)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.body)


async def refused(jp_fetch: Fetch, code: int, *path: str, **kwargs: Any) -> dict[str, Any]:
    """The JSON error body of a request answered with ``code``."""
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("forge", "api", *path, **kwargs)
    assert caught.value.code == code, caught.value.response.body
    return json.loads(caught.value.response.body) if caught.value.response.body else {}


async def every_page(jp_fetch: Fetch, path: tuple[str, ...], key: str, **params: Any
                     ) -> tuple[list[dict[str, Any]], int]:
    """Every item of a paged list, following ``next_cursor`` to the end; and how many pages."""
    items: list[dict[str, Any]] = []
    pages, cursor = 0, None
    while True:
        page = await get(jp_fetch, *path, **params, **({"cursor": cursor} if cursor else {}))
        items += page[key]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            return items, pages
        assert pages < 1000, "the cursor never reached the end"


def every_session(store: Store) -> list[str]:
    ids, cursor = [], None
    while True:
        page = store.list_sessions(cursor=cursor)
        ids += [s.id for s in page.items]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def superseded(store: Store, session_id: str) -> dict[str, bool]:
    """Message id → taken out of the model's view by a compaction (the seed's filterCompacted)."""
    timeline = store.read_timeline(session_id)
    visible = {m.id for m in filter_compacted(reversed(timeline))}
    return {m.id: m.id not in visible for m in timeline}


def steps_of(store: Store, session_id: str) -> list[tuple[Message, StepFinishPart]]:
    """(assistant message, step-finish part) of every model call the session itself made."""
    return [(m, p) for m in store.read_timeline(session_id) if m.session_id == session_id
            for p in m.parts if isinstance(p, StepFinishPart)]


def totals_of(steps: list[tuple[Message, StepFinishPart]]) -> dict[str, Any]:
    known = [p.cost for _, p in steps if p.cost is not None]
    return {
        "cost": pytest.approx(sum(known)) if steps else 0,
        "input_tokens": sum(p.tokens.input for _, p in steps),
        "output_tokens": sum(p.tokens.output for _, p in steps),
        "turns": len({m.parent_id for m, _ in steps}),
        "steps": len(steps),
        "unpriced_steps": len(steps) - len(known),
    }
