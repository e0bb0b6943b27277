"""MCP servers as people already write them: an ``mcpServers`` JSON object.

The format of Claude Desktop, VS Code (``servers``) and opencode, from three places, later ones
winning by server name: ``~/.forge/mcp.json`` (the person's), ``.forge/mcp.json`` in the
notebook's folder (the project's), and ``Forge(mcp_servers=…)`` / ``%config Forge.mcp_servers``.

    {"mcpServers": {
       "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
       "github": {"url": "https://api.githubcopilot.com/mcp/",
                  "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}, "timeout": 60}}}

Everything here is untrusted text: a server's name becomes part of its tools' names, so it is
reduced to ``[A-Za-z0-9_-]`` (``__`` is the separator, so runs of ``_`` become one). A project
file can start any command, like a cloned repository's build script: its servers start only
once the person trusted that file's exact content (``%forge mcp trust``), as VS Code and Claude
Code ask before running a workspace's servers. Trust is keyed by the project folder's own file
and its content; the file is read as a project file (project_files.py: a link, or one leading
out of the folder, is refused, so a clone cannot point at another project's trusted file), and
its servers run in the project folder unless their ``cwd`` says otherwise (relative to it).
``${VAR}``, ``${env:VAR}``, ``${VAR:-default}`` and ``${workspaceFolder}`` in ``command``,
``args``, ``env``, ``cwd``, ``headers`` and ``url`` are filled by variables.py (a form it cannot
fill leaves the server out, saying why); values under secret names (and every header) are hidden
from outputs like configured API keys. ``includeTools`` / ``excludeTools`` and their other
spellings choose which of a server's tools are offered (tool_filter.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..project_files import ProjectFileRefused, project_root, read_project_file
from ..scrub import SECRET_NAME, env_secret, harmless_name, looks_random, remember
from ..scrub.rules import SECRET_NAME_END
from .tool_filter import ToolFilter, parse_filter
from .variables import expand, workspace_folder

MAX_SERVER_NAME = 24  # the tool's part of ``server__tool`` keeps at least 38 of 64 characters
MAX_CONFIG_BYTES = 1 << 20
PROJECT_FILE = ".forge/mcp.json"
DEFAULT_STARTUP_TIMEOUT = 60.0  # npx may download the server on its first start
_SECRET_HEADERS = re.compile(r"^(authorization|proxy-authorization|cookie|x-api-key|api-key)$", re.I)


@dataclass(frozen=True)
class ServerSpec:
    """One configured MCP server."""

    name: str  # sanitized: what its tools are prefixed with
    transport: Literal["stdio", "http"]
    source: str  # where it was configured, for the person to read
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None  # seconds a tool call may run (None: Forge.tool_timeout)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    disabled: bool = False
    trusted: bool = True  # False: a project file not trusted yet (never started)
    tools: ToolFilter = field(default_factory=ToolFilter)  # which of its tools are offered

    def describe(self) -> str:
        """What runs, without env values or headers (they may hold secrets)."""
        if self.transport == "http":
            return f"{self.url}"
        return " ".join([self.command or "", *self.args])


def server_name(raw: str) -> str:
    """A configured name reduced to what a tool name may hold: ``GitHub MCP`` → ``GitHub_MCP``."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", raw)
    name = re.sub(r"_{2,}", "_", name).strip("_-")
    return name[:MAX_SERVER_NAME].rstrip("_-")


