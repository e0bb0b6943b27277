"""The `webfetch` tool: GET one web page and return it as Markdown (or text, or raw HTML).

Offered only under the ``search`` flag (``Forge(flags=["search"])``, ``Forge.flags`` /
``FORGE_FLAGS=search``), and asked about by default (the agent layer's rule
``webfetch:*=ask``; a configured rule such as ``webfetch:https://docs.python.org/*=allow``
narrows it). Rules match the URL in its normalized spelling (web_address.normalize_url).

Bounded: at most ``MAX_BYTES`` of body are read (the rest is never downloaded, and the output
says so), every connection within ``CONNECT_TIMEOUT`` and the whole fetch — redirects
included — within the call's ``timeout``; binary content is refused before its body is read.
Private, loopback, link-local and other non-public addresses are refused on the address the
host resolves to (web_address.blocked_reason) — for every redirect hop — unless a permission
rule that allows webfetch names the URL's origin literally (``http://127.0.0.1:8765/*``; a
wildcard such as ``webfetch:*=allow`` or an "allow for this session" answer does not open
them). The output goes through the same truncation and scrubbing as every tool's.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from typing import Any
from urllib.parse import urljoin

from ..errors import ToolError
from ..llm.web_search import SEARCH_FLAG
from .base import Tool, ToolContext, ToolResult
from .html_text import html_to_text
from .permission import Permissions
from .truncate import format_bytes
from .web_address import IPAddress, Url, blocked_reason, normalize_url, resolve
from .web_http import Response, get

MAX_BYTES = 5 * 1024 * 1024  # body bytes read at most; the truncation then cuts what the model sees
MAX_REDIRECTS = 5
CONNECT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript",
                         "application/ecmascript", "application/x-javascript", "application/yaml",
                         "application/x-yaml", "application/toml", "application/x-ndjson",
                         "application/sql", "application/graphql", "application/x-sh"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)

DESCRIPTION = f"""Fetch a web page (HTTP GET) and return its content: HTML as Markdown by \
default (format "text" for plain text, "html" for the raw page), text, JSON and XML as they \
are. Public http(s) URLs only; binary files (images, PDFs, archives) are refused. At most \
{MAX_BYTES // (1024 * 1024)} MB of a page is read, within `timeout` seconds (default \
{DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}); long output is cut and saved, like every tool's. \
The user may be asked to approve each fetch."""

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The http:// or https:// URL to fetch."},
        "format": {"type": "string", "enum": ["markdown", "text", "html"], "default": "markdown",
                   "description": "How an HTML page is returned."},
        "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT,
                    "description": f"Seconds the whole fetch may take (default {DEFAULT_TIMEOUT:g})."},
    },
    "required": ["url"],
    "additionalProperties": False,
}


def url_subject(args: dict[str, Any], root: str | None = None, output_dir: str | None = None) -> str:
    """What webfetch's permission rules match: the URL, normalized (a bad URL is refused)."""
    return str(normalize_url(args.get("url")))


def names_origin(pattern: str, url: Url) -> bool:
    """Whether a rule's pattern names ``url``'s scheme, host and port literally (``[[]`` is
    fnmatch's spelling of a literal ``[``, as in ``http://[[]::1]:8000/*``)."""
    literal = pattern.replace("[[]", "[")
    return literal == url.origin or literal.startswith((url.origin + "/", url.origin + "?"))


def private_allowed(url: Url, permissions: Permissions | None, *, approved: bool) -> bool:
    """A non-public address is reached only when some rule that matches ``url`` names its
    origin literally and opens it — ``allow``, or ``ask`` when the person approved this very
    URL (``approved``: the call's own URL, not a redirect's) — and the layered verdict agrees."""
    if permissions is None:
        return False
    subject = str(url)
    verdict = permissions.evaluate("webfetch", subject).action
    if verdict == "deny" or (verdict == "ask" and not approved):
        return False
    opening = ("allow", "ask") if approved else ("allow",)
    return any(rule.action in opening and rule.matches("webfetch", subject)
               and names_origin(rule.pattern, url)
               for _layer, rules in permissions.layers for rule in rules)


def check_addresses(url: Url, addresses: list[IPAddress], permissions: Permissions | None,
                    *, approved: bool) -> None:
    """Refuse ``url`` when any address its host resolved to is not public, unless allowed."""
    blocked = [(ip, why) for ip in addresses if (why := blocked_reason(ip))]
    if not blocked or private_allowed(url, permissions, approved=approved):
        return
    ip, why = blocked[0]
    named = f"{ip}" if url.ip is not None else f"{url.host} resolves to {ip}, which"
    raise ToolError(
        f"Refused: {url} — {named} is not a public address ({why}). webfetch does not reach "
        "private, loopback, "
        "link-local or other non-public addresses. If the user means this server, they can "
        f"allow it with a permission rule naming it, e.g. \"webfetch:{url.origin}/*=allow\" "
        "(Forge(permissions=[...]) or %config Forge.permissions).")


