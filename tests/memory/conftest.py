"""Long-term memory fixtures: a memory folder of known files, a store of each backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_jupyter.memory import LongTermMemory, Weights
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from tests.memory.memory_fixture import FIXTURE, TODAY, write_fixture  # noqa: F401 - fixtures use them


@pytest.fixture(params=["memory", "duckdb"])
def store(request, tmp_path):
    made = MemoryStore() if request.param == "memory" else DuckDBStore(tmp_path / "forge.duckdb")
    yield made
    made.close()


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_fixture(tmp_path / "mem")


@pytest.fixture
def keyword_memory(store, folder) -> LongTermMemory:
    """Memory with no embedding provider (no key in the environment, none configured)."""
    return LongTermMemory(store, folder, embedding_model=None, litellm_kwargs={},
                          weights=Weights())


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch):
    """A developer's own key must not turn a keyword-only test into a network call."""
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
