"""What a tool is: a name, a JSON Schema, a description, and a function that runs it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..message import Event, Part, PatchFile, SessionInfo
from ..scrub import Scrubber
from .permission import (
    ARGUMENT_KINDS,
    Action,
    ArgumentKind,
    Permissions,
    Subject,
    declare_argument,
    kind_of_arguments,
    subject_of,
)
from .schema import function_schema
from .threads import Stop, run_in_tool_thread

if TYPE_CHECKING:  # the services' types, named without importing the layers above tools/
    from ..agents import AgentSet
    from ..memory import LongTermMemory
    from ..session.question import Questions
    from ..store.base import Store
    from .notebook_edit import NotebookEditor
    from .notebook_read import NotebookReader


TITLE_CHARS = 80  # longer first lines are cut at a word end, with "…"


def title_line(text: str | None, limit: int = TITLE_CHARS) -> str | None:
    """A title out of ``text``: its first line with words in it, whitespace runs made one
    space, at most ``limit`` characters — cut at a word end with "…", never mid-word with
    nothing to say so; None for text with no words."""
    line = next((" ".join(raw.split()) for raw in (text or "").splitlines() if raw.strip()), "")
    if not line:
        return None
    if len(line) <= limit:
        return line
    cut = line[:limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word end not too far back; else cut inside the word
        cut = cut[:space]
    return cut.rstrip() + "…"


@dataclass(frozen=True)
class ShownImage:
    """An image a tool showed, as it came (untrusted bytes): kept and offered to a vision model
    by the run (session/images.py), within the image limits (llm/images.py)."""

    data: bytes
    mime: str
    label: str  # what the model reads of it otherwise: "image/png 572×454"


@dataclass
class ToolResult:
    """What a tool returns: the output the model reads, a title, the files it changed (the
    Processor turns them into the step's PatchPart), the images it showed, and free-form
    metadata for the part."""

    output: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    changes: list[PatchFile] = field(default_factory=list)
    images: list[ShownImage] = field(default_factory=list)


@dataclass(frozen=True)
class Prepared:
    """What a tool looked up before its permission check (``Tool.prepare``): what the person
    is shown beside the arguments when asked (a cell's current source), why this call asks even
    where a rule allows it, and what it hands to its own run (``ToolContext.prepared``), so it
    runs exactly what the person saw."""

    show: dict[str, Any] = field(default_factory=dict)
    ask: str | None = None
    state: Any = None


class PartWriter(Protocol):
    """The run's write entry (``session.writer.Writer`` is one), as a tool may use it."""

    scrubber: Scrubber  # this turn's: it knows the run's keys

    def update_part(self, part: Part) -> Part: ...
    def record(self, event: Event) -> Event: ...  # an event row, scrubbed there


class Allowance(Protocol):
    """What a prompt may still use, shared with its subagents (``session.allowance`` is it)."""

    def child_refused(self) -> str | None: ...
    def child(self) -> Allowance: ...


class Run(Protocol):
    """What a tool may use of the run its call belongs to (``session.context.RunContext`` is
    one): the session, the model, the turn's layered permissions, the write entry, a flush."""

    @property
    def session(self) -> SessionInfo: ...
    @property
    def model(self) -> str: ...
    @property
    def permissions(self) -> Permissions | None: ...
    @property
    def writer(self) -> PartWriter: ...
    @property
    def allowance(self) -> Allowance: ...
    # the tool table the run's next model request offers (tool_search.py loads tools into it)
    tools: dict[str, Tool]
    aborted: bool  # Stop was pressed: work a call left running should stop too
    async def flush(self) -> None: ...


@dataclass
class ToolContext:
    """What a running tool may know and use about the call it serves."""

    session_id: str
    message_id: str
    call_id: str
    part_id: str
    # The services a builtin tool uses, typed (the run fills them from its owner's services,
    # session/services.py); None or empty outside a Forge's run (a direct call, a benchmark).
    store: Store | None = None  # the history (the history tool; the file tools' fence)
    namespace: dict[str, Any] = field(default_factory=dict)  # the notebook's variables
    questions: Questions | None = None  # who answers the question tool
    memory: LongTermMemory | None = None  # long-term memory while it is on
    notebook: NotebookReader | None = None  # the notebook the kernel runs (notebook_read)
    editor: NotebookEditor | None = None  # changes and runs its cells through the page
    agents: AgentSet | None = None  # the agents a subagent (task) may run as
    # A new child session of the owner (``Forge.session``): what the task tool runs in.
    new_session: Callable[..., Any] | None = None
    forge: Any = None  # the Forge facade itself, for a custom tool that wants more
    root: str | None = None  # the session's directory: file tools never leave it
    output_dir: str | None = None  # where full outputs of truncated results are saved
    run: Run | None = None  # the run the call belongs to; None outside a run (a direct call)
    # Live output, one route for both: the run publishes them on its bus (printed text scrubbed).
    emit_output: Callable[[str, str], None] | None = None  # (stream, text) it printed
    emit_display: Callable[[dict[str, str]], None] | None = None  # a MIME bundle (a plot) to show
    display_available: bool = False  # a notebook front end shows what emit_display sends
    # Set when the call ends early (its timeout, Stop): a tool thread polls it or registers
    # how to interrupt its work (tools/threads.py)
    stop: Stop = field(default_factory=Stop)
    prepared: Prepared | None = None  # what the tool's ``prepare`` found, the person approved


ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


@dataclass
class Tool:
    """A tool the model may call.

    ``execute(args, ctx)`` receives the validated arguments as a dict. ``mutating`` tools
    change files or state: the ``build`` agent asks before running them, ``plan`` denies them.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[[dict[str, Any], ToolContext], Any]
    mutating: bool = False
    timeout: float | None = None  # seconds; None: the Forge's default
    requires: frozenset[str] = frozenset()  # capabilities the model must have (e.g. "vision")
    subject_arg: str | None = None  # the argument permission patterns match (default: path, code…)
    # (args, root, output_dir) → what permission patterns match, instead of ``subject_arg``:
    # file tools give their path normalized under the root (paths.path_subject); a ToolError
    # raised here refuses the call before any rule is read.
    subject: Callable[[dict[str, Any], str | None, str | None], Subject] | None = None
    flag: str | None = None  # offered only when this flag is on (Forge(flags={...}))
    # What a call says when the flag is off and the model calls it anyway (why it is not
    # offered here, what to do instead); None: the plain "Unknown tool".
    absent: str | None = None
    models: Callable[[str], bool] | None = None  # offered only to the models this accepts
    # The agent layer's default for it, before the agent's and the Forge's own rules (which may
    # narrow or widen it): "ask" makes even a read-only tool ask (webfetch).
    permission: Action | None = None
    # What its argument is (path, url, name, code, data): a code tool's rules are whole-tool
    # or exact (tools/permission.py). None: the builtins' table, else judged from the schema.
    argument: ArgumentKind | None = None
    # An MCP server's tool: offered through tool_search when such tools are many
    # (tool_search.py), shortened under the lean profile (profiles.py).
    lazy: bool = False
    # Looked up before the permission check (a cell's source from the page): what the approval
    # shows, whether the call asks even where a rule allows it; a ToolError refuses the call.
    prepare: Callable[[dict[str, Any], ToolContext], Awaitable[Prepared]] | None = None
    _validator: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        inferred = kind_of_arguments(self.parameters, self.subject_arg)
        if self.argument is None:
            self.argument = "code" if inferred == "code" else ARGUMENT_KINDS.get(self.name, inferred)
        declare_argument(self.name, self.argument)

    def definition(self) -> dict[str, Any]:
        """The entry in the model's tool table (OpenAI function format)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def permission_subject(self, args: dict[str, Any], root: str | None = None,
                           output_dir: str | None = None) -> Subject:
        """What this call's permission rules are matched against."""
        if self.subject is not None:
            return self.subject(args, root, output_dir)
        return subject_of(args, self.subject_arg)

    def validation_errors(self, args: Any) -> list[str]:
        """Messages for every way ``args`` fails the schema (empty when valid)."""
        if self._validator is None:
            import jsonschema  # on first use: its format checkers cost seconds to import

            cls = jsonschema.validators.validator_for(self.parameters)
            self._validator = cls(self.parameters)
        errors = sorted(self._validator.iter_errors(args), key=lambda e: list(e.absolute_path))
        out = []
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path) or "(arguments)"
            out.append(f"{where}: {e.message}")
        return out

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = self.execute(args, ctx)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ToolResult):
            return result
        if result is None:
            return ToolResult(output="")
        return ToolResult(output=result if isinstance(result, str) else repr(result))


def tool_from_function(
    fn: ToolFunction,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    timeout: float | None = None,
    argument: ArgumentKind | None = None,
) -> Tool:
    """A Tool from a plain (sync or async) function: signature and docstring become the schema.

    A sync function runs in a tool thread (tools/threads.py) so it never blocks the kernel's
    event loop, and a call that never returns is abandoned, not waited for.
    A parameter named ``ctx`` receives the ToolContext and is not shown to the model.
    ``argument="code"`` says the tool runs what it is given: its rules are whole-tool or exact.
    """
    schema, doc = function_schema(fn)
    wants_ctx = "ctx" in inspect.signature(fn).parameters
    is_async = inspect.iscoroutinefunction(fn)

    async def execute(args: dict[str, Any], ctx: ToolContext) -> Any:
        kwargs = dict(args)
        if wants_ctx:
            kwargs["ctx"] = ctx
        if is_async:
            return await fn(**kwargs)
        return await run_in_tool_thread(functools.partial(fn, **kwargs), name=fn.__name__,
                                        stop=ctx.stop)

    return Tool(
        name=name or fn.__name__,
        description=description or doc or fn.__name__,
        parameters=schema,
        execute=execute,
        mutating=mutating,
        timeout=timeout,
        argument=argument,
    )
