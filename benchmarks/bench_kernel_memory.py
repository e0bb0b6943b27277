"""Memory per kernel (issue 30, target 2): what forge-jupyter adds to a notebook's kernel.

    .venv/bin/python benchmarks/bench_kernel_memory.py [--small]

A real kernel (jupyter_client), its resident set (``VmRSS``) read from /proc:

  - bare: started, nothing run;
  - after ``%load_ext forge_jupyter`` once the background warm-up has finished;
  - after a first ``%%forge`` cell against the fake model server (real litellm over HTTP);
  - in a second kernel, forge without its model client: ``%load_ext`` and the warm-up's first
    part (the Forge built, its store open, the tools, the widget), read by a cell that runs
    before the warm-up's quiet wait ends, so litellm is not imported yet — what forge itself
    holds, the floor while litellm makes the request.

Target: after the cell, at most 150 MB more than bare. Then each heavy package's own share,
each imported alone in a fresh interpreter (its RSS less a bare interpreter's; shares overlap
— openai is inside litellm's figure — so they do not add up), and which of them the kernel
holds after the cell, so what remains is named with its weight.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "notebook"))

from _small import small  # noqa: E402 — benchmarks/ is the script's folder
from nb_kernel import Kernel  # noqa: E402

from forge_jupyter.testing import FakeModelServer  # noqa: E402

PACKAGES = ["litellm", "openai", "aiohttp", "tiktoken", "tokenizers", "pydantic", "duckdb",
            "pandas", "pyarrow", "numpy", "matplotlib", "jinja2", "httpx"]
TARGET_MB = 150.0
WARMUP = "__import__('forge_jupyter.notebook.extension').notebook.extension.controller().warmup"
# One cell: wait for the warm-up's first part, then the kernel's own RSS and whether litellm is
# in (the cell keeps the kernel busy, so the model client's import has not started).
CORE_ONLY = (f"await {WARMUP}.core()\n"
             "import sys\n"
             "print('litellm' in sys.modules, [int(l.split()[1]) / 1024 for l in "
             "open('/proc/self/status') if l.startswith('VmRSS:')][0])")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def kernel_pid(k: Kernel) -> int:
    got = k.run("import os; print(os.getpid())")
    return int(got.stdout.strip())


def loaded_packages(k: Kernel) -> set[str]:
    got = k.run("import sys; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    return set(got.stdout.split())


def alone_mb(package: str) -> float | None:
    """RSS a fresh interpreter gains by importing ``package`` (None: not installed)."""
    code = ("import os, sys\n"
            "def rss():\n"
            "    for l in open('/proc/self/status'):\n"
            "        if l.startswith('VmRSS:'): return int(l.split()[1]) / 1024\n"
            "before = rss()\n"
            f"try:\n    import {package}\nexcept ImportError:\n    print('-'); sys.exit()\n"
            "print(rss() - before)\n")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=180).stdout.strip().splitlines()
    return None if not out or out[-1] == "-" else float(out[-1])


def main() -> None:
    toy = small()
    root = Path(tempfile.mkdtemp(prefix="bench_kernel_memory_"))
    with FakeModelServer(["Hello from the fake model."]) as server:
        env = {"FORGE_MODEL": "openai/gpt-4o-mini", "FORGE_API_BASE": server.openai_base,
               "FORGE_API_KEY": "sk-fake", "FORGE_DB": str(root / "forge.duckdb"),
               "FORGE_WIDGET": "off", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        k = Kernel(env, cwd=str(root))
        try:
            pid = kernel_pid(k)
            bare = rss_mb(pid)
            k.run("%load_ext forge_jupyter")
            k.run(f"await {WARMUP}.wait()", timeout=180)
            loaded = rss_mb(pid)
            cell = k.run("%%forge\nsay hello", timeout=180)
            assert cell.status == "ok", cell.text
            time.sleep(0.5)
            after = rss_mb(pid)
            held = loaded_packages(k)
        finally:
            k.close()
        k = Kernel(env, cwd=str(root))
        try:
            core_bare = rss_mb(kernel_pid(k))
            k.run("%load_ext forge_jupyter")
            got = k.run(CORE_ONLY, timeout=180)
            imported, core = got.stdout.split()
        finally:
            k.close()
    print(f"kernel RSS: bare {bare:.0f} MB, after %load_ext {loaded:.0f} MB "
          f"(+{loaded - bare:.0f}), after a first %%forge cell {after:.0f} MB "
          f"(+{after - bare:.0f}; target +{TARGET_MB:.0f})")
    print(f"forge without its model client (another kernel: bare {core_bare:.0f} MB, after "
          f"%load_ext and the Forge built, its store open): {float(core):.0f} MB "
          f"(+{float(core) - core_bare:.0f}); litellm imported: {imported}")
    print("each package imported alone in a fresh interpreter (shares overlap):")
    for package in PACKAGES[:3] if toy else PACKAGES:
        mb = alone_mb(package)
        where = "held by the kernel after the cell" if package in held else "not imported"
        print(f"  {package:<11} {'not installed' if mb is None else f'{mb:6.0f} MB'}  {where}")


if __name__ == "__main__":
    main()
