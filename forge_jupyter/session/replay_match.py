"""Which recorded turn a ``%%forge`` cell may replay (session/replay.py runs it).

A turn is a person's user message and the assistant messages that answered it (compaction
requests and summaries in between are left out: they shaped the context, not the answer). A
recording matches a cell when it is a finished turn of the same notebook and cell id, with the
same prompt text, the same agent, and the same turn before it — "the same point of the
session's history". Turns are compared by their *canonical* id: a faithful replay stands for
the turn it repeats (``metadata.replay.original``), so a notebook replayed twice still finds
its recordings; a replay that diverged and went on live stands for itself.

The "point" of a run is the canonical id of the turn before the cell (None at the start of a
history). The search is one SELECT over ``message`` and ``session_message`` (portable JSON
``->>``, every table under the tenant predicate), then a few timeline pages per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..message import Message, TextPart
from ..metadata_facts import ReplayMark
from ..store.base import Store, encode_cursor
from .view import is_person_turn

# Turns recorded in a notebook, newest first, with their prompt text (portable SQL: DuckDB and
# PostgreSQL alike read ``json ->> 'key'``); every table under the tenant predicate.
_CANDIDATES = """
SELECT sm.session_id, sm.pos, u.id, u.origin ->> 'cell_id' AS cell_id,
       (SELECT string_agg(p.data ->> 'text', '\n\n' ORDER BY p.id) FROM part p
        WHERE p.tenant_id = u.tenant_id AND p.message_id = u.id AND p.type = 'text'
          AND coalesce(p.data ->> 'synthetic', 'false') <> 'true') AS prompt
FROM message u
JOIN session_message sm ON sm.tenant_id = u.tenant_id AND sm.message_id = u.id
JOIN session s ON s.tenant_id = sm.tenant_id AND s.id = sm.session_id
WHERE u.tenant_id = ? AND u.role = 'user' AND s.deleted_at IS NULL
  AND u.origin ->> 'notebook' = ?
ORDER BY u.created_at DESC, u.id DESC, sm.session_id
LIMIT 2000
"""
_PAGE = 40


@dataclass
class Recording:
    """A finished turn found in a session's timeline."""

    user: Message
    answers: list[Message]  # the assistant messages of the turn, oldest first (no summaries)
    session_id: str  # the timeline it was found in
    position: int  # of ``user`` in that timeline
    before: str | None  # canonical id of the turn before it there; None: the first turn

    @property
    def canonical(self) -> str:
        return canonical_id(self.user, self.answers)

    @property
    def model(self) -> str | None:
        return next((a.model for a in reversed(self.answers) if a.model), None)

    @property
    def recorded_at(self) -> float:
        mark = self.user.replay
        return float(mark.recorded_at if mark and mark.recorded_at else self.user.created_at)


@dataclass
class Search:
    """What a search found: the recording, or why there is none (said to the person)."""

    recording: Recording | None
    why_not: str = ""


def prompt_text(user: Message) -> str:
    """The prompt as the person wrote it (the harness's synthetic text left out)."""
    return "\n\n".join(p.text for p in user.parts
                       if isinstance(p, TextPart) and not p.synthetic and p.text)


def faithful(user: Message, answers: list[Message]) -> bool:
    """Every answer of a replayed turn came from its recording (none diverged or went live)."""
    return (user.replay_of is not None and bool(answers)
            and all(a.replay_of is not None and not (a.replay and a.replay.diverged)
                    for a in answers))


def canonical_id(user: Message, answers: list[Message]) -> str:
    if faithful(user, answers):
        return str((user.replay and user.replay.original) or user.replay_of)
    return user.id


def finished(answers: list[Message]) -> bool:
    """The turn ended well: every answer completed, the last one not waiting on its tools."""
    return (bool(answers) and all(a.status == "completed" and a.error is None for a in answers)
            and answers[-1].finish != "tool-calls")


def _split(messages: list[Message]) -> list[tuple[Message, list[Message]]]:
    """Messages in timeline order → (person turn, its answers) pairs; what precedes the first
    person turn is dropped."""
    turns: list[tuple[Message, list[Message]]] = []
    for m in messages:
        if is_person_turn(m):
            turns.append((m, []))
        elif turns and m.role == "assistant" and not m.summary:
            turns[-1][1].append(m)
    return turns


def _page(store: Store, session_id: str, start: int, end: int) -> list[Message]:
    if end <= start:
        return []
    return store.timeline(session_id, cursor=encode_cursor(start), limit=end - start).items


