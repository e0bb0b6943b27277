"""The chunk path (issue 30, target 1): one streamed answer, five ways, ratios in one run.

    .venv/bin/python benchmarks/bench_chunk_path.py [--rounds 5] [--chunks 2000]

The same 2,000-chunk answer (text only, 3 characters a chunk, usage at the end) from the same
loopback OpenAI-compatible fake server (forge_jupyter.testing, in a process of its own),
read by:

- ``raw httpx``: the SSE parsed by hand (httpx + json.loads) — the floor of any Python client;
- ``bare litellm``: ``litellm.acompletion(model="openai/…", api_base=…, stream=True)``, every
  chunk consumed — the reference (1.00×);
- ``forge memory``: ``Session.prompt`` with the memory store, no subscriber;
- ``forge duckdb+sub``: ``Session.prompt`` with a DuckDB file and a bus subscriber attached
  (what a notebook with its widget does: every delta scrubbed and published);
- ``simonw/llm``: the ``llm`` package (openai SDK, SQLite log) configured for the same server
  through ``extra-openai-models.yaml`` in a temporary ``LLM_USER_PATH``, each response logged
  to its ``logs.db`` as its command line does by default.

Rounds are interleaved (each contender once per round, in the same order), medians printed
with the ratio against bare litellm. Targets: forge duckdb+sub ≤ simonw/llm, and ≤ 1.10×
bare litellm. ``FORGE_LEAN_STREAM`` (settings.py) picks the lean wire adapter for forge's rows
when it is set in the environment; ``--both`` runs forge both ways in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _small import HELP, small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge, llm  # noqa: E402

# The fake server in a process of its own, as a real one is: in this process its thread would
# take the GIL from the reader on every chunk, and its CPU would count in the reader's.
_SERVE = """
import sys
from forge_jupyter.testing import FakeModelServer, Turn, text
count, chunks = int(sys.argv[1]), int(sys.argv[2])
with FakeModelServer() as server:
    body = "".join(f"w{i % 10} " for i in range(chunks))
    server.add(*[Turn([text(body, chunk=3)]) for _ in range(count)])
    print(server.openai_base, flush=True)
    sys.stdin.read()  # until the benchmark closes the pipe
"""


class Served:
    """The fake server's process: ``count`` copies of the answer, one per request."""

    def __init__(self, count: int, chunks: int) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", _SERVE, str(count), str(chunks)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.openai_base = self.process.stdout.readline().strip()
        if not self.openai_base:
            raise RuntimeError("the fake model server's process did not start (see its stderr)")

    def model_kwargs(self, _protocol: str = "openai") -> dict[str, str]:
        return {"model": "openai/fake-model", "api_base": self.openai_base, "api_key": "sk-fake"}

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def raw_httpx(server: Served) -> Callable[[], None]:
    import ssl

    import httpx

    tls = ssl.create_default_context()  # built once: a new client per call would build its own
    url = server.openai_base.rstrip("/") + "/chat/completions"
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "go"}],
            "stream": True, "stream_options": {"include_usage": True}}

    async def run() -> None:
        async with httpx.AsyncClient(verify=tls) as client:
            async with client.stream("POST", url, json=body,
                                     headers={"Authorization": "Bearer sk-fake"}) as response:
                out = []
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        chunk = json.loads(line[6:])
                        for choice in chunk.get("choices") or ():
                            piece = (choice.get("delta") or {}).get("content")
                            if piece:
                                out.append(piece)

    return lambda: asyncio.run(run())


def bare_litellm(server: Served) -> Callable[[], None]:
    lm = llm.litellm()
    kwargs = server.model_kwargs("openai")

    async def run() -> None:
        response = await lm.acompletion(messages=[{"role": "user", "content": "go"}], stream=True,
                                        max_retries=0, stream_options={"include_usage": True},
                                        **kwargs)
        async for _chunk in response:
            pass

    return lambda: asyncio.run(run())


def forge_prompt(server: Served, db: str, subscriber: bool, lean: bool | None
                 ) -> tuple[Callable[[], None], Forge]:
    extra = {} if lean is None else {"lean_stream": lean}
    forge = Forge(db=db, builtin_tools=False, **extra, **server.model_kwargs("openai"))
    if subscriber:
        seen = []
        forge.bus.subscribe(lambda e: seen.append(1))  # a widget listening: deltas published
    return (lambda: forge.session(new=True).prompt("go")), forge


