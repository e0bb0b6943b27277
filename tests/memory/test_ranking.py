"""Ranking of the hybrid memory search on a fixture of memory files (issue 15, Tests)."""

from __future__ import annotations

import pytest

from forge_jupyter.memory import LongTermMemory, Weights
from tests.memory.memory_fixture import TODAY, write_fixture


@pytest.mark.parametrize(("query", "file", "line"), [
    ("where do the sales figures live", "MEMORY.md", 4),
    ("who owns the churn model", "MEMORY.md", 12),
    ("which region had the highest revenue", "2026-11-12.md", 14),
    ("monthly churn percent", "2026-11-28.md", 13),
    ("how do I deploy the dashboard with make release", "notes/deploy.md", 3),
    ("polars or pandas for big joins", "MEMORY.md", 8),
])
def test_the_known_best_match_comes_first(keyword_memory, query, file, line):
    result = keyword_memory.search(query, k=3, today=TODAY)
    best = result.hits[0]
    assert (best.path, best.start_line <= line <= best.end_line) == (file, True), result.hits
    assert best.score > result.hits[1].score if len(result.hits) > 1 else True
    assert all(h.score > 0 for h in result.hits)


def test_decay_orders_otherwise_equal_matches_by_recency(store, tmp_path):
    same = "The forecast model uses a 28-day rolling window.\n"
    folder = write_fixture(tmp_path / "mem", {"2026-11-02.md": same, "2026-11-29.md": same,
                                              "2026-11-16.md": same, "2026-11-23-2.md": same})
    memory = LongTermMemory(store, folder, weights=Weights(half_life_days=7))
    hits = memory.search("forecast rolling window", k=4, today=TODAY).hits
    assert [h.path for h in hits] == ["2026-11-29.md", "2026-11-23-2.md", "2026-11-16.md",
                                      "2026-11-02.md"]
    assert [round(h.decay, 6) for h in hits] == [round(0.5 ** (d / 7), 6) for d in (1, 7, 14, 28)]
    assert len({h.keyword for h in hits}) == 1  # equal matches: only the age tells them apart


def test_evergreen_files_do_not_decay_and_the_half_life_is_configurable(store, tmp_path):
    same = "The quarterly board deck is due on the first Monday.\n"
    folder = write_fixture(tmp_path / "mem", {"MEMORY.md": same, "2026-11-16.md": same})
    slow = LongTermMemory(store, folder, weights=Weights(half_life_days=14))
    hits = {h.path: h for h in slow.search("board deck due", today=TODAY).hits}
    assert hits["MEMORY.md"].decay == 1.0 and hits["2026-11-16.md"].decay == pytest.approx(0.5)
    flat = LongTermMemory(store, folder, weights=Weights(half_life_days=0))
    assert {h.decay for h in flat.search("board deck due", today=TODAY).hits} == {1.0}


def test_with_no_provider_the_search_is_keyword_only_and_says_so(keyword_memory):
    result = keyword_memory.search("churn model", today=TODAY)
    assert result.mode == "keyword" and result.hits
    assert "no embedding provider is configured" in result.note
    assert "Forge.memory_embedding_model" in result.note
    assert all(h.vector is None for h in result.hits)


def test_a_query_with_no_match_returns_nothing(keyword_memory):
    assert keyword_memory.search("zyzzyva quokka", today=TODAY).hits == []


@pytest.mark.parametrize("bad", [
    {"keyword": -1.0}, {"vector": float("nan")}, {"half_life_days": float("inf")},
    {"keyword": 0.0, "vector": 0.0},
])
def test_weights_are_checked(bad):
    with pytest.raises(ValueError):
        Weights(**bad)


def hybrid(store, folder, server, **kw) -> LongTermMemory:
    return LongTermMemory(store, folder, embedding_model="openai/fake-embedding",
                          litellm_kwargs={"api_base": server.openai_base, "api_key": "sk-fake"},
                          **kw)


def test_hybrid_search_embeds_through_litellm_and_ranks_the_best_first(store, folder, fake_model_server):
    memory = hybrid(store, folder, fake_model_server)
    result = memory.search("monthly churn percent", k=3, today=TODAY)
    assert result.mode == "hybrid" and result.note is None
    assert result.hits[0].path == "2026-11-28.md"
    assert all(h.vector is not None for h in result.hits)
    # every chunk was embedded once, then the query: over HTTP, through litellm
    embedded = [t for r in fake_model_server.embedding_requests for t in r["input"]]
    assert embedded[-1] == "monthly churn percent"
    assert memory.last_sync.embedded == len(embedded) - 1 > 0
    memory.search("churn", today=TODAY)  # nothing changed: only the query is embedded
    assert [r["input"] for r in fake_model_server.embedding_requests[-1:]] == [["churn"]]


def test_the_score_is_the_weighted_sum_times_the_decay(store, folder, fake_model_server):
    for wk, wv in ((0.0, 1.0), (1.0, 0.0), (0.3, 0.7)):
        memory = hybrid(store, folder, fake_model_server, weights=Weights(keyword=wk, vector=wv))
        result = memory.search("churn model owner", k=10, today=TODAY)
        assert result.mode == ("hybrid" if wv else "keyword") and result.hits
        assert result.note is None  # a vector weight of 0 is a choice, not a failure
        for h in result.hits:
            assert h.score == pytest.approx((wk * h.keyword + wv * (h.vector or 0.0)) * h.decay)
        assert max(h.keyword for h in result.hits) == pytest.approx(1.0)  # scaled to the best


def test_a_failing_embedding_call_falls_back_to_keywords_and_says_why(store, folder, fake_model_server):
    fake_model_server.embedding_status = 500
    memory = hybrid(store, folder, fake_model_server)
    result = memory.search("who owns the churn model", today=TODAY)
    assert result.mode == "keyword" and result.hits[0].path == "MEMORY.md"
    assert "embedding call to openai/fake-embedding failed" in result.note
    asked = len(fake_model_server.embedding_requests)
    memory.search("churn", today=TODAY)  # a failed provider is not asked again at once
    assert len(fake_model_server.embedding_requests) == asked
    fake_model_server.embedding_status = 200
    memory.embedder._failed_at = 0.0  # the retry pause has passed
    healed = memory.search("who owns the churn model", today=TODAY)
    assert healed.mode == "hybrid"  # and the chunks indexed meanwhile got their vectors
    assert not memory.index.unembedded("openai/fake-embedding", 10)


def test_the_persons_dataframe_keeps_its_columns_and_dtypes_with_or_without_hits(tmp_path):
    from forge_jupyter import Forge
    from forge_jupyter.frame_columns import MEMORY_HITS

    folder = write_fixture(tmp_path / "mem")
    with Forge(db=":memory:", memory_dir=folder, builtin_tools=False) as forge:
        for query, rows in (("churn model", 3), ("zyzzyva", 0)):
            frame = forge.memory_search(query, k=3)
            assert len(frame) == rows and frame.dtypes.astype(str).to_dict() == {
                c: str(t) for c, t in MEMORY_HITS.items()}
            assert frame.attrs["mode"] == "keyword" and "no embedding" in frame.attrs["note"]
