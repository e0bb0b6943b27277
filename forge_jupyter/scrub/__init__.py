"""What enters and leaves the system is made safe: valid text, and no secrets (DESIGN §5).

Two jobs, both cheap when there is nothing to do:

- ``valid_text``: a lone surrogate (a model's ``"\\ud800"``, a non-UTF-8 file name that
  Python decoded with ``surrogateescape``) becomes U+FFFD; a well-formed surrogate pair becomes
  its character. Text that is valid already comes back as the same object.
- ``Scrubber``: secrets become ``[secret:NAME]`` — the values of secret-named environment
  variables (``*_API_KEY``, ``*_TOKEN``, ``*_PASSWORD``, ``*_SECRET``, ``*_DSN``, ``*_PAT``,
  ``*_CREDENTIALS``, ``DATABASE_URL``, …, any case) and of keys configured on a ``Forge``,
  also as they appear JSON-escaped, in a ``repr`` or percent-encoded; the value of any
  ``name=value`` / ``"name": "value"`` whose name says secret; and values shaped like
  well-known keys (``[secret:openai-key]``, ``[secret:github-token]``, ``[secret:jwt]``,
  ``[secret:aws-access-key]``, …). A URL keeps its scheme, user and host and hides only its
  password: ``postgresql://u:[secret:url-password]@host/db``. Scrubbing is idempotent.

A ``StreamScrubber`` scrubs text that arrives in pieces (streamed model text, printed output):
it holds back the tail that could still be the start of a secret and passes on the rest.
"""

from .rules import MIN_LENGTH, SECRET_NAME, SHAPES
from .scrubber import Scrubber, remember, secret_params, valid_data, valid_text
from .stream import StreamScrubber

__all__ = ["MIN_LENGTH", "SECRET_NAME", "SHAPES", "Scrubber", "StreamScrubber", "remember",
           "secret_params", "valid_data", "valid_text"]