def turn_at(store: Store, session_id: str, pos: int) -> tuple[Message, list[Message]] | None:
    """The turn whose person message is at ``pos`` (read forward to the next person turn)."""
    total = store.timeline_length(session_id)
    end, size = pos, _PAGE
    collected: list[Message] = []
    while end < total:
        page = _page(store, session_id, end, min(total, end + size))
        collected += page
        end += len(page)
        turns = _split(collected)
        if len(turns) > 1 or not page:
            break
        size *= 2
    turns = _split(collected)
    if not turns or turns[0][0].id != collected[0].id:
        return None
    return turns[0]


def point_before(store: Store, session_id: str, pos: int) -> str | None:
    """Canonical id of the last person turn before ``pos`` in the timeline; None if none."""
    start, size = pos, _PAGE
    tail: list[Message] = []
    while start > 0:
        first = max(0, start - size)
        tail = _page(store, session_id, first, start) + tail
        start = first
        turns = _split(tail)
        if turns:  # its answers lie between it and ``pos``: all read already
            user, answers = turns[-1]
            return canonical_id(user, answers)
        size *= 2
    return None


def point_of(store: Store, session_id: str) -> str | None:
    """Where a session's history stands now: the canonical id of its last person turn."""
    with store.hold():
        return point_before(store, session_id, store.timeline_length(session_id))


def candidates(store: Store, notebook: str) -> list[tuple[str, int, str, str | None, str]]:
    """(timeline session, position, user message id, cell id, prompt) of every turn recorded
    in the notebook, newest first."""
    with store.reading() as con:
        rows = con.execute(_CANDIDATES, [store.tenant_id, notebook]).fetchall()
    return [(str(s), int(p), str(m), c, t or "") for s, p, m, c, t in rows]


def find_recording(store: Store, *, notebook: str | None, cell_id: str | None, text: str,
                   agent: str, point: str | None, texts: tuple[str, ...] = ()) -> Search:
    """The newest finished recording of this cell with this prompt at ``point``.

    The cell's id is compared when both sides know it; nbclient and nbconvert send none, so
    there the same prompt at the same point of the same notebook's history is the same turn.
    ``texts``: other spellings the stored prompt may have (the prompt scrubbed of secrets)."""
    if not notebook:
        return Search(None, "the notebook's path is not known here, so no recording can be "
                            "matched to it (run it in JupyterLab, run the saved notebook from "
                            "its folder, or set JPY_SESSION_NAME to the notebook's path)")
    found = [c for c in candidates(store, notebook)
             if cell_id is None or c[3] is None or c[3] == cell_id]
    if not found:
        return Search(None, "no turn of this cell is recorded")
    wanted = {text, *texts}
    reasons: set[str] = set()
    seen: set[tuple[str, int]] = set()
    with store.hold():
        for session_id, pos, _, _, prompt in found:
            if prompt not in wanted:
                reasons.add("the prompt text differs from the recorded one")
                continue
            if (session_id, pos) in seen:
                continue
            seen.add((session_id, pos))
            turn = turn_at(store, session_id, pos)
            if turn is None:
                continue
            user, answers = turn
            if user.agent != agent:
                reasons.add(f"it was recorded with the {user.agent} agent, this cell runs {agent}")
                continue
            if not finished(answers):
                reasons.add("the recorded turn did not finish")
                continue
            before = point_before(store, session_id, pos)
            if before != point:
                reasons.add("the turns before it differ (the cell ran at another point of the "
                            "session)")
                continue
            return Search(Recording(user, answers, session_id, pos, before))
    return Search(None, "; ".join(sorted(reasons)) or "no recorded turn of this cell finished")


def cell_label(cell_id: str | None, prompt: str) -> str:
    """How a message names a cell: its id where known, and the prompt's first line."""
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    first = first if len(first) <= 60 else first[:59] + "…"
    return " ".join(filter(None, ["cell", cell_id, f"“{first}”" if first else None]))


def describe(recording: Recording) -> ReplayMark:
    """What a replayed message keeps of its recording (``metadata["replay"]``)."""
    return ReplayMark(original=recording.canonical, recorded_at=recording.recorded_at,
                      model=recording.model, session_id=recording.session_id,
                      cell_id=(recording.user.origin or {}).get("cell_id"),
                      cell=cell_label((recording.user.origin or {}).get("cell_id"),
                                      prompt_text(recording.user)))