def classify(response: Response, url: Url) -> None:
    """Refuse a binary answer before its body is read (BodyCheck)."""
    media = response.media_type
    if not media or media in _HTML_TYPES or media.startswith("text/") or media in _TEXT_TYPES \
            or media.endswith(("+json", "+xml")):
        return
    size = f", {format_bytes(response.announced)}" if response.announced is not None else ""
    raise ToolError(f"Refused: {url} is {media} content{size}, not text. webfetch reads HTML, "
                    "text, JSON and XML only; the body was not downloaded.")


def decode(response: Response, url: Url) -> str:
    body = response.body
    match = re.search(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", response.content_type, re.I)
    charset = match.group(1) if match else None
    if charset is None and response.media_type in _HTML_TYPES:
        meta = _META_CHARSET.search(body[:4096])
        charset = meta.group(1).decode("ascii") if meta else None
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    if b"\x00" in body[:4096] and not codec.startswith("utf-16") and not codec.startswith("utf-32"):
        shown = response.media_type or "content without a Content-Type"
        raise ToolError(f"Refused: {url} sent binary bytes (as {shown}); webfetch reads text only.")
    return body.decode(codec, errors="replace")


async def fetch(url: Url, seconds: float, permissions: Permissions | None
                ) -> tuple[Url, Response, list[str]]:
    """The final URL, its response and the URLs redirected from, each hop checked."""
    hops: list[str] = []
    async with asyncio.timeout(seconds):
        for _ in range(MAX_REDIRECTS + 1):
            addresses = await resolve(url, CONNECT_TIMEOUT)
            check_addresses(url, addresses, permissions, approved=not hops)
            response = await get(url, addresses, connect_timeout=CONNECT_TIMEOUT,
                                 max_bytes=MAX_BYTES, check=lambda r, u=url: classify(r, u))
            location = response.headers.get("location")
            if not (300 <= response.status < 400 and location):
                return url, response, hops
            hops.append(str(url))
            try:
                url = normalize_url(urljoin(str(url), location.strip()))
            except ToolError as exc:
                raise ToolError(f"{hops[-1]} redirected to {location[:200]!r}, which webfetch "
                                f"does not follow: {exc}") from None
            if permissions is not None and \
                    permissions.evaluate("webfetch", str(url)).action == "deny":
                raise ToolError(f"{hops[-1]} redirected to {url}, which a permission rule "
                                "denies; it was not fetched.")
    raise ToolError(f"Refused: more than {MAX_REDIRECTS} redirects, starting at {hops[0]} "
                    f"(the last to {url}).")


async def webfetch(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    url = normalize_url(args.get("url"))
    form = args.get("format") or "markdown"
    seconds = float(args.get("timeout") or DEFAULT_TIMEOUT)
    permissions = ctx.run.permissions if ctx.run is not None else None
    try:
        final, response, hops = await fetch(url, min(seconds, MAX_TIMEOUT), permissions)
    except TimeoutError:
        raise ToolError(f"{url} did not answer in full within {seconds:g} s; nothing was "
                        "returned. Try again later, or with a larger timeout "
                        f"(at most {MAX_TIMEOUT:g}).") from None
    text = decode(response, final)
    if response.status >= 400:
        raise ToolError(f"HTTP {response.status} {response.reason} from {final}: "
                        f"{' '.join(text[:500].split())}")
    title = ""
    if response.media_type in _HTML_TYPES and form != "html":
        title, text = html_to_text(text, str(final), markdown=form == "markdown")
    head = [f"URL: {final}"]
    if hops:
        head.append("Redirected from: " + " → ".join(hops))
    head.append(f"HTTP {response.status} · {response.content_type or 'no Content-Type'}")
    if title:
        head.append(f"Title: {title}")
    if response.cut:
        of = f" of {format_bytes(response.announced)}" if response.announced and \
            "content-encoding" not in response.headers else ""
        head.append(f"Cut: only the first {format_bytes(MAX_BYTES)}{of} of the page was "
                    "downloaded; the rest was not read.")
    return ToolResult("\n".join(head) + "\n\n" + text, title=f"webfetch {final}"[:200],
                      metadata={"url": str(url), "final_url": str(final),
                                "status": response.status, "content_type": response.content_type,
                                "bytes": len(response.body), "cut": response.cut,
                                "redirects": hops, "address": response.address})


def webfetch_tool() -> Tool:
    return Tool(name="webfetch", description=DESCRIPTION, parameters=PARAMETERS,
                execute=webfetch, subject=url_subject, flag=SEARCH_FLAG, permission="ask",
                timeout=MAX_TIMEOUT + 30)

