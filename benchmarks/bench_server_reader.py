"""Does the panel's REST API slow the kernels down? Prompt latency of 4 processes prompting at
once, side by side in one run (prints; not a test):

1. each process on a file of its own;
2. all four on one DuckDB file;
3. all four on one file while a fifth process — a real Jupyter server with the forge_jupyter
   extension — answers a client that pages through the sessions and every session's
   messages over HTTP in a loop, as fast as it answers;
4. the control: as 3, but the server reads another file (of the same size), so that the
   reader costs the prompting processes CPU (the machine's cores are shared) and nothing
   else — 3 against 4 is what sharing the file's lock with a reader costs.

Each prompting process is a real ``Forge`` (litellm over loopback HTTP to the fake model
server of this process, one streamed answer per prompt) that warms up, waits for the common
start, then prompts its own session N times, timing each ``prompt()``. The conditions run in
rounds (1, 2, 3, 1, 2, 3, …) so the machine's load moves them alike; the figures pool the
rounds. Printed: p50/p99/max prompt latency and errors per condition, the ratios, and what the
reader did (requests, latency, errors).

    .venv/bin/python benchmarks/bench_server_reader.py [--prompts 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from _small import HELP  # noqa: E402 — benchmarks/ is the script's folder

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PROCS = 4
TOKEN = "bench-token"
ANSWER = " ".join(f"word{i}" for i in range(60))  # ~420 characters, streamed in 35 chunks


# --------------------------------------------------------------------- a prompting process


def prompter(db: str, api_base: str, name: str, prompts: int) -> None:
    """Warm up, say ready, wait for "go" on stdin, prompt ``prompts`` times; print a report."""
    from forge_jupyter import Forge

    forge = Forge(db=db, model="openai/fake-model", api_base=api_base, api_key="sk-fake",
                  builtin_tools=False, load_plugins=False)
    session = forge.session(name)
    session.prompt("warm up")  # litellm's lazy imports and first connection, before timing
    print("ready", flush=True)
    sys.stdin.readline()
    latencies, errors = [], []
    for i in range(prompts):
        t = time.perf_counter()
        try:
            answer = session.prompt(f"question {i}")
            if answer.status != "completed":
                errors.append(f"{answer.status}: {answer.error}")
        except Exception as error:  # counted, and shown
            errors.append(repr(error))
        latencies.append(time.perf_counter() - t)
    forge.close()
    print(json.dumps({"latencies": latencies, "errors": errors}), flush=True)


# ----------------------------------------------------------------------- the API's reader


def reader(base: str) -> None:
    """Page through every session and all its messages, again and again, until stdin closes
    (a thread watches it); print a report."""
    import threading

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    latencies, errors, pages = [], [], 0

    def get(path: str) -> dict:
        nonlocal pages
        request = urllib.request.Request(base + path,
                                         headers={"Authorization": f"token {TOKEN}"})
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                body = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as error:
            errors.append(f"{path}: {error}")
            body = {}
        latencies.append(time.perf_counter() - t)
        pages += 1
        return body

    while not stop.is_set():
        cursor, ids = "", []
        while True:
            page = get(f"/forge/api/sessions?limit=50{cursor}")
            ids += [s["id"] for s in page.get("sessions", [])]
            if not page.get("next_cursor"):
                break
            cursor = f"&cursor={page['next_cursor']}"
        for sid in ids:
            cursor = ""
            while not stop.is_set():
                page = get(f"/forge/api/sessions/{sid}/messages?limit=100{cursor}")
                if not page.get("next_cursor"):
                    break
                cursor = f"&cursor={page['next_cursor']}"
    print(json.dumps({"latencies": latencies, "errors": errors, "pages": pages}), flush=True)


# ----------------------------------------------------------------------------- the runs


def _child(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, **kw)


def run_prompters(files: list[Path], api_base: str, prompts: int, round_: int,
                  base: str | None) -> tuple[list[float], list[str], dict | None]:
    workers = [_child("--prompter", str(f), api_base, f"p{k}-r{round_}", str(prompts))
               for k, f in enumerate(files)]
    for w in workers:
        if w.stdout.readline().strip() != "ready":
            raise SystemExit("a prompting process did not start")
    api = _child("--reader", base) if base else None
    if api is not None:
        time.sleep(0.5)  # reading already when the prompts start
    for w in workers:
        w.stdin.write("go\n")
        w.stdin.flush()
    reports = [json.loads(w.communicate()[0].splitlines()[-1]) for w in workers]
    read = json.loads(api.communicate("")[0].splitlines()[-1]) if api is not None else None
    latencies = [x for r in reports for x in r["latencies"]]
    return latencies, [e for r in reports for e in r["errors"]], read


def start_server(folder: Path, db: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = folder / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"jpserver_extensions": {"forge_jupyter": True}, "port": port,
                      "port_retries": 0, "open_browser": False, "ip": "127.0.0.1",
                      "root_dir": str(folder), "allow_root": True},
        "IdentityProvider": {"token": TOKEN},
        "Forge": {"db": str(db), "tenant": "default"},
    }))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config))
    server = subprocess.Popen([sys.executable, "-m", "jupyter_server"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(urllib.request.Request(
                base + "/forge/api/sessions", headers={"Authorization": f"token {TOKEN}"}),
                timeout=2).read()
            return server, base
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the Jupyter server did not answer on /forge/api/ within 60 s")


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=40, help="prompts per process per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prompter", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--reader", help=argparse.SUPPRESS)
    parser.add_argument("--procs", type=int, default=PROCS, help="prompting processes")
    parser.add_argument("--small", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.small:
        args.prompts, args.rounds, args.procs = 1, 1, 1
    if args.prompter:
        db, api_base, name, n = args.prompter
        return prompter(db, api_base, name, int(n))
    if args.reader:
        return reader(args.reader)

    from forge_jupyter.testing import FakeModelServer, Turn

    print(f"# bench_server_reader — {args.procs} processes x {args.prompts} prompts x "
          f"{args.rounds} rounds, python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    conditions = ("separate files", "one shared file", "one shared file + API reader",
                  "shared file + reader elsewhere")
    if args.small:  # the one condition that runs every part (prompters, server, reader)
        conditions = conditions[2:3]
    figures: dict[str, list[float]] = {c: [] for c in conditions}
    failures: dict[str, list[str]] = {c: [] for c in conditions}
    reads: dict[str, list[dict]] = {c: [] for c in conditions}
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as tmp, FakeModelServer() as fake:
        folder = Path(tmp)
        server, base = start_server(folder, folder / "shared-read.duckdb")
        try:
            for r in range(args.rounds):
                for condition in conditions:
                    if condition == "separate files":
                        files = [folder / f"own-{k}.duckdb" for k in range(args.procs)]
                    elif condition == "one shared file + API reader":
                        files = [folder / "shared-read.duckdb"] * args.procs  # what the server reads
                    else:  # the server reads shared-read.duckdb, written as often as this one
                        files = [folder / "shared.duckdb"] * args.procs
                    fake.add(*[Turn.text(ANSWER, chunk=12, usage=(400, 60))
                               for _ in range(args.procs * (args.prompts + 1))])
                    latencies, errors, read = run_prompters(
                        files, fake.openai_base, args.prompts, r,
                        base if "reader" in condition else None)
                    figures[condition] += latencies
                    failures[condition] += errors
                    if read is not None:
                        reads[condition].append(read)
                    print(f"  round {r + 1}: {condition:<30} p99 {_ms(latencies, 0.99):7.0f} ms",
                          flush=True)
        finally:
            server.terminate()
            server.wait(30)

    print(f"\n{'condition':<32}{'prompts':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'errors':>8}")
    for c in conditions:
        v = figures[c]
        print(f"{c:<32}{len(v):>8}{_ms(v, 0.5):>9.0f}{_ms(v, 0.99):>9.0f}"
              f"{max(v) * 1e3:>9.0f}{len(failures[c]):>8}")
    p99 = {c: _ms(figures[c], 0.99) for c in conditions}
    p50 = {c: _ms(figures[c], 0.5) for c in conditions}
    print()
    if len(conditions) == 4:  # --small runs one condition: no ratios
        separate, shared, read, elsewhere = conditions
        for label, a, b in (("shared / separate", shared, separate),
                            ("shared + reader / shared", read, shared),
                            ("shared + reader / separate", read, separate),
                            ("reader elsewhere / shared (CPU only)", elsewhere, shared),
                            ("shared + reader / reader elsewhere (the lock)", read, elsewhere)):
            print(f"{label:<48} p99 {p99[a] / p99[b]:.2f}x   p50 {p50[a] / p50[b]:.2f}x")
    api_errors = []
    print()
    for c in [c for c in conditions if "reader" in c]:
        api = [x for r in reads[c] for x in r["latencies"]]
        api_errors += [e for r in reads[c] for e in r["errors"]]
        print(f"API reader, {c}: {sum(r['pages'] for r in reads[c])} pages read meanwhile, "
              f"p50 {statistics.median(api) * 1e3:.0f} ms, p99 {_ms(api, 0.99):.0f} ms, "
              f"max {max(api) * 1e3:.0f} ms, "
              f"{sum(len(r['errors']) for r in reads[c])} errors")
    for c in conditions:
        for e in failures[c][:3]:
            print(f"  {c}: {e}")
    for e in api_errors[:3]:
        print(f"  API: {e}")


if __name__ == "__main__":
    main()
