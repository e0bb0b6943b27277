"""What OpenTelemetry tracing costs a turn (issue 31): the default path (tracing off) against
tracing on (tracing = "otlp", spans exported to a loopback OTLP/HTTP receiver). Prints figures.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_tracing.py [--small]

1. What a script that builds a Forge and runs a turn with tracing off imports of OpenTelemetry
   (a fresh interpreter; it must be none) and how long that takes, against the same with
   tracing on (the SDK and exporter imported then, once).
2. One streamed answer of many small deltas through real litellm from the fake model server,
   tracing off and on, interleaved: ms per turn (median), µs per streamed delta, and the ratio
   on/off. The recorder takes whole rows only (Bus.wants): with no other subscriber the
   deltas are not even built, on or off.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _small import small  # noqa: E402 — benchmarks/ is the script's folder

from forge_jupyter import Forge  # noqa: E402
from forge_jupyter.testing import FakeModelServer, Turn  # noqa: E402
from tests.tracing.receiver import Receiver  # noqa: E402

PROBE = """
import json, os, sys, time
t = time.perf_counter()
from forge_jupyter import Forge
from forge_jupyter.testing import FakeModelServer, Turn
with FakeModelServer() as server:
    server.add(Turn.text("hello"))
    f = Forge(db=os.path.join(sys.argv[1], "p.duckdb"), builtin_tools=False, tracing=sys.argv[2],
              **server.model_kwargs("openai"))
    f.session("s").prompt("hi")
    took = time.perf_counter() - t
    f.close()
print(json.dumps([took, sorted(m for m in sys.modules if m.startswith("opentelemetry"))]))
"""


def imports(folder: str, mode: str, endpoint: str) -> tuple[float, int]:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", PROBE, folder, mode], capture_output=True,
                          text=True, env=env, timeout=300, check=True)
    took, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return took, len(modules)


def main(toy: bool) -> None:
    deltas = 200 if toy else 1000
    rounds = 2 if toy else 7
    answer = "word " * deltas  # Turn.text's default: 4 characters a delta → ~1.25 per word
    with tempfile.TemporaryDirectory() as folder, Receiver() as receiver, \
            FakeModelServer() as server:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        for mode in ("off", "otlp"):
            took, count = imports(folder, mode, receiver.endpoint)
            print(f"script, Forge + one turn, tracing {mode:4}: {took:6.2f} s, "
                  f"{count} opentelemetry modules imported")
        forges = {mode: Forge(db=os.path.join(folder, f"{mode}.duckdb"), builtin_tools=False,
                              tracing=mode, **server.model_kwargs("openai"))
                  for mode in ("off", "otlp")}
        chunks = len(answer) // 4 + 1
        times: dict[str, list[float]] = {"off": [], "otlp": []}
        for r in range(rounds + 1):  # the first round warms litellm and the exporter up
            for mode, forge in forges.items():
                server.add(Turn.text(answer))
                t = time.perf_counter()
                forge.session(f"s{r}").prompt("stream")
                if r:
                    times[mode].append(time.perf_counter() - t)
        forges["otlp"].services.tracer.provider.force_flush()
        spans = len(receiver.spans)
        for forge in forges.values():
            forge.close()
    off, on = (statistics.median(times[m]) for m in ("off", "otlp"))
    print(f"one streamed answer of {chunks} deltas, median of {rounds}:")
    print(f"  tracing off : {off * 1e3:8.1f} ms/turn  {off / chunks * 1e6:6.1f} µs/delta")
    print(f"  tracing on  : {on * 1e3:8.1f} ms/turn  {on / chunks * 1e6:6.1f} µs/delta "
          f"({spans} spans exported)")
    print(f"  ratio on/off: {on / off:.3f}")


if __name__ == "__main__":
    main(small())
