"""``%%forge`` and ``%forge``: the notebook surface (DESIGN §7).

In a kernel, ``%%forge`` cells are rewritten by an input transformer into a top-level
``await`` of the run, so the cell is genuinely asynchronous: it stays busy for the run, its
output attaches to it, and ipykernel (≥ 7.4) keeps handling widget messages meanwhile —
Approve, Deny and Stop work while the cell is still running. Everywhere else (terminal
IPython, ``ipython script.ipy``, ``run_cell_magic``) ``%%forge`` is an ordinary cell magic that
runs the same turn to its end; and the transformer is invisible to IPython's "is this cell
complete?" check, so in a terminal ``%%forge`` + Enter waits for the prompt like ``%%timeit``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand

from ..errors import ForgeError
from ..ids import match_short, short
from ..tools.nested import refuse_nested
from . import cell_errors, command_magic, panel, pointing, replay_cell
from .cell_options import CELL_USAGE, cell_parser, did_you_mean, parse_tools
from .controller import NotebookForge
from .interpolate import interpolate

LINE_HELP = """\
%forge sessions               the sessions in the store (a DataFrame)
%forge use NAME|ID            make a session this notebook's current one
%forge new [NAME]             start a new session (and make it current)
%forge fork [MESSAGE_ID]      fork the current session at a finished message (default: its last)
%forge revert [TURN] [--code|--conversation|--both]   take back a turn and the later ones
%forge compact                compact the current session now
%forge history [--all]        the current session's messages (--all: with superseded ones)
%forge cost [--by day|session|model|agent|cell|replayed]   token and cost totals
%forge config                 every setting, its value and where it came from
%forge sql SELECT …           a read-only query over the history views
%forge memory search|get|sync|path …   long-term memory (%forge memory for its usage)
%forge stop                   stop the current session's running prompt
%forge mcp [restart NAME|trust|reload]   MCP servers, their state and tools
%forge skills                 the skills the agent can load
%forge commands               the commands %%forge /NAME runs (.forge/commands/NAME.md)
%forge shell CMD              run CMD in the session's folder; the model sees it next turn
%forge help                   this text

