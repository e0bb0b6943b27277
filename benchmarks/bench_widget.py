"""Widget traffic during a fast stream: comm messages and bytes per second, next to what one
message per streamed fragment would have cost.

    /work/venv/bin/python benchmarks/bench_widget.py

A real kernel (jupyter_client) runs a TurnView; this script is its widget frontend (it says
"ready" and counts the custom messages). Two streams: a real one through litellm from the
fake model server (one character per chunk), and a synthetic one of 50,000 fragments through
the real write entry from a worker thread (far faster than any model).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from _small import small  # noqa: E402 — benchmarks/ is the script's folder
from kernel_frontend import KERNEL_SETUP, KernelFrontend, max_in_window  # noqa: E402

from forge_jupyter.testing import FakeModelServer, Turn, text  # noqa: E402

RUN_REAL = """
s = f.session(); view = TurnView(f, s); view.start()
t0 = time.monotonic(); await s.prompt_async('go'); took = time.monotonic() - t0
view.finish(s.messages())
print(json.dumps({"took": took, "sent": view.messages_sent}))
"""

RUN_SYNTHETIC = """
s = f.session(); view = TurnView(f, s); view.start()
t0 = time.monotonic(); await asyncio.to_thread(synthetic_stream, s, {n}, 50); took = time.monotonic() - t0
view.finish(s.messages())
print(json.dumps({{"took": took, "sent": view.messages_sent}}))
"""


def report(name: str, fe: KernelFrontend, chunks: int, fragment_bytes: int) -> None:
    info = json.loads("".join(fe.stdout).strip().splitlines()[-1])
    batches = [r.at for r in fe.batches()]
    took, sent = info["took"], info["sent"]
    # The bytes of JSON that arrived (the kernel no longer serializes a message twice to count).
    sent_bytes = sum(len(json.dumps(r.content, separators=(",", ":"))) for r in fe.received)
    # One message per fragment: a delta op of ~120 bytes of JSON around each fragment.
    naive_bytes = chunks * (120 + fragment_bytes)
    print(f"\n{name}: {chunks:,} fragments in {took:.2f} s ({chunks / took:,.0f}/s)")
    print(f"  widget messages   {sent:6,}  {sent / took:7.1f}/s   busiest second {max_in_window(batches)}")
    print(f"  widget bytes      {sent_bytes:9,}  {sent_bytes / took / 1024:7.1f} KiB/s")
    print(f"  one per fragment  {chunks:6,}  {chunks / took:7.1f}/s   ~{naive_bytes / took / 1024:,.0f} KiB/s")
    print(f"  messages saved    {chunks / max(sent, 1):,.0f}×   bytes saved {naive_bytes / max(sent_bytes, 1):.1f}×")


def main(toy: bool = False) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("FORGE_WIDGET", None)
    real_text = " ".join(f"w{i}" for i in range(50 if toy else 1000))
    with FakeModelServer(["warm up", Turn([text(real_text, chunk=1)])]) as server, \
            tempfile.TemporaryDirectory() as cwd:
        fe = KernelFrontend(env=env, cwd=cwd)
        try:
            fe.run(KERNEL_SETUP.format(base=server.openai_base))
            fe.stdout.clear()
            fe.run(RUN_REAL)
            report("litellm stream (fake server, 1 character per chunk)", fe, len(real_text), 1)
            fe.stdout.clear()
            n = 2_000 if toy else 50_000
            fe.run(RUN_SYNTHETIC.format(n=n))
            report("synthetic stream (write entry, worker thread)", fe, n, 6)
        finally:
            fe.close()


if __name__ == "__main__":
    main(small())
