"""What enters and leaves the system is made safe: valid text, and no secrets (DESIGN §5).

Two jobs, both cheap when there is nothing to do:

- ``valid_text``: a lone surrogate (a model's ``"\\ud800"``, a non-UTF-8 file name that
  Python decoded with ``surrogateescape``) becomes U+FFFD; a well-formed surrogate pair becomes
  its character. Text that is valid already comes back as the same object.
- ``Scrubber``: secrets become ``[secret:NAME]`` — every environment value that looks like a
  secret (``rules.looks_random``: 8+ characters, no space, not a path, a plain URL or a word)
  unless its variable is a harmless one (``rules.HARMLESS_NAMES``: paths, locale, terminal,
  Jupyter's and forge's own settings), and every value under a secret name (``*_API_KEY``,
  ``*_TOKEN``, ``*_PASSWORD``, ``*_PWD``, ``*_SECRET``, ``*_DSN``, ``DATABASE_URL``, …, any
  case, however it looks); keys configured on a ``Forge`` and an MCP server's env, headers
  and key-like args; each also as it appears JSON-escaped, in a ``repr``, percent-encoded, in
  base64 (any alignment, URL-safe too) or hex — all found by one trie regex; the value of any
  ``name=value`` / ``"name": "value"`` whose name says secret; and values shaped like
  well-known keys (``[secret:openai-key]``, ``[secret:github-token]``, ``[secret:jwt]``,
  ``[secret:aws-access-key]``, …). A URL keeps its scheme, user and host and hides only its
  password: ``postgresql://u:[secret:url-password]@host/db``. Scrubbing is idempotent.

A ``StreamScrubber`` scrubs text that arrives in pieces (streamed model text, printed output):
it holds back the tail that could still be the start of a secret and passes on the rest.
"""

from .rules import MIN_LENGTH, SECRET_NAME, SHAPES, harmless_name, looks_random
from .scrubber import Scrubber, env_secret, remember, secret_params, valid_data, valid_text
from .stream import StreamScrubber

__all__ = ["MIN_LENGTH", "SECRET_NAME", "SHAPES", "Scrubber", "StreamScrubber", "env_secret",
           "harmless_name", "looks_random", "remember", "secret_params", "valid_data",
           "valid_text"]
