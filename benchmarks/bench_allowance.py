"""What the prompt's bounds cost on the hot paths (issue 24, class 4). Prints ratios.

    .venv/bin/python benchmarks/bench_allowance.py [--small]

1. The delta path: text deltas through the Processor (events from a list, no network) with the
   budget watch off (no budget: one add per delta) and on (a budget: the watch at each 20 ms
   tick) — interleaved, best of several rounds.
2. Arguments: ``parse_arguments`` (size, depth, then json.loads) against the bare
   ``json.loads`` + ``valid_data`` it replaced, on a small call's arguments and a 900 KB one.
3. A round of 32 tool calls: ``run_calls`` (the per-step cap, 8 at once) against gathering
   every ``run_call`` unbounded, as the Processor did before.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from forge_jupyter import llm  # noqa: E402
from forge_jupyter.bus import Bus  # noqa: E402
from forge_jupyter.message import Message, SessionInfo, Tokens, ToolPart  # noqa: E402
from forge_jupyter.scrub import valid_data  # noqa: E402
from forge_jupyter.session.allowance import Allowance  # noqa: E402
from forge_jupyter.session.checkpoints import SharedCommit  # noqa: E402
from forge_jupyter.session.context import RunConfig, RunContext  # noqa: E402
from forge_jupyter.session.processor import Processor  # noqa: E402
from forge_jupyter.session.step_cap import Spending  # noqa: E402
from forge_jupyter.session.tool_call import run_call, run_calls  # noqa: E402
from forge_jupyter.session.writer import Writer  # noqa: E402
from forge_jupyter.store.inmemory.store import MemoryStore  # noqa: E402
from forge_jupyter.store.projection import Projection  # noqa: E402
from forge_jupyter.tools.arguments import parse_arguments  # noqa: E402
from forge_jupyter.tools.base import tool_from_function  # noqa: E402

SMALL = "--small" in sys.argv


async def noop(i: int) -> str:
    """Do nothing."""
    return "ok"


def _ctx(budget: float | None) -> tuple[RunContext, Message]:
    store = MemoryStore()
    info = store.create_session(SessionInfo())
    writer = Writer(Projection(store), Bus())
    user = Message(session_id=info.id, role="user", status="completed")
    assistant = Message(session_id=info.id, role="assistant", parent_id=user.id)
    for m in (user, assistant):
        writer.update_message(m)
        writer.append(info.id, m.id)
    ctx = RunContext(session=info, writer=writer, bus=Bus(), model="openai/x", agent="build",
                     system="", tools={"noop": tool_from_function(noop)}, params={},
                     config=RunConfig(doom_loop_threshold=0), view_ids=[user.id, assistant.id],
                     allowance=Allowance.top(25, budget, None))
    return ctx, assistant


def delta_path(deltas: int, rounds: int) -> None:
    events: list = [llm.TextStart(), *[llm.TextDelta("tok ") for _ in range(deltas)],
                    llm.TextEnd(), llm.StepFinish("stop", Tokens(input=10, output=deltas), 0.0,
                                                  "openai/x")]

    async def source(_request):
        for e in events:
            yield e

    best: dict[str, float] = {}
    for _ in range(rounds):
        for label, budget in (("watch off", None), ("watch on", 1e9)):
            ctx, assistant = _ctx(budget)
            processor = Processor(ctx, assistant, source=source)
            if budget is not None:  # as step_cap sets it for a live, priced step
                processor._spending = Spending(ctx.allowance, 0.0, 1e-7)
            request = llm.LLMRequest(model="openai/x", system="", messages=[])
            t = time.perf_counter()
            asyncio.run(processor.process(request))
            best[label] = min(best.get(label, 1e9), time.perf_counter() - t)
    off, on = best["watch off"], best["watch on"]
    print(f"delta path: {deltas / off:,.0f} deltas/s without a budget, {deltas / on:,.0f}/s "
          f"with the budget watch → ratio {on / off:.3f}")


def arguments(rounds: int) -> None:
    small = json.dumps({"code": "df.head()", "timeout": 30, "columns": ["a", "b", "c"]})
    large = json.dumps({"content": "x" * 900_000})
    for label, raw, n in (("small call", small, 20_000 // (10 if SMALL else 1)),
                          ("900 KB call", large, 20 // (4 if SMALL else 1))):
        best_old = best_new = 1e9
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(n):
                valid_data(json.loads(raw))
            best_old = min(best_old, time.perf_counter() - t)
            t = time.perf_counter()
            for _ in range(n):
                parse_arguments("tool", raw)
            best_new = min(best_new, time.perf_counter() - t)
        print(f"arguments [{label}]: {best_new / n * 1e6:,.1f} µs bounded vs "
              f"{best_old / n * 1e6:,.1f} µs bare → ratio {best_new / best_old:.3f}")


def tool_round(calls: int, rounds: int) -> None:
    async def one(bounded: bool) -> float:
        ctx, assistant = _ctx(None)
        parts = [ToolPart(session_id=ctx.session.id, message_id=assistant.id, call_id=f"c{i}",
                          tool="noop", input={"i": i}) for i in range(calls)]
        for p in parts:
            ctx.writer.update_part(p)
        commit = SharedCommit(ctx.writer)
        t = time.perf_counter()
        if bounded:
            await run_calls(ctx, parts, ctx.tools, commit)
        else:
            await asyncio.gather(*(run_call(ctx, p, ctx.tools, commit) for p in parts))
        return time.perf_counter() - t

    best = {True: 1e9, False: 1e9}
    for _ in range(rounds):
        for bounded in (False, True):
            best[bounded] = min(best[bounded], asyncio.run(one(bounded)))
    print(f"a round of {calls} tool calls: {best[True] * 1e3:.2f} ms capped and 8 at once vs "
          f"{best[False] * 1e3:.2f} ms unbounded → ratio {best[True] / best[False]:.3f}")


if __name__ == "__main__":
    rounds = 2 if SMALL else 5
    delta_path(20_000 if SMALL else 200_000, rounds)
    arguments(rounds)
    tool_round(32, rounds)