def simonw_llm(server: Served, home: str) -> Callable[[], None] | None:
    try:
        import llm as simonw  # the PyPI package "llm", not forge_jupyter.llm
        import sqlite_utils
        from llm.migrations import migrate
    except ImportError:
        print("simonw/llm: not installed (pip install llm) — its row is skipped")
        return None
    Path(home, "extra-openai-models.yaml").write_text(
        f"- model_id: bench-fake\n  model_name: fake-model\n  api_base: \"{server.openai_base}\"\n")
    db = sqlite_utils.Database(Path(home, "logs.db"))
    migrate(db)
    model = simonw.get_model("bench-fake")

    def run() -> None:
        response = model.prompt("go", stream=True, key="sk-fake")
        for _chunk in response:
            pass
        response.log_to_db(db)  # what `llm "go"` does after streaming, logging on by default

    return run


def main(rounds: int, chunks: int, both: bool) -> None:
    home = tempfile.mkdtemp(prefix="llm-home-")
    os.environ["LLM_USER_PATH"] = home  # read when llm looks for its folder, not at import
    modes = [(False, "classic"), (True, "lean")] if both else [(None, "")]
    server = Served((rounds + 1) * (3 + 2 * len(modes)), chunks)
    with tempfile.TemporaryDirectory() as tmp:
        contenders: dict[str, Callable[[], None]] = {
            "raw httpx": raw_httpx(server), "bare litellm": bare_litellm(server)}
        forges = []
        for lean, tag in modes:
            suffix = f" {tag}" if tag else ""
            run, f = forge_prompt(server, ":memory:", False, lean)
            contenders[f"forge memory{suffix}"], _ = run, forges.append(f)
            run, f = forge_prompt(server, os.path.join(tmp, f"b{tag}.duckdb"), True, lean)
            contenders[f"forge duckdb+sub{suffix}"], _ = run, forges.append(f)
        peer = simonw_llm(server, home)
        if peer is not None:
            contenders["simonw/llm"] = peer
        times: dict[str, list[float]] = {k: [] for k in contenders}
        cpu: dict[str, list[float]] = {k: [] for k in contenders}
        for run in contenders.values():  # warm: imports, clients, the store's schema
            run()
        for _ in range(rounds):
            for name, run in contenders.items():
                t, c = time.perf_counter(), time.process_time()
                run()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
        for f in forges:
            f.close()
    server.close()
    load = os.getloadavg()[0]
    print(f"chunk path: {chunks:,} chunks, median of {rounds} interleaved rounds (load {load:.1f}); "
          "CPU: this process's CPU seconds (the server runs in another), "
          "steadier than wall time on a loaded machine")
    wall = {k: statistics.median(v) for k, v in times.items()}
    used = {k: statistics.median(v) for k, v in cpu.items()}
    for name in times:
        print(f"  {name:24} wall {wall[name] * 1000:7.1f} ms {chunks / wall[name]:8,.0f} chunks/s "
              f"{wall[name] / wall['bare litellm']:5.2f}×  |  CPU {used[name] * 1000:7.1f} ms "
              f"{used[name] / used['bare litellm']:5.2f}× bare litellm")
    for key in [k for k in times if k.startswith("forge duckdb+sub")]:
        if "simonw/llm" in times:
            print(f"  {key} / simonw/llm: wall {wall[key] / wall['simonw/llm']:.2f}, CPU "
                  f"{used[key] / used['simonw/llm']:.2f} (target ≤ 1.00); / bare litellm: wall "
                  f"{wall[key] / wall['bare litellm']:.2f}, CPU {used[key] / used['bare litellm']:.2f} "
                  "(target ≤ 1.10)")


if __name__ == "__main__":
    toy = small()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--both", action="store_true",
                        help="forge with the classic and the lean wire adapter, side by side")
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if toy:
        args.rounds, args.chunks = 1, 50
    sys.exit(main(args.rounds, args.chunks, args.both))
