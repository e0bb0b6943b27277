"""What counts as a secret in text: names, shapes, and the regular expressions that find them.

Read by ``scrubber.Scrubber`` (the two passes and what each match becomes) and by
``stream.StreamScrubber`` (where a stream may be cut).
"""

from __future__ import annotations

import os
import re

MIN_LENGTH = 8  # a known value shorter than this would match ordinary text
MIN_ASSIGNED = 6  # a value after a secret name (``password="…"``) is hidden from this length
SHORTEST = 8  # no secret any rule finds is shorter
SHORT = 32  # below this, one regex search is quicker than looking for the words around secrets
HOLD_MAX = 8192  # a stream holds back at most this much text without a safe place to cut

# Environment variables whose values are secrets by name (any case), however they look.
SECRET_NAME = re.compile(
    r"(API_?KEY|_KEY|_KEY_ID|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|_PASS|_PAT|_DSN|_PWD"
    r"|_AUTH|CREDENTIALS?|DATABASE_URL|WEBHOOK(?:_URL)?|CONNECTION_STRING|SECRET_KEY_BASE)$", re.I)

# Every other environment value that looks like a secret is one (``env_secret``), except under
# these names: values that are paths, words, locale, terminal, Jupyter's and forge's own
# settings, which appear in ordinary text ("/usr/bin", "en_US.UTF-8", "xterm-256color") and
# are no one's credential. A name here that says secret (``JPY_API_TOKEN``) still is one.
HARMLESS_NAMES = frozenset({
    "PATH", "HOME", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "USERNAME", "LANG",
    "LANGUAGE", "TERM", "COLORTERM", "TZ", "HOSTNAME", "HOST", "DISPLAY", "EDITOR", "VISUAL",
    "PAGER", "MANPATH", "INFOPATH", "TMPDIR", "TEMP", "TMP", "PYTHONPATH", "PYTHONHOME",
    "VIRTUAL_ENV", "MPLBACKEND", "LS_COLORS", "LSCOLORS", "PS1", "PS2", "PROMPT_COMMAND",
    "SHLVL", "_", "MAIL", "LESSOPEN", "LESSCLOSE", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
    "MAKEFLAGS", "CLICOLOR", "FORCE_COLOR", "NODE_OPTIONS", "JAVA_OPTS", "PYTHONSTARTUP",
})
HARMLESS_PREFIXES = ("LC_", "XDG_", "JPY_", "JUPYTER", "IPYTHON", "CONDA", "PYTEST_", "FORGE_",
                     "TERM_", "VSCODE_", "GITHUB_", "CI_", "RUNNER_", "PIP_", "UV_", "MAMBA")
HARMLESS_SUFFIXES = ("_HOME", "_DIR", "_PATH", "PATH", "_FILE", "_MODEL", "_VERSION", "_HOST",
                     "_PORT", "_REGION", "_ZONE", "_LEVEL", "_MODE", "_ENV", "_NAME", "_USER")

# What a name that holds a secret ends with, in text (``client_secret: "…"``, ``DB_PASS=…``):
# factored by first letter, and word checks after the word, so that the regex engine turns
# most positions down on one character. ``key`` and ``sig`` alone count only in a URL's query.
SUFFIX = (r"(?:a(?:pi[_-]?key|ccess[_-]?key|uth[_-]?key)|token"
          r"|s(?:ecret(?:[_-]?key(?:[_-]?base)?)?|igning[_-]?key"
          r"|hared[_-]?access[_-]?(?:key|signature))|account[_-]?key|[_-]pwd"
          r"|p(?:assw(?:or)?d|assphrase|rivate[_-]?key|ass(?<![a-z]pass)|at(?<![a-z]pat))"
          r"|d(?:sn(?<![a-z]dsn)|atabase[_-]?url)|credentials?|encryption[_-]?key"
          r"|master[_-]?key)")
QUERY_ONLY = r"(?:key(?<![a-z]key)|sig(?<![a-z]sig)(?:nature)?)"
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
NOT_SCRUBBED = r"(?!\[secret:)"