%%forge cell options:
""" + CELL_USAGE


@magics_class
class ForgeMagics(Magics):
    def __init__(self, shell: Any, controller: NotebookForge) -> None:
        super().__init__(shell)
        self.controller = controller

    # -- %%forge ---------------------------------------------------------------------------

    async def run_cell(self, line: str, body: str) -> Any:
        """Run one ``%%forge`` cell: the live view shows first, then the run (DESIGN §7)."""
        _not_nested("run a %%forge cell")
        c = self.controller
        named = command_magic.split_line(line)  # %%forge [options] /name args
        try:
            opts = cell_parser().parse_args(shlex.split(named[0] if named else line))
        except ValueError as exc:
            raise UsageError(f"{exc}\nusage: {CELL_USAGE}") from None
        pointed = pointing.read(body)
        body = pointed.text  # @@ is now @
        if named:
            text = command_magic.command_prompt(c, opts, named[1], named[2], body, interpolate,
                                                self.shell.user_ns)
        else:
            text = interpolate(body, self.shell.user_ns).strip()
        if not text:
            raise UsageError(f"the cell is empty: write the prompt below the %%forge line\nusage: {CELL_USAGE}")
        toggles = parse_tools(opts.tools)
        if opts.compare is not None:  # each model in a fork, side by side (compare_cell.py)
            from .compare_cell import run_compare

            return await run_compare(self.controller, opts, text, lambda: self._session(opts),
                                     pointed)
        from .kernel_status import cell_parent
        from .warmup import LOADING
        from .widget import TurnView

        view = TurnView(throttle_hz=c.config.widget_throttle, text_only=c.config.widget == "off",
                        origin="panel" if opts.panel else "cell", prompt=text)
        warmup = c.warmup
        busy: Any = contextlib.nullcontext()
        kernel = getattr(self.shell, "kernel", None)
        if c.status is not None and kernel is not None and not opts.background:
            busy = c.status.running(cell_parent(kernel))
        with busy:
            # Within a moment of Run: the widget, saying what it waits for on a first call.
            view.show(loading=None if warmup is None or warmup.done else LOADING)
            try:
                if warmup is not None:  # a replayed cell needs no model client: not yet
                    await warmup.core()
                session, forge = self._session(opts)
                origin = c.origin()
                plan = await replay_cell.replay_plan(c, opts, session, text, origin)
                set_aside = None
                if plan is not None:  # it may start a new session (replay_cell.py)
                    session = plan.session
                else:
                    if not (opts.new or opts.session):  # a live turn leaves a poisoned session
                        session, set_aside = await asyncio.to_thread(c.set_aside_if_poisoned, session)
                    if warmup is not None:
                        await warmup.wait()
            except (KeyboardInterrupt, asyncio.CancelledError):
                view.finish([])
                raise cell_errors.short_interrupt() from None
            except BaseException:
                view.finish([])
                raise
            if view.stop_requested:
                view.finish([])
                print("Stopped before the run began.")
                return None
            view.follow(forge, session)
            if set_aside is not None:  # said live, kept on the turn's record (render/fresh_mark.py)
                forge.announce(session.id, c.set_aside_notice(set_aside, session))
                origin["fresh_start"] = set_aside.mark()
            # The question tool joins where a person can click (a live widget, a side panel);
            # each cell starts from Forge.flags again (controller.py), so it never sticks.
            if view.widget is not None or panel.HUB.attached:
                forge.flags = forge.flags | {"question"}  # (tools/question.py)
            from ..tools.notebook_read import FLAG as NOTEBOOK_FLAG

            forge.flags = forge.flags | {NOTEBOOK_FLAG}  # notebook_read (notebook/cells/)
            if panel.HUB.attached:  # a page with the extension applies cell edits
                from ..tools.notebook_edit import FLAG as CELLS_FLAG

                forge.flags = forge.flags | {CELLS_FLAG}
            if opts.panel:  # no cell: the prompt came from the side panel
                origin.update(cell_id=None, execution_count=None, surface="panel")
            options = dict(model=opts.model, agent=opts.agent, tools=toggles, budget=opts.budget,
                           max_tokens=opts.max_tokens, origin=origin)
            if plan is None:  # a replayed turn keeps its recorded prompt
                # what it points at (pointing.py); one pointing at nothing sends nothing
                options.update(await pointing.attach(c, session, pointed, opts.images, view))
                options["context"] = c.context_note(origin)

            async def run() -> Any:
                outcome = None
                try:
                    if plan is not None:
                        outcome = await replay_cell.replay(plan, text, origin=origin,
                                                           agent=opts.agent)
                        answer = outcome.message
                    else:
                        answer = await session.prompt_async(text, **options)
                except ForgeError as exc:
                    view.finish([])
                    raise UsageError(str(exc)) from None
                except (KeyboardInterrupt, asyncio.CancelledError):
                    turn = _turn(session)  # no value follows: the record keeps the partial answer
                    view.finish(turn, with_answer=_has_text(turn))
                    raise cell_errors.short_interrupt() from None
                except BaseException:
                    view.finish(_turn(session))
                    raise
                # A turn that ended in error fails its cell (Run All stops, CI sees why); not
                # in the background (the cell has moved on) nor from the panel (no cell).
                failed = None if opts.background or opts.panel else cell_errors.model_error(answer)
                # No cell value shows the answer (in the background, or failed): the record does.
                turn = _turn(session, answer.parent_id)
                view.finish(turn, with_answer=opts.background or (failed is not None and _has_text(turn)))
                c.replay_entered.add(session.id)  # the next cell runs after this turn
                if plan is not None and outcome is not None:
                    replay_cell.check(plan, outcome)
                if failed is not None:
                    raise failed
                return answer

            if opts.background:
                task = asyncio.ensure_future(run())
                c.background[session.id] = task
                task.add_done_callback(lambda t: c.background.pop(session.id, None))
                return None
            answer = await run()
            # The panel shows the answer; a value would only send it again as HTML.
            return None if opts.panel and view.widget is None and not view.fallback else answer

    def _session(self, opts: argparse.Namespace) -> tuple[Any, Any]:
        """The cell's session (``-s``, ``--new`` or the notebook's current one) and the Forge."""
        c = self.controller
        try:
            if opts.new:
                session = c.new(opts.session)
            elif opts.session:
                session = c.find(opts.session)
                c.use(session)
            else:
                session = c.current()
            return session, c.forge
        except ForgeError as exc:
            raise UsageError(str(exc)) from None

    @no_var_expand  # {var} is filled by run_cell, once, as in a kernel (no second pass)
    @cell_magic("forge")
    def forge_cell(self, line: str, cell: str) -> Any:
        """%%forge [options] — the cell is a prompt to the agent (%forge help lists options)."""
        # in a kernel the cell is rewritten to an await (transform_forge_cells); here (terminal
        # IPython, a script) on a helper thread when a loop runs: an interrupt stops the turn
        from ..session.prompt import run_sync  # not at %load_ext: it imports the harness

        return run_sync(lambda: self.run_cell(line, cell))

    # -- %forge ----------------------------------------------------------------------------

    @line_magic
    def forge(self, line: str) -> Any:
        """Manage forge sessions and read the history: %forge help."""
        _not_nested("run %forge")
        head = line.split(None, 1)
        if head and head[0] == "shell":  # the command as written: quotes are the shell's
            return command_magic.shell_command(self.controller, head[1] if len(head) > 1 else "")
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not words or words[0] in ("help", "-h", "--help"):
            print(LINE_HELP)
            return None
        command, args = words[0], words[1:]
        handler = getattr(self, f"_cmd_{command}", None)
        if handler is None:
            known = [name[5:] for name in dir(self) if name.startswith("_cmd_")] + ["help"]
            raise UsageError(f"unknown %forge command {command!r}{did_you_mean(command, known)}"
                             f"\n\n{LINE_HELP}")
        try:
            return handler(args, line.split(None, 1)[1] if len(words) > 1 else "")
        except ForgeError as exc:
            raise UsageError(str(exc)) from None

    def _cmd_sessions(self, args: list[str], rest: str) -> Any:
        return self.controller.forge.sessions()

    def _cmd_use(self, args: list[str], rest: str) -> Any:
        if len(args) != 1:
            raise UsageError("usage: %forge use NAME|ID")
        session = self.controller.find(args[0])
        self.controller.use(session)
        print(f"Using session {session.name or session.id} ({session.id}).")

    def _cmd_new(self, args: list[str], rest: str) -> Any:
        if len(args) > 1:
            raise UsageError("usage: %forge new [NAME]")
        session = self.controller.new(args[0] if args else None)
        print(f"New session {session.name or session.id} ({session.id}) is now current.")

    def _cmd_fork(self, args: list[str], rest: str) -> Any:
        if len(args) > 1:
            raise UsageError("usage: %forge fork [MESSAGE_ID]")
        session = self.controller.current()
        at = args[0] if args else None
        if at is not None and ("…" in at or "..." in at):  # as %forge history shows it
            try:
                at = match_short(at, (m.id for m in session.messages())) or at
            except LookupError as exc:
                raise UsageError(str(exc)) from None
        forked = session.fork(at=at)
        self.controller.use(forked)
        # short ids (ses_…k3Vq9a): one line that does not wrap, each one usable as written
        # (%forge use, %%forge -s, %forge fork take them)
        title = f" “{forked.info.title}”" if forked.info.title else ""
        print(f"Forked{title} into session {short(forked.id)} (from "
              f"{short(forked.info.forked_from_session or '')} at "
              f"{short(forked.info.forked_from_message or '')}); it is now current.")

    def _cmd_revert(self, args: list[str], rest: str) -> Any:
        from .revert import revert_sync  # a line of its own is awaited instead (revert.py)

        return revert_sync(self.controller, rest)

    def _cmd_compact(self, args: list[str], rest: str) -> Any:
        session = self.controller.current()
        summary = session.compact()
        print(f"Compacted session {session.name or short(session.id)}: summary {short(summary.id)} "
              "(%forge history --all shows what it replaced).")

    def _cmd_history(self, args: list[str], rest: str) -> Any:
        if args not in ([], ["--all"]):
            raise UsageError("usage: %forge history [--all]")
        session = self.controller.current()
        return self.controller.forge.history(session.id, include_superseded=bool(args))

    def _cmd_cost(self, args: list[str], rest: str) -> Any:
        by = "session"
        if args:
            if len(args) != 2 or args[0] != "--by":
                raise UsageError("usage: %forge cost [--by day|session|model|agent|cell|replayed]")
            by = args[1]
        return self.controller.forge.costs(by=by)

    def _cmd_config(self, args: list[str], rest: str) -> Any:
        import pandas as pd

        rows = self.controller.config.effective()
        return pd.DataFrame(rows, columns=["setting", "value", "source"]).set_index("setting")

    def _cmd_sql(self, args: list[str], rest: str) -> Any:
        if not rest.strip():
            raise UsageError("usage: %forge sql SELECT …")
        return self.controller.forge.sql(rest)

    def _cmd_mcp(self, args: list[str], rest: str) -> Any:
        from .mcp_magic import mcp_command

        return mcp_command(self.controller.forge, args)

    def _cmd_skills(self, args: list[str], rest: str) -> Any:
        from .mcp_magic import skills_command

        return skills_command(self.controller.forge, args)

    def _cmd_commands(self, args: list[str], rest: str) -> Any:
        return command_magic.commands_command(self.controller.forge, args)

    def _cmd_memory(self, args: list[str], rest: str) -> Any:
        from .memory_magic import memory_command

        return memory_command(self.controller.forge, args)

    def _cmd_stop(self, args: list[str], rest: str) -> Any:
        c = self.controller
        if not c.built or c.current_session_id is None:
            print("Nothing is running.")
            return None
        from .cells.run import stop_runs  # and a cell notebook_run left running

        stopped = c.current().abort() | stop_runs()
        print("Stopping the running prompt." if stopped else "Nothing is running.")


def _not_nested(what: str) -> None:
    try:  # code a tool runs may not start forge again (tools/nested.py)
        refuse_nested(what)
    except ForgeError as exc:
        raise UsageError(str(exc)) from None


def _turn(session: Any, user_message_id: str | None = None) -> list:
    """The messages of the turn (from its user message, else the latest one, on) as stored,
    for the widget's record: read from that message on, never the whole session."""
    from ..session.view import load_turn

    session.forge.flush()
    return load_turn(session.forge.store, session.id, user_message_id)


def _has_text(turn: list) -> bool:
    final = next((m for m in reversed(turn) if m.role == "assistant"), None)
    return bool(final is not None and final.text)


def transform_forge_cells(lines: list[str]) -> list[str]:
    """In a kernel, rewrite a ``%%forge`` cell into a top-level await of its run (an IPython
    cleanup transform); elsewhere the cell magic runs it."""
    if not lines or not lines[0].startswith("%%forge"):
        return lines
    first = lines[0]
    if not (first == "%%forge\n" or first == "%%forge" or first[7:8].isspace()):
        return lines  # %%forgery or another magic
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None or not hasattr(shell, "_forge_magics"):
        return lines  # terminal IPython, a script: the %%forge cell magic
    line = first[len("%%forge"):].strip()
    body = "".join(lines[1:])
    return [f"await get_ipython()._forge_magics.run_cell({line!r}, {body!r})\n"]


# The rewrite changes how a cell runs, not whether it is complete: IPython's check_complete
# skips transforms marked so, and sees "%%forge" as the cell magic it is (in a terminal,
# Enter after it waits for the prompt, like %%timeit).
transform_forge_cells.has_side_effects = True  # type: ignore[attr-defined]
