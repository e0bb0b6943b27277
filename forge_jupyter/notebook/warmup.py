"""Load the model client in the background from ``%load_ext`` on, so the first ``%%forge`` cell
of a kernel starts as fast as the next ones.

Importing litellm takes seconds (the OpenAI client's types, its providers, its price table); a
person typing the first prompt takes longer. ``%load_ext`` starts one daemon thread and returns
at once; the thread imports what a turn needs, builds the notebook's Forge (the store opened
and migrated), loads the tool-argument validator, and rehearses one call through litellm
without sending it. A cell that comes before it is done shows its live widget at once
("loading the model client…") and awaits the thread without blocking the kernel's event loop;
it does not wait for the validator, which then loads once that cell is over.

The model client waits for a quiet kernel: it starts once no cell has run for ``QUIET``
seconds (the person typing), once a cell of the person's own code has run for ``LONG_CELL``, or
when a cell needs it — not while Run All replays recorded
turns — a replayed cell asks no model, and an import competing with it on two cores made the
first one after ``%load_ext`` take 12-17 s instead of under one.

A failure here is only logged: the cell then does the same work itself and shows the error
where it belongs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

LOADING = "Loading the model client (first call of this kernel)…"
QUIET = 0.5  # seconds without a cell running before the model client loads unasked
LONG_CELL = 2.0  # seconds a cell of the person's code runs before it loads beside it


class Warmup:
    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.future: concurrent.futures.Future[None] = concurrent.futures.Future()
        # The part a replayed cell needs (the Forge and its store, no model client): done first.
        self.core_future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.timings: dict[str, float] = {}  # step → seconds, for benchmarks/bench_notebook.py
        self.thread: threading.Thread | None = None
        self._needed = threading.Event()  # a cell waits for the model client: load it now

    @property
    def done(self) -> bool:
        return self.future.done()

    def start(self) -> Warmup:
        self.thread = threading.Thread(target=self._run, name="forge-warmup", daemon=True)
        self.thread.start()
        return self

    async def wait(self) -> None:
        """Until the thread is done (the model client loaded now, if it waited for a quiet
        kernel), without blocking the event loop; never raises."""
        self._needed.set()
        if not self.future.done():
            await asyncio.wrap_future(self.future)

    async def core(self) -> None:
        """Until the Forge is built and its store open (the model client may still load)."""
        if not self.core_future.done():
            await asyncio.wrap_future(self.core_future)

    def _run(self) -> None:
        validated = False
        try:
            self._step("widget", _import_widget)
            self._step("forge", _import_core)
            self._step("store", lambda: self.controller.warm())
            self.core_future.set_result(None)
            self._step("quiet", self._until_quiet)
            if not self._needed.is_set():  # nobody waits yet: load it while the kernel is quiet
                self._step("validation", _import_validation)
                validated = True
            self._step("litellm", _import_litellm)
            self._step("rehearsal", lambda: _rehearse(self.controller))
        except Exception:
            log.warning("forge: warming up in the background failed; the first %%forge cell "
                        "will load what it needs itself", exc_info=True)
        finally:
            for future in (self.core_future, self.future):
                if not future.done():
                    future.set_result(None)
        # The tool-argument validator (jsonschema, whose format checkers take 1.7 s to import
        # here) is used only once the model calls a tool: a cell that was already waiting does
        # not wait for it too. It loads once that cell is over (importing beside it made its
        # request 0.7 s later); a tool call that comes first loads it itself.
        if not validated:
            try:
                self._until_quiet(asked=False)
                self._step("validation", _import_validation)
            except Exception:
                log.debug("forge: loading the tool-argument validator failed", exc_info=True)

    def _until_quiet(self, *, asked: bool = True) -> None:
        """Until no cell has run for QUIET seconds, a cell of the person's own code has run
        for LONG_CELL (a computation: loading beside it costs less than waiting after it), or
        (``asked``) a cell needs the model client."""
        runs = self.controller.run_log
        while not (asked and self._needed.is_set()):
            running = runs.current()
            if running is None and runs.idle_for() >= QUIET:
                return
            if running is not None and not running.forge \
                    and time.time() - running.started >= LONG_CELL:
                return
            if asked:
                self._needed.wait(0.05)  # a cell asking for it wakes this at once
            else:
                time.sleep(0.05)

    def _step(self, name: str, fn: Any) -> None:
        start = time.perf_counter()
        fn()
        self.timings[name] = time.perf_counter() - start


def _import_widget() -> None:
    from . import widget  # noqa: F401  (anywidget: the live view can show at once)


def _import_core() -> None:
    from .. import forge, render  # noqa: F401
    from ..tools import builtin  # noqa: F401
    from . import text_printer  # noqa: F401

    render.markdown_html("*warm up*")  # markdown-it loads on first use


def _import_validation() -> None:
    import jsonschema  # noqa: F401  (tool argument validation; its format checkers are slow)


def _import_litellm() -> None:
    from .. import llm

    llm.litellm()


# litellm's callback lists: when a person has one set, a rehearsal call would reach it.
CALLBACK_LISTS = ("callbacks", "success_callback", "failure_callback", "input_callback",
                  "_async_success_callback", "_async_failure_callback", "_async_input_callback")


def _rehearse(controller: Any) -> None:
    """The first request's lazy work, done before it: one streamed call through litellm's
    whole client path answered by litellm's own ``mock_response`` — no request leaves the process — so its pydantic models,
    parameter checks and stream wrapper are built here, not in front of the first real
    request. The model is the one the first prompt will use (which may start the offline demo
    model, as that prompt would)."""
    from .. import llm
    from ..model_choice import ModelChoice, resolve

    litellm = llm.litellm()
    model = getattr(controller.config, "model", None)
    # A server of the person's own and no model: the first prompt asks that server which
    # model it serves (model_choice.served_model); the rehearsal needs no name of it.
    choice = (ModelChoice("openai/warm-up") if getattr(controller.config, "api_base", None)
              and not model else resolve((model, "config")))
    # No tokenizer is loaded: litellm's up-front count is off (llm/loading.py), and forge
    # counts locally only for a provider that sends no usage.
    messages = [{"role": "user", "content": "warm up"}]
    if any(getattr(litellm, name, None) for name in CALLBACK_LISTS):
        return  # someone logs litellm's calls: a rehearsal would show up there
    params = {k: v for k, v in controller.config.forge_kwargs().items() if k in ("api_base", "api_key")}
    tool = {"type": "function", "function": {"name": "noop", "description": "warm-up",
                                             "parameters": {"type": "object", "properties": {}}}}
    response = litellm.completion(model=choice.model, messages=messages, stream=True,
                                  stream_options={"include_usage": True}, max_retries=0,
                                  tools=[tool], mock_response="ok", **{**choice.params, **params})
    for _ in response:
        pass