# Values shaped like well-known keys, whatever name (if any) they come under. The check that
# no word character comes before sits after the literal start: cheap where it does not match.
_W = r"[\w-]"
SHAPES: dict[str, str] = {
    "anthropic-key": rf"sk-(?<!{_W}sk-)ant-[A-Za-z0-9_-]{{20,}}",
    "openai-key": rf"sk-(?<!{_W}sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}}",
    "stripe-key": rf"[sr]k_(?<!{_W}[sr]k_)(?:live|test)_[A-Za-z0-9]{{16,}}",
    "github-token": rf"g(?:h[pousr]_(?<!{_W}gh[pousr]_)[A-Za-z0-9]{{30,}}"
                    rf"|ithub_pat_(?<!{_W}github_pat_)[A-Za-z0-9_]{{30,}})",
    "slack-token": rf"xox[abposr]-(?<!{_W}xox[abposr]-)[A-Za-z0-9-]{{10,}}",
    "aws-access-key": r"A(?<![A-Za-z0-9]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    "google-api-key": rf"AIza(?<!{_W}AIza)[A-Za-z0-9_-]{{35}}",
    "huggingface-token": rf"hf_(?<!{_W}hf_)[A-Za-z0-9]{{30,}}",
    "gitlab-token": rf"gl(?<!{_W}gl)(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{{20,}}",
    "slack-webhook": r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{16,}",
    "discord-webhook": r"discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{16,}",
    "npm-token": rf"npm_(?<!{_W}npm_)[A-Za-z0-9]{{36}}",
    "pypi-token": rf"pypi-(?<!{_W}pypi-)AgE[A-Za-z0-9_-]{{50,}}",
    "jwt": rf"eyJ(?<!{_W}eyJ)[A-Za-z0-9_-]{{5,}}\.eyJ[A-Za-z0-9_-]{{5,}}\.[A-Za-z0-9_-]*",
}

# The alternatives, each ending in an empty group that names it (a group at the start would
# cost the regex engine its one-character check of each alternative: 20× slower). Where text
# around the secret is kept, inner groups hold the value. Known values come first, unnamed.
ALTERNATIVES = [
    ("pem", r"-----BEGIN[A-Z ]{0,30}PRIVATE KEY-----[\s\S]*?-----END[A-Z ]{0,30}PRIVATE KEY-----"),
    # scheme://user:PASSWORD@host — the password runs to the last "@" before the host (the
    # match starts at "://": a literal the engine skips to, where a scheme's letters are not)
    ("url", r"://[^\s:/?#@\[\]\"'<>]*:"
            rf"(?P<url_v>{NOT_SCRUBBED}[^\s/?#\"'<>]+)(?=@[^\s@/?#\"'<>]+)"),
    ("bearer", rf"[Bb](?:earer|EARER)(?<!\wbearer)(?<!\wBEARER)(?<!\wBearer)[ \t]+"
               rf"(?P<bearer_v>{NOT_SCRUBBED}[A-Za-z0-9._~+/-]{{12,}}=*)"),
    # A value after a separator; Scrubber._replace keeps it unless the name before says secret:
    #   "name": "value", name = 'value', password="…"   a quoted value, any case
    #   NAME=value, password=value                       unquoted: not an argument f(name=x)
    #   ?api_key=value&…                                 unquoted: in a URL's query
    #   name: value                                      unquoted: alone on its line (YAML)
    # It starts at the separator, not the name: ":" and "=" are rarer than a name's letters.
    ("assign", rf"[:=]>?[ \t]*(?:\"(?P<dq>{NOT_SCRUBBED}[^\"\r\n]{{{MIN_ASSIGNED},}})\""
               rf"|'(?P<sq>{NOT_SCRUBBED}[^'\r\n]{{{MIN_ASSIGNED},}})')"),
    ("assign_eq", rf"=(?P<eq>{NOT_SCRUBBED}[^\s\"'`&#;|<>(){{}},]{{{MIN_ASSIGNED},}})"),
    ("assign_colon", rf":[ \t]+(?P<colon>{NOT_SCRUBBED}[^\s\"'#]{{{MIN_ASSIGNED},}})"
                     r"(?=[ \t]*(?:[\r\n]|\Z))"),
    *((f"shape{i}", pattern) for i, pattern in enumerate(SHAPES.values())),
]
KIND = {"assign_eq": "assign", "assign_colon": "assign"}
ASSIGNS = frozenset({"assign", "assign_eq", "assign_colon"})
ASSIGN = re.compile("|".join(f"{p}(?P<{g}>)" for g, p in ALTERNATIVES if g in ASSIGNS))
SHAPE_LABEL = {f"shape{i}": label for i, label in enumerate(SHAPES)}
VALUE_GROUPS = {"url": ("url_v",), "bearer": ("bearer_v",), "assign": ("dq", "sq", "eq", "colon")}
FIXED_LABEL = {"pem": "private-key", "url": "url-password", "bearer": "bearer-token"}
QUERY_WORDS = frozenset({"key", "sig", "signature"})
SECRET_NAME_END = re.compile(rf"(?i:(?:{SUFFIX})|(?P<query>{QUERY_ONLY}))$")

