"""Every timeout stops the work, and nothing can wedge the kernel (issue 24, class 3).

Each case is a tool call the fake model server sends through real litellm; what is checked is
what the person would see — the tool part, how long ``prompt()`` took — and what is left
behind in the process: threads still running, CPU still being spent, an event loop that still
serves other work.
"""

from __future__ import annotations

import asyncio
import gc
import os
import queue
import socket
import threading
import time

import pytest

from forge_jupyter import Forge
from forge_jupyter.testing import Turn, tool_call
from forge_jupyter.testing.server import FakeModelServer
from forge_jupyter.tools.threads import MAX_ABANDONED, stuck_tool_threads


class GapMeter:
    """A thread that wakes every 5 ms: the longest gap between its wake-ups is how long some
    other thread held the GIL (Stop, the kernel's other cells wait that long too).

    What the suite's earlier tests left on the heap is frozen out of the cyclic collector
    while it measures: late in a whole-suite run one full collection of those objects stops
    every thread for most of a second (CI saw 0.79 s), which says nothing about the tool."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._done.wait(0.005):
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> GapMeter:
        gc.collect()
        gc.freeze()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        gc.unfreeze()


@pytest.fixture(scope="module", autouse=True)
def litellm_warm(tmp_path_factory):
    """The first prompt and tool calls of a process import litellm, jsonschema, DuckDB
    (seconds on a busy machine, the GIL held): done once here, so what is measured below is
    the calls' own."""
    with FakeModelServer() as warm:
        warm.add(Turn([tool_call("grep", {"pattern": "x", "include": "*.py"}),
                       tool_call("glob", {"pattern": "*.py"}),
                       tool_call("sql", {"query": "SELECT 1"})]), Turn.text("warm"))
        root = tmp_path_factory.mktemp("warm")
        forge = Forge(db=":memory:", root=root, memory_dir=root / "memory",
                      **warm.model_kwargs("openai"))
        try:
            forge.session("warm").prompt("hi")
        finally:
            forge.close()


def _tool_threads(name: str) -> list[threading.Thread]:
    """forge's threads still running for tool ``name`` (forge-tool-sql; before: forge-sql)."""
    return [t for t in threading.enumerate()
            if t.name.startswith("forge-") and t.name.endswith(name) and t.is_alive()]


def _cpu_while_idle(seconds: float = 0.6) -> float:
    """CPU seconds this process spends while the test only sleeps: a query still running in
    DuckDB's threads would spend about one per second per thread."""
    start = time.process_time()
    time.sleep(seconds)
    return time.process_time() - start


# --------------------------------------------------------------------------- grep and glob

# Patterns that backtrack without bound in a backtracking engine, over lines that make them
# (the issue named the first; the others are ours).
CATASTROPHIC_GREP = [
    ("(a+)+$", "a" * 64 + "!"),
    ("(a|aa)+$", "a" * 64 + "!"),
    (r"(\w|\w\w)+\d", "b" * 64 + "-"),
    ("(?i)(x|xx)+y", "X" * 70 + "z"),
]