def _expand(value: Any, where: str, problems: list[str], workspace: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError(f"{where} must be a string")
    return expand(str(value), where, problems, workspace)


def _strings(value: Any, where: str, problems: list[str], workspace: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be an object of strings")
    return {str(k): _expand(v, f"{where}.{k}", problems, workspace) for k, v in value.items()}


def _seconds(value: Any, where: str, default: float | None) -> float | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400:
        raise ValueError(f"{where} must be a number of seconds between 0 and 86400")
    return float(value)


def parse_server(raw_name: str, entry: Any, source: str, problems: list[str],
                 workspace: str = ".") -> ServerSpec | None:
    """One entry of an ``mcpServers`` object, or None (with the reason in ``problems``).
    ``workspace``: what ``${workspaceFolder}`` is (variables.workspace_folder)."""
    name = server_name(str(raw_name))
    label = f"MCP server {str(raw_name)[:80]!r} ({source})"
    if not name:
        problems.append(f"{label}: its name has no letters or digits; rename it")
        return None
    if not isinstance(entry, dict):
        problems.append(f"{label}: expected an object with a command or a url")
        return None
    try:
        kind = str(entry.get("type") or entry.get("transport") or "").lower()
        url, command = entry.get("url"), entry.get("command")
        if kind == "sse":
            raise ValueError("the SSE transport is not supported; use the server's streamable "
                             "HTTP endpoint (type http)")
        if kind not in ("", "stdio", "local", "http", "streamable-http", "streamablehttp", "remote"):
            raise ValueError(f"unknown type {kind!r} (stdio or http)")
        if isinstance(command, list):  # opencode: "command": ["npx", "-y", "pkg"]
            command, args = (command[0] if command else None), command[1:]
        else:
            args = entry.get("args") or []
        common: dict[str, Any] = {
            "name": name, "source": source,
            "timeout": _seconds(entry.get("timeout"), f"{label}.timeout", None),
            "startup_timeout": _seconds(entry.get("startup_timeout"), f"{label}.startup_timeout",
                                        DEFAULT_STARTUP_TIMEOUT),
            "disabled": bool(entry.get("disabled", False)) or entry.get("enabled") is False,
            "tools": parse_filter(entry),
        }
        if url is not None:
            url = _expand(url, f"{label}.url", problems, workspace)
            if not re.match(r"^https?://", url, re.I):
                raise ValueError("url must start with http:// or https://")
            return ServerSpec(transport="http", url=url,
                              headers=_strings(entry.get("headers"), f"{label}.headers", problems,
                                               workspace),
                              **common)
        if not isinstance(command, str) or not command.strip():
            raise ValueError("needs a command (stdio) or a url (streamable HTTP)")
        if not isinstance(args, list):
            raise ValueError("args must be a list of strings")
        env = _strings(entry.get("env") or entry.get("environment"), f"{label}.env", problems,
                       workspace)
        cwd = entry.get("cwd")
        cwd = _expand(cwd, f"{label}.cwd", problems, workspace) if cwd else None
        return ServerSpec(transport="stdio",
                          command=_expand(command.strip(), f"{label}.command", problems, workspace),
                          args=tuple(_expand(a, f"{label}.args", problems, workspace) for a in args),
                          env=env, cwd=cwd or None, **common)
    except ValueError as exc:
        problems.append(f"{label}: {exc}")
        return None


def servers_of(document: Any, source: str, problems: list[str],
               workspace: str = ".") -> dict[str, ServerSpec]:
    """The servers of an ``{"mcpServers": {…}}`` object (or of the inner object itself)."""
    if not isinstance(document, dict):
        problems.append(f"{source}: expected a JSON object with mcpServers")
        return {}
    inner: Any = document  # the servers themselves, or under one of the formats' keys:
    for key in ("mcpServers", "servers", "mcp"):  # Claude Desktop, VS Code, opencode
        value = document.get(key)
        if isinstance(value, dict) and not {"command", "url"} & value.keys():
            inner = value  # (a server named "mcp" is a server, not a list of them)
            break
        if key == "mcpServers" and value is not None:
            problems.append(f"{source}: mcpServers must be an object of servers")
            return {}
    found: dict[str, ServerSpec] = {}
    for raw, entry in inner.items():
        spec = parse_server(raw, entry, source, problems, workspace)
        if spec is None:
            continue
        if spec.name in found:
            problems.append(f"{source}: two servers are named {spec.name!r} once their names are "
                            "reduced to letters, digits, _ and -; the second was left out")
            continue
        found[spec.name] = spec
    return found


def read_file(path: Path, problems: list[str]) -> tuple[Any, str] | None:
    """(the parsed document, its content's sha256), or None when missing or unreadable."""
    try:
        if not path.is_file():
            return None
        return _parsed(path.read_bytes()[:MAX_CONFIG_BYTES + 1])
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        problems.append(f"{path} could not be read as JSON: {exc}; its servers were left out")
        return None


def _parsed(data: bytes) -> tuple[Any, str]:
    if len(data) > MAX_CONFIG_BYTES:
        raise ValueError("it is over 1 MB")
    return json.loads(data.decode("utf-8")), hashlib.sha256(data).hexdigest()


def read_project(root: str | os.PathLike[str], problems: list[str]) -> tuple[Any, str] | None:
    """The project's ``.forge/mcp.json`` as ``read_file`` gives it, reached as a project file
    (project_files.py): a link, or a file that leads outside the folder, is refused."""
    try:
        data = read_project_file(root, PROJECT_FILE, MAX_CONFIG_BYTES + 1)
        return None if data is None else _parsed(data)
    except ProjectFileRefused as exc:
        problems.append(f"{exc} Its MCP servers were left out.")
    except (OSError, ValueError) as exc:
        problems.append(f"{project_file(root)} could not be read as JSON: {exc}; its servers "
                        "were left out")
    return None


def trust_file() -> Path:
    return Path.home() / ".forge" / "mcp-trust.json"


def trusted_digests() -> dict[str, str]:
    try:
        value = json.loads(trust_file().read_text("utf-8"))
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def project_file(root: str | os.PathLike[str]) -> Path:
    """The project's own file: what its trust is keyed by, with its content's digest."""
    return project_root(root) / PROJECT_FILE


def trust_project(root: str | os.PathLike[str]) -> str | None:
    """Trust the project's ``.forge/mcp.json`` as it is now; returns its path (None: no file).
    A link is refused (``ProjectFileRefused``): trust is for this folder's own file."""
    path = project_file(root)
    data = read_project_file(root, PROJECT_FILE, MAX_CONFIG_BYTES + 1)
    if data is None:
        return None
    got = _parsed(data)
    digests = trusted_digests()
    digests[str(path)] = got[1]
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(digests, indent=1), "utf-8")
    os.replace(tmp, target)
    return str(path)


def load_servers(root: str | os.PathLike[str], explicit: Any = None, *,
                 trust_project_file: bool = False) -> tuple[dict[str, ServerSpec], list[str]]:
    """Every configured server by name, and what was wrong with the configuration."""
    problems: list[str] = []
    servers: dict[str, ServerSpec] = {}
    workspace = workspace_folder(root)
    user = Path.home() / ".forge" / "mcp.json"
    got = read_file(user, problems)
    if got is not None:
        servers.update(servers_of(got[0], "~/.forge/mcp.json", problems, workspace))
    project = project_file(root)
    if project != user.resolve():
        got = read_project(root, problems)
        if got is not None:
            # keyed by this folder's own path and the content: a link is refused above, so a
            # clone cannot borrow another project's trust by pointing at its file
            trusted = trust_project_file or trusted_digests().get(str(project)) == got[1]
            for name, spec in servers_of(got[0], str(project), problems, workspace).items():
                spec = _replace(spec, cwd=_project_cwd(project_root(root), spec.cwd))
                servers[name] = spec if trusted else _replace(spec, trusted=False)
    if explicit:
        servers.update(servers_of(explicit, "Forge.mcp_servers", problems, workspace))
    for spec in servers.values():
        _remember_secrets(spec)
    return servers, problems


def _project_cwd(folder: Path, cwd: str | None) -> str | None:
    """Where a project server runs: its ``cwd`` against the project's folder — by default the
    folder itself, whatever the kernel's working directory is."""
    return str(folder / cwd) if cwd else str(folder)


def _replace(spec: ServerSpec, **changes: Any) -> ServerSpec:
    from dataclasses import replace

    return replace(spec, **changes)


def _remember_secrets(spec: ServerSpec) -> None:
    """Values the server is configured with that are secrets, hidden from every output: each
    ``env`` value (but a harmless variable's plain path or word), each header's value and its
    token, and the arguments that look like keys — by their look, after ``--token``-like
    flags, or as the value of a secret's name (``--api-key=…``, ``TOKEN=…``)."""
    for key, value in spec.env.items():
        if env_secret(key, value) or not harmless_name(key):
            remember(f"mcp-{spec.name}-{key}", value)
    for key, value in spec.headers.items():
        words = value.split(None, 1)  # "Bearer  x", "bearer\tx": any whitespace between
        scheme, token = (words[0], words[1].strip()) if len(words) == 2 else (value, "")
        # The token alone covers the header wherever it shows; the whole "Bearer …" would
        # make every stream hold back as many characters as it has (a value with a space).
        if token and scheme.lower() in ("bearer", "basic", "token"):
            remember(f"mcp-{spec.name}-{key}", token)
        else:
            remember(f"mcp-{spec.name}-{key}", value)
    after_secret_flag = False
    for i, arg in enumerate(spec.args):  # a name each: a Scrubber's secrets are keyed by name
        name, eq, value = arg.partition("=")
        flag = name.lstrip("-").replace("-", "_")
        if after_secret_flag or looks_random(arg):
            remember(f"mcp-{spec.name}-arg{i}", arg)
        if eq and value and (SECRET_NAME_END.search(flag) or SECRET_NAME.search(flag)
                             or looks_random(value)):
            remember(f"mcp-{spec.name}-{flag or 'arg'}{i}", value)
        after_secret_flag = (not eq and arg.startswith("-")
                             and bool(SECRET_NAME_END.search(flag) or SECRET_NAME.search(flag)))
