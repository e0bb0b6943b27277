"""Agent-core benchmarks (issue 3, and write amplification for issue 2). Prints figures.

    .venv/bin/python benchmarks/bench_core.py

1. Harness overhead: `prompt()` of a scripted turn (2,000 streamed chunks + 3 tool calls, then
   a short answer) against a bare `litellm.acompletion` loop consuming the same two streams from
   the same fake server — interleaved, several rounds, medians. Target ratio ≤ 1.10.
2. Processor throughput: stream events/s through Processor + write entry + bus, no network
   (events from a list), with no subscriber and with one. Target ≥ 100,000 deltas/s. Side by
   side: checkpoints of the open text off, at the real interval (1 s), and every 20 ms (50×
   the real rate, so their cost on the stream path shows); and what one checkpoint of a
   100 KB block costs the event loop.
3. Write amplification: rows committed for a streamed turn of 10,000 text deltas + 20 tool
   calls. Target: deltas cause zero writes; rows ≈ parts + messages. Then rows per streamed
   turn that lasts ~3 s (text at ~200 deltas/s + 3 tool calls), checkpoints off (before) and
   on (after): a checkpoint adds about one row and one commit per second of streaming.
4. `import forge_jupyter` time (litellm not imported), against `import litellm`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import (
    Forge,  # noqa: E402
    llm,  # noqa: E402
)
from forge_jupyter.bus import Bus  # noqa: E402
from forge_jupyter.message import Message, SessionInfo, TextPart, Tokens  # noqa: E402
from forge_jupyter.session.context import RunConfig, RunContext  # noqa: E402
from forge_jupyter.session.processor import Processor  # noqa: E402
from forge_jupyter.session.writer import Writer  # noqa: E402
from forge_jupyter.store.inmemory.store import MemoryStore  # noqa: E402
from forge_jupyter.store.projection import Projection  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn, text, tool_call  # noqa: E402
from forge_jupyter.tools.base import tool_from_function  # noqa: E402

try:
    from forge_jupyter.session import checkpoints as durable  # noqa: E402
except ImportError:  # a tree from before the checkpoints, for before/after figures
    durable = None


def _turns(chunks: int = 2000) -> list[Turn]:
    body = "".join(f"w{i % 10} " for i in range(chunks))  # 2,000 chunks of 3 characters
    first = Turn([text(body, chunk=3)] + [tool_call("noop", {"i": i}) for i in range(3)])
    return [first, Turn.text("done.")]


def noop(i: int) -> str:
    """Do nothing."""
    return "ok"


async def bare_litellm(server: FakeModelServer) -> None:
    lm = llm.litellm()
    kwargs = server.model_kwargs("openai")
    messages = [{"role": "user", "content": "go"}]
    tools = [tool_from_function(noop).definition()]  # the same request shape the harness sends
    for _ in range(2):
        response = await lm.acompletion(messages=messages, tools=tools, stream=True, max_retries=0,
                                        stream_options={"include_usage": True}, **kwargs)
        async for _chunk in response:
            pass


def harness_overhead(rounds: int = 5, chunks: int = 2000) -> None:
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, db in (("memory", ":memory:"), ("duckdb", os.path.join(tmp, "b.duckdb"))):
            forge = Forge(db=db, builtin_tools=False, tools=[tool_from_function(noop)],
                          **server.model_kwargs("openai"))
            server.add(*_turns(chunks))
            forge.session(new=True).prompt("warm up")
            server.add(*_turns(chunks))
            asyncio.run(bare_litellm(server))
            harness, bare = [], []
            for _ in range(rounds):
                server.add(*_turns(chunks))
                t = time.perf_counter()
                asyncio.run(bare_litellm(server))
                bare.append(time.perf_counter() - t)
                server.add(*_turns(chunks))
                s = forge.session(new=True)
                t = time.perf_counter()
                s.prompt("go")
                harness.append(time.perf_counter() - t)
            forge.close()
            results[label] = (statistics.median(harness), statistics.median(bare))
        for label, (h, b) in results.items():
            print(f"harness overhead [{label:6}]: prompt() {h * 1000:7.1f} ms vs bare litellm "
                  f"{b * 1000:7.1f} ms → ratio {h / b:.3f}  (target ≤ 1.10)")


def _ctx(bus: Bus) -> tuple[RunContext, Message, Projection]:
    store = MemoryStore()
    info = store.create_session(SessionInfo())
    projection = Projection(store)
    writer = Writer(projection, bus)
    user = Message(session_id=info.id, role="user", status="completed")
    assistant = Message(session_id=info.id, role="assistant", parent_id=user.id)
    for m in (user, assistant):
        writer.update_message(m)
        writer.append(info.id, m.id)
    projection.flush()
    ctx = RunContext(session=info, writer=writer, bus=bus, model="openai/x", agent="build",
                     system="", tools={"noop": tool_from_function(noop)}, params={},
                     config=RunConfig(doom_loop_threshold=0), view_ids=[user.id, assistant.id])
    return ctx, assistant, projection


def _events(deltas: int, tools: int) -> list:
    events: list = [llm.TextStart()]
    events += [llm.TextDelta("tok ") for _ in range(deltas)]
    events.append(llm.TextEnd())
    for i in range(tools):
        events.append(llm.ToolInputStart(i, f"call_{i}", "noop"))
    for i in range(tools):
        events.append(llm.ToolCall(i, f"call_{i}", "noop", f'{{"i": {i}}}'))
    events.append(llm.StepFinish("tool_calls", Tokens(input=10, output=deltas), 0.0, "openai/x"))
    return events


def _checkpoints(every: float | None) -> None:
    if durable is not None:
        durable.CHECKPOINT_EVERY = every


def processor_throughput(deltas: int = 200_000, rounds: int = 3) -> None:
    events = _events(deltas, 0)

    async def source(_request):
        for e in events:
            yield e

    modes = (("checkpoints off", None), ("checkpoint 1 s", 1.0), ("checkpoint 20 ms", 0.02))
    for label, subscribe in (("no subscriber", False), ("one subscriber", True)):
        best: dict[str, float] = {}
        for _ in range(rounds):  # interleaved, best of each
            for mode, every in modes:
                _checkpoints(every)
                bus = Bus()
                seen = []
                if subscribe:
                    bus.subscribe(seen.append)
                ctx, assistant, _ = _ctx(bus)
                processor = Processor(ctx, assistant, source=source)
                request = llm.LLMRequest(model="openai/x", system="", messages=[])
                t = time.perf_counter()
                asyncio.run(processor.process(request))
                dt = time.perf_counter() - t
                best[mode] = min(best.get(mode, dt), dt)
        _checkpoints(1.0)
        off = best["checkpoints off"]
        cells = "; ".join(f"{mode}: {deltas / dt:,.0f}/s ({dt / off:.2f}×)" for mode, dt in best.items())
        print(f"processor throughput [{label:14}]: {cells}  ({deltas:,} deltas; target ≥ 100,000/s)")


def checkpoint_cost(deltas: int = 25_000, rounds: int = 50) -> None:
    """What one checkpoint costs the event loop (the commit itself runs in a thread)."""

    async def measure() -> float:
        bus = Bus()
        bus.subscribe(lambda e: None)  # a widget listening
        ctx, assistant, _ = _ctx(bus)
        checkpoints = durable.Checkpoints(ctx.writer)
        part = TextPart(session_id=ctx.session.id, message_id=assistant.id)
        ctx.writer.update_part(part)
        best = float("inf")
        for _ in range(rounds):
            buf = ["tok " for _ in range(deltas)]
            checkpoints.start(part, buf)
            t = time.perf_counter()
            checkpoints._fire()  # what the timer runs: join, full row, publish, start the commit
            best = min(best, time.perf_counter() - t)
            await checkpoints.settle()
        return best

    if durable is None:
        return
    cost = asyncio.run(measure())
    print(f"one checkpoint on the event loop: {cost * 1e6:,.0f} µs for an open block of "
          f"{deltas:,} deltas ({deltas * 4 // 1000} KB); once a second that is "
          f"{cost * 100:.3f} % of the loop's time (the commit runs in a thread)")


def write_amplification(deltas: int = 10_000, tools: int = 20) -> None:
    events = _events(deltas, tools)

    async def source(_request):
        for e in events:
            yield e

    bus = Bus()
    ctx, assistant, projection = _ctx(bus)
    before_rows, before_batches = projection.rows_written, projection.batches_written
    asyncio.run(Processor(ctx, assistant, source=source).process(
        llm.LLMRequest(model="openai/x", system="", messages=[])))
    projection.flush()  # what the loop commits before its next request
    rows = projection.rows_written - before_rows
    batches = projection.batches_written - before_batches
    message = ctx.writer.message(assistant.id)
    parts = len(message.parts)
    # Tool parts are committed twice on purpose: running with their arguments (durable before
    # they run, so a crash mid-tool still finds the call) and finished. Everything else lands
    # once. Deltas never write.
    expected = (parts + 1) + tools
    print(f"write amplification: {deltas:,} deltas + {tools} tool calls → {rows} rows in {batches} "
          f"commits; the message has {parts} parts + 1 message row; expected {expected} "
          f"(each tool part twice: before and after it runs); rows from deltas: {rows - expected}")


def streamed_turn_rows(seconds: float = 3.0, rate: int = 200, tools: int = 3) -> None:
    """Rows and commits of one turn that streams for ``seconds``, checkpoints off and on."""
    deltas = int(seconds * rate)
    events = _events(deltas, tools)

    async def source(_request):
        for e in events:
            if type(e) is llm.TextDelta:
                await asyncio.sleep(1 / rate)  # a model streaming at ``rate`` tokens a second
            yield e

    results = {}
    for label, every in (("before (no checkpoint)", None), ("after (checkpoint ≤ 1/s)", 1.0)):
        _checkpoints(every)
        ctx, assistant, projection = _ctx(Bus())
        before_rows, before_batches = projection.rows_written, projection.batches_written
        t = time.perf_counter()
        asyncio.run(Processor(ctx, assistant, source=source).process(
            llm.LLMRequest(model="openai/x", system="", messages=[])))
        projection.flush()  # what the loop commits before its next request
        results[label] = (projection.rows_written - before_rows,
                          projection.batches_written - before_batches, time.perf_counter() - t)
    _checkpoints(1.0)
    cells = "; ".join(f"{label}: {rows} rows in {batches} commits" for label, (rows, batches, _)
                      in results.items())
    took = max(dt for _, _, dt in results.values())
    print(f"rows per streamed turn ({deltas} deltas over {took:.1f} s + {tools} tool calls): {cells}")


def import_time(runs: int = 3) -> None:
    def measure(stmt: str) -> float:
        best = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", f"import time; t=time.perf_counter(); {stmt}; "
                                  "print(time.perf_counter()-t)"], capture_output=True, text=True,
                                 env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
            best.append(float(out.stdout.strip().splitlines()[-1]))
        return min(best)

    ours = measure("import forge_jupyter, sys; assert 'litellm' not in sys.modules")
    ext = measure("import forge_jupyter, sys; from forge_jupyter.notebook import magics; "
                  "assert 'litellm' not in sys.modules")
    theirs = measure("import litellm")
    print(f"import forge_jupyter: {ours * 1000:.0f} ms (target ≤ 300 ms; litellm not imported); "
          f"with the magics module: {ext * 1000:.0f} ms; import litellm alone: {theirs * 1000:.0f} ms")


if __name__ == "__main__":
    toy = small()
    import_time(**({"runs": 1} if toy else {}))
    processor_throughput(**({"deltas": 5_000, "rounds": 1} if toy else {}))
    checkpoint_cost(**({"deltas": 1_000, "rounds": 2} if toy else {}))
    write_amplification(**({"deltas": 500, "tools": 2} if toy else {}))
    streamed_turn_rows(**({"seconds": 0.3} if toy else {}))
    harness_overhead(**({"rounds": 1, "chunks": 100} if toy else {}))