@pytest.mark.parametrize(("pattern", "line"), CATASTROPHIC_GREP)
def test_a_catastrophic_grep_pattern_ends_within_its_budget_and_leaves_the_gil_free(
        make_forge, server, tmp_path, pattern, line):
    (tmp_path / "notes.txt").write_text("first line\n" + line + "\n" * 3 + line + "\n")
    server.add(Turn([tool_call("grep", {"pattern": pattern})]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=tmp_path, tool_timeout=120)
    started = time.monotonic()
    with GapMeter() as gil:
        forge.session("s").prompt("search")
    took = time.monotonic() - started
    [call] = forge.session("s").messages()[1].tool_parts
    # the engine's budget (a second of its work; more wall time on a loaded machine) ended it,
    # not the call's timeout: `re` would still be backtracking after 2**64 steps
    assert took < 60, took
    assert gil.longest < 0.5, f"another thread waited {gil.longest:.2f} s for the GIL"
    if call.state == "error":  # the engine gave up at the budget: the model reads why
        assert "took more than 1 s on line 2 of notes.txt" in call.error
        assert "Rewrite it without nested quantifiers" in call.error
    else:  # the engine saw through it: the answer is the right one
        assert call.output.startswith("No matches")


CATASTROPHIC_GLOB = [
    "{a,a}" * 30 + "b",
    "*?" * 40 + "x",
    "*a" * 12 + "b",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC_GLOB)
def test_a_catastrophic_glob_ends_within_its_budget(make_forge, server, tmp_path, pattern):
    (tmp_path / ("a" * 60)).write_text("x")
    (tmp_path / "keep.txt").write_text("hello\n")
    server.add(Turn([tool_call("glob", {"pattern": pattern}),
                     tool_call("grep", {"pattern": "hello", "include": pattern})]),
               Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=tmp_path, tool_timeout=120)
    started = time.monotonic()
    with GapMeter() as gil:
        forge.session("s").prompt("find")
    assert time.monotonic() - started < 60
    assert gil.longest < 0.5, f"another thread waited {gil.longest:.2f} s for the GIL"
    for call in forge.session("s").messages()[1].tool_parts:
        if call.state == "error":
            assert "took more than 1 s on the path" in call.error, call.error
        else:
            assert call.output.startswith("No ")  # neither file matches any of them


def test_ordinary_patterns_still_match_with_re_syntax(make_forge, server, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import os\nX = 1  # TODO later\n")
    (tmp_path / "b.txt").write_text("todo: nothing\n")
    server.add(Turn([tool_call("grep", {"pattern": r"(?i)\btodo\b"}),
                     tool_call("grep", {"pattern": r"^import\s+(\w+)$", "include": "**/*.py"}),
                     tool_call("glob", {"pattern": "{src/*.py,*.txt}"}),
                     tool_call("grep", {"pattern": "(unclosed"})]),
               Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=tmp_path)
    forge.session("s").prompt("search")
    todo, imports, found, bad = forge.session("s").messages()[1].tool_parts
    assert "src/a.py:2:" in todo.output and "b.txt:1:" in todo.output
    assert "src/a.py:1: import os" in imports.output
    assert set(found.output.splitlines()) == {"src/a.py", "b.txt"}
    assert bad.state == "error" and "is not a valid regular expression" in bad.error


# --------------------------------------------------------------------------------- sql

RUNAWAY_SQL = [
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT max(n) FROM t",
    "with recursive loop(x) as (select 0 union all select x from loop) select count(*) from loop",
    "SELECT count(*) FROM range(1000000000000)",
    "SELECT sum(a.range * b.range) AS s FROM range(100000000) a, range(100000000) b",
]


@pytest.mark.parametrize("query", RUNAWAY_SQL)
def test_a_runaway_query_is_stopped_at_its_timeout_and_its_work_ends(make_forge, server,
                                                                     tmp_path, query):
    server.add(Turn([tool_call("sql", {"query": query})]), Turn.text("too slow"))
    forge = make_forge(builtin_tools=True, root=tmp_path, tool_timeout=1)
    started = time.monotonic()
    forge.session("s").prompt("count")
    took = time.monotonic() - started
    [call] = forge.session("s").messages()[1].tool_parts
    assert call.state == "error"
    assert call.error == "sql did not finish within 1 s and was stopped."
    assert took < 1 + 3, took  # the timeout, the interrupt's grace and the model's answer
    assert _tool_threads("sql") == []
    assert _cpu_while_idle() < 0.3


def test_stop_interrupts_a_running_query(make_forge, server, tmp_path):
    server.add(Turn([tool_call("sql", {"query": RUNAWAY_SQL[0]})]), Turn.text("never asked"))
    forge = make_forge(builtin_tools=True, root=tmp_path, tool_timeout=120)
    session = forge.session("s")
    aborted_at: list[float] = []

    def stop_once_running() -> None:  # Stop, pressed a second into the query
        deadline = time.monotonic() + 30
        while not _tool_threads("sql") and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(1.0)
        aborted_at.append(time.monotonic())
        session.abort()

    threading.Thread(target=stop_once_running, daemon=True).start()
    answer = session.prompt("count")
    assert aborted_at and time.monotonic() - aborted_at[0] < 2
    assert answer.status == "aborted"
    [call] = answer.tool_parts
    assert call.state == "error" and call.error.startswith("aborted")
    assert _tool_threads("sql") == []
    assert _cpu_while_idle() < 0.3


def test_the_sql_tool_runs_with_a_kernel_sized_memory_limit_and_two_threads(make_forge, server,
                                                                            tmp_path):
    queries = [
        "SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t",
        "SELECT string_agg(repeat('x', 1000), '') AS s FROM range(3000000)",
        "select len(list(repeat('z', 500))) as n from range(4000000)",
        "SELECT count(*) FROM (SELECT DISTINCT repeat(range::VARCHAR, 50) FROM range(30000000))",
    ]
    server.add(Turn([tool_call("sql", {"query": q}) for q in queries]), Turn.text("done"))
    forge = make_forge(builtin_tools=True, root=tmp_path, tool_timeout=60)
    forge.session("s").prompt("big")
    settings, *hungry = forge.session("s").messages()[1].tool_parts
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = min(1 << 30, physical // 4)
    assert settings.state == "completed", settings.error
    header, values = settings.output.splitlines()[:2]
    assert header.split() == ["m", "t"]
    shown = f"{limit / 2**30:.1f} GiB" if limit >= 2**30 else f"{limit / 2**20:.1f} MiB"
    assert values.split() == [*shown.split(), "2"]
    for call in hungry:
        assert call.state == "error", call.input
        assert "more memory than the sql tool's limit" in call.error, call.error


# ------------------------------------------------------------------------- tool threads


def _blockers(release: threading.Event):
    """Four sync tools that never return on their own, each blocked a different way."""
    a, b = socket.socketpair()
    q: queue.Queue[str] = queue.Queue()

    def on_event() -> str:
        """Waits on an event."""
        release.wait()
        return "released"

    def on_sleep() -> str:
        """Sleeps in small steps until released."""
        while not release.is_set():
            time.sleep(0.05)
        return "released"

    def on_socket() -> str:
        """Reads a socket nobody writes to (until released)."""
        return a.recv(1).decode()

    def on_queue() -> str:
        """Reads a queue nobody fills (until released)."""
        return q.get()

    def unblock() -> None:
        release.set()
        b.send(b"x")
        q.put("x")

    return [on_event, on_sleep, on_socket, on_queue], unblock


def test_stuck_tool_threads_never_keep_prompt_from_returning_nor_wedge_the_loop(make_forge,
                                                                                 server):
    release = threading.Event()
    blockers, unblock = _blockers(release)
    assert len(blockers) == MAX_ABANDONED
    forge = make_forge(tool_timeout=0.3)
    for fn in blockers:
        forge.tool(fn)

    @forge.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    async def kernel() -> tuple[list, list[str], object]:
        """One event loop for everything, as in a kernel."""
        loop = asyncio.get_running_loop()
        calls = []
        for fn in blockers:
            server.add(Turn([tool_call(fn.__name__, {})]), Turn.text("it hung"))
            started = time.monotonic()
            await forge.session(f"s-{fn.__name__}").prompt_async("go")
            assert time.monotonic() - started < 0.3 + 2 + 3  # timeout, grace, the answer
            calls.append(forge.session(f"s-{fn.__name__}").messages()[1])
        # the loop's default executor is untouched: its workers are all free
        free = await asyncio.wait_for(
            asyncio.gather(*(loop.run_in_executor(None, lambda: "free") for _ in range(8))), 5)
        server.add(Turn([tool_call("add", {"a": 1, "b": 2})]), Turn.text("refused"))
        await asyncio.wait_for(forge.session("after").prompt_async("add"), 10)
        return calls, free, forge.session("after").messages()[1]

    try:
        calls, free, refused = asyncio.run(kernel())
        for answer, fn in zip(calls, blockers, strict=True):
            [call] = answer.tool_parts
            assert call.tool == fn.__name__ and call.state == "error"
            assert "did not finish within 0.3 s; its thread did not stop and was left " \
                   "running" in call.error
        assert free == ["free"] * 8
        assert stuck_tool_threads() == MAX_ABANDONED
        [call] = refused.tool_parts
        assert call.state == "error"
        assert f"{MAX_ABANDONED} earlier tool calls (on_event, on_queue, on_sleep, on_socket) " \
               "are stuck" in call.error and "Restart the kernel" in call.error
    finally:
        unblock()
        deadline = time.monotonic() + 5
        while stuck_tool_threads() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert stuck_tool_threads() == 0
    # freed, the tools run again
    server.add(Turn([tool_call("add", {"a": 2, "b": 3})]), Turn.text("5"))
    forge.session("again").prompt("add")
    [call] = forge.session("again").messages()[1].tool_parts
    assert call.state == "completed" and call.output == "5"


@pytest.mark.parametrize("block", ["event", "sleep", "lock"])
def test_a_script_prompt_returns_though_its_tool_thread_is_stuck(make_forge, server, block):
    release = threading.Event()
    held = threading.Lock()
    held.acquire()
    forge = make_forge(tool_timeout=0.3)

    @forge.tool
    def hang() -> str:
        """Never returns on its own."""
        if block == "event":
            release.wait()
        elif block == "sleep":
            while not release.is_set():
                time.sleep(0.05)
        else:
            held.acquire()
        return "late"

    server.add(Turn([tool_call("hang", {})]), Turn.text("it hung"))
    box: dict[str, object] = {}
    # prompt() from plain code: asyncio.run, which waits for its default executor's threads
    thread = threading.Thread(target=lambda: box.update(answer=forge.session("s").prompt("go")),
                              daemon=True)
    thread.start()
    thread.join(10)
    try:
        assert not thread.is_alive(), "prompt() did not return"
        [call] = forge.session("s").messages()[1].tool_parts
        assert call.state == "error" and "was left running" in call.error
    finally:
        release.set()
        held.release()
        deadline = time.monotonic() + 5
        while stuck_tool_threads() and time.monotonic() < deadline:
            time.sleep(0.02)


# Patterns whose matches depend on line ends or could run across lines: grep searches a block
# of lines at once, and still a line matches exactly when it matches on its own.
LINE_EXACT = [r"a\s+b", r"b\nc", r"[^x]+$", r"(?s)a.b", r"^$", r"\bab", r"ab\b", r"(?<=a)b",
              r"a(?=\s)", r"\Aa", r"a\Z", r"(?-m:^a)", r"(a)\1", r"c\s*\n?\s*a", r"^\s*#"]


def test_grep_matches_each_line_as_if_it_were_alone(tmp_path):
    import re

    from forge_jupyter.tools.base import ToolContext
    from forge_jupyter.tools.grep import grep

    lines = ["", "a", "ab", "a b", "a", "b", "cab", "aa", "# note", "  # indented", "x", "c",
             "a\t", "bab", "ca"] * 7
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    ctx = ToolContext(session_id="s", message_id="m", call_id="c", part_id="p",
                      root=str(tmp_path))
    for pattern in LINE_EXACT:
        out = grep(pattern, ctx=ctx).output
        got = [int(h.split(":")[1]) for h in out.splitlines()[1:] if h.startswith("f.txt:")]
        want = [n for n, line in enumerate(lines, start=1) if re.search(pattern, line)]
        assert got == want, pattern