# Every secret the patterns find has one of these (lower case) in its line; the first ones
# only with a ":" or "=" there too (a URL, a name and its value).
SEPARATED = ("://", "key", "token", "secret", "pass", "pat", "dsn", "credential", "database",
             "sig=", "signature=", "pwd")
TRIGGERS = (*SEPARATED, "bearer", "sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
            "github_pat_", "xox", "akia", "asia", "aiza", "hf_", "eyj", "glpat-", "gldt-", "glrt-",
            "glptt-", "hooks.slack.com", "discord", "npm_", "pypi-")
UNSEPARATED = TRIGGERS[len(SEPARATED):]

# A secret's name and its separator (``password:``, ``"api_key" =``): its value may follow.
NAMES_VALUE = re.compile(rf"(?i:{SUFFIX})[\"']?[ \t]*(?:=>|[:=])")
PEM_END = re.compile(r"-----END[A-Z ]{0,30}PRIVATE KEY-----")


def name_before(text: str, at: int, *, quoted: bool) -> tuple[str, int]:
    """The name before a separator at ``at`` and where it begins: ``"GITHUB_TOKEN": …`` →
    GITHUB_TOKEN (spaces and, for a quoted value, a closing quote may come between)."""
    end = at
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if quoted and end > 0 and text[end - 1] in "\"'":
        end -= 1
    begin = end
    while begin > 0 and text[begin - 1] in NAME_CHARS:
        begin -= 1
    return text[begin:end], begin


# ------------------------------------------------------------------------------ by value

_PATH_PART = re.compile(r"(?:[~.]{0,2}/|[A-Za-z]:[\\/])[^\s]*$")  # /usr/bin, ~/x, ./a, C:\x
_WORDISH = frozenset("._-/:@,")  # what joins words in a harmless value (refs/heads/main)
_RANDOM_PART = 16  # a URL's path segment or query this long and random is a secret in it


def harmless_name(name: str) -> bool:
    upper = name.upper()
    return (upper in HARMLESS_NAMES or upper.startswith(HARMLESS_PREFIXES)
            or upper.endswith(HARMLESS_SUFFIXES))


def looks_random(value: str) -> bool:
    """Whether an environment value under no harmless name is taken for a secret.

    Eight characters or more (as ``MIN_LENGTH``: shorter values are found in ordinary text)
    with no whitespace (commands and options have spaces; a secret with spaces needs a secret
    name), at least six different characters ("aaaaaaaa", "12121212" are not keys), not a
    path or a list of paths, not a plain ``scheme://host/path`` URL, and not a word: it mixes
    letters and digits, or case inside a word (``kX9vQ``), or has a symbol no word has
    (``!#$%&*+=?^~``). So "production", "refs/heads/main", "/usr/bin:/bin", "8080" and
    "2024-01-01" stay readable, and "hunter2pass", "Tr0ub4dor&3" or a hex key do not."""
    if len(value) < MIN_LENGTH or any(c.isspace() for c in value) or len(set(value)) < 6:
        return False
    if all(_PATH_PART.match(p) for p in value.split(os.pathsep) if p) and "://" not in value:
        return False
    if "://" in value:
        rest = value.split("://", 1)[1]
        parts = re.split(r"[/?&=#]", rest.split("/", 1)[1] if "/" in rest else "")
        return "@" in rest.split("/", 1)[0] or any(
            len(p) >= _RANDOM_PART and _mixed(p) for p in parts)
    return _mixed(value)


def _mixed(value: str) -> bool:
    letters = any(c.isalpha() for c in value)
    if letters and any(c.isdigit() for c in value):
        return True
    if re.search(r"[a-z][A-Z]", value):
        return True
    return any(not c.isalnum() and c not in _WORDISH for c in value)
