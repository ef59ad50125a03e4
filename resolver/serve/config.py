"""`ServeConfig`: everything `create_app` needs, checked once when it is made.

Safe by default: the server binds 127.0.0.1, and any address that is not loopback needs an API
key (anyone who can reach the port could otherwise fill its memory). The body limit fits the
262K haystack (about 1.1 MB of text, 1.2 MB as a harness's JSON request) with a lot of room."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from resolver._version import __version__
from resolver.errors import InputError, clip
from resolver.memory.memory import MODES
from resolver.plan.planning import LIVE_SETS
from resolver.run.config import ABSTAIN_LEVELS

MIB = 1 << 20
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_BODY = 16 * MIB
DEFAULT_CACHE = 512 * MIB      # about 20 memories of the 262K context, warm (cache.py)
DEFAULT_MAX_OPEN = 64          # named memories (--store) open at once
# The largest sizes taken: a body of 4 GiB is past any harness's request (the 262K context is
# 1.2 MB), and a cache of 10^6 MiB (about 1 TB) past any machine's memory; a larger number (a
# typo, 1e300) is refused at startup rather than served until a reply cannot write it (orjson
# holds 64-bit integers only: /v1/models failed with 500).
MAX_BODY = 4096 * MIB
MAX_CACHE = 1_000_000 * MIB
OWN_MODEL = "factres"          # always accepted, always listed
READOUT_MODEL = "factres-readout"   # always accepted and listed: answers with the readout
# A model name is an identifier: a longer one is refused (404), its echo cut (E13).
MAX_MODEL_NAME = 256
# What bounds a slow or greedy client (E27, E31), each an option of `factres serve`: an idle
# keep-alive connection is closed after KEEP_ALIVE seconds (uvicorn's default); a request that
# arrives while LIMIT_CONCURRENCY connections are open (its own included) or LIMIT_CONCURRENCY
# requests are in progress gets 503 (uvicorn counts both); a body that stops arriving for
# BODY_TIMEOUT seconds is given up (408); a connection whose request headers have not all come
# HEADER_TIMEOUT seconds after it opened or its request began is closed (408 when some came:
# header_timeout.py, verify-e F07). On SIGTERM or Ctrl-C the requests in progress get
# SHUTDOWN_TIMEOUT seconds to finish, then are cancelled and the process exits.
DEFAULT_KEEP_ALIVE = 5.0
DEFAULT_LIMIT_CONCURRENCY = 100
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_HEADER_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 10
MAX_SECONDS = 3600.0           # the longest keep-alive, body or header timeout taken
KEY_CHARACTERS = "printable ASCII (letters, digits, punctuation; spaces only inside the key)"


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine: "localhost", or an address in 127.0.0.0/8 or
    ::1 (brackets allowed)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False          # a name: it may resolve to anything


def _check_key(key: str) -> None:
    """A key a client can send: HTTP carries a header's value as bytes that clients encode as
    ASCII (the `openai` client raises UnicodeEncodeError on "sëcret"; curl sends UTF-8 bytes,
    which arrive as latin-1 and never match) and strips the blanks around it. A key with any
    other character, or with blanks at its ends, would lock every client out, so it is refused
    at startup. The message names the character's position and code point, never the key."""
    if not key.strip():
        raise InputError("the API key is empty", expected="a non-empty key, or no key")
    for at, char in enumerate(key):
        if not " " <= char <= "~":
            raise InputError(f"the API key has U+{ord(char):04X} at position {at + 1}, which no "
                             "client can send in an Authorization header",
                             expected=KEY_CHARACTERS)
    if key != key.strip():
        raise InputError("the API key begins or ends with a blank, which HTTP drops from a "
                         "header: no client could send it", expected=KEY_CHARACTERS)


@dataclass(frozen=True)
class ServeConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT            # 0: any free port
    api_key: str | None = None          # None: no key asked (loopback only)
    max_body: int = DEFAULT_MAX_BODY    # bytes of a request body; more is refused with 413
    models: tuple[str, ...] = ()        # model names accepted besides "factres"; () = any
    cache_bytes: int = DEFAULT_CACHE    # the memory cache's budget (estimated resident bytes)
    plan_sets: tuple[str, ...] = LIVE_SETS
    mode: str = "search"
    keep_alive: float = DEFAULT_KEEP_ALIVE           # seconds an idle connection stays open
    limit_concurrency: int = DEFAULT_LIMIT_CONCURRENCY   # connections or requests, then 503
    body_timeout: float = DEFAULT_BODY_TIMEOUT     # seconds a body may stop arriving: 408
    header_timeout: float = DEFAULT_HEADER_TIMEOUT     # seconds for a request's headers: 408
    abstain_below: str | None = None    # empty answers labelled below it (a request may ask)
    store: str | None = None            # the folder of named memories (None: none)
    max_open: int = DEFAULT_MAX_OPEN    # named memories open at once, at most

    def __post_init__(self) -> None:
        if self.api_key is not None:
            _check_key(self.api_key)
        if not is_loopback(self.host) and self.api_key is None:
            raise InputError(f"binding {self.host} (not a loopback address) needs an API key: "
                             "anyone who reaches the port could use and fill the server",
                             expected="--api-key KEY, or a loopback host such as 127.0.0.1")
        if not 0 <= self.port <= 65535:
            raise InputError(f"port {self.port} is out of range", expected="0 to 65535")
        if not 1 <= self.max_body <= MAX_BODY:
            raise InputError("the body limit must be positive" if self.max_body < 1 else
                             f"a body limit of {self.max_body:,} bytes is too large",
                             expected=f"a size in MB, at most {MAX_BODY // MIB:,}")
        if not 0 <= self.cache_bytes <= MAX_CACHE:
            raise InputError("the cache budget must not be negative" if self.cache_bytes < 0
                             else f"a cache budget of {self.cache_bytes:,} bytes is too large",
                             expected=f"a size in MB, at most {MAX_CACHE // MIB:,}")
        unknown = [s for s in self.plan_sets if s.removeprefix("live:") not in LIVE_SETS]
        if unknown or not self.plan_sets:
            raise InputError(f"unknown live plan set {unknown[0]!r}" if unknown
                             else "no plan set named", expected=f"some of {', '.join(LIVE_SETS)}")
        if self.mode not in MODES:
            raise InputError(f"unknown mode {self.mode!r}", expected=" or ".join(MODES))
        if any(not m.strip() for m in self.models):
            raise InputError("an empty model name", expected="model names such as gpt-4o-mini")
        long = next((m for m in self.models if len(m) > MAX_MODEL_NAME), None)
        if long is not None:
            raise InputError(f"a model name of {len(long):,} characters ({clip(long, 40)!r})",
                             expected=f"names of at most {MAX_MODEL_NAME} characters")
        if not 0 < self.keep_alive <= MAX_SECONDS:         # also refuses nan
            raise InputError(f"a keep-alive of {self.keep_alive} seconds",
                             expected=f"more than 0, at most {MAX_SECONDS:.0f} seconds")
        if not 2 <= self.limit_concurrency:
            raise InputError(f"a concurrency limit of {self.limit_concurrency}",
                             expected="at least 2 (the request's own connection counts)")
        if not 0 < self.body_timeout <= MAX_SECONDS:      # also refuses nan
            raise InputError(f"a body timeout of {self.body_timeout} seconds",
                             expected=f"more than 0, at most {MAX_SECONDS:.0f} seconds")
        if not 0 < self.header_timeout <= MAX_SECONDS:    # also refuses nan
            raise InputError(f"a header timeout of {self.header_timeout} seconds",
                             expected=f"more than 0, at most {MAX_SECONDS:.0f} seconds")
        if self.abstain_below is not None and self.abstain_below not in ABSTAIN_LEVELS:
            raise InputError(f"unknown confidence level {self.abstain_below!r}",
                             expected=" or ".join(ABSTAIN_LEVELS))
        if self.max_open < 1:
            raise InputError(f"--max-open {self.max_open} keeps no named memory open",
                             expected="1 or more")
        if self.store is not None:
            folder = Path(self.store)
            if folder.exists() and not folder.is_dir():
                raise InputError("the store is a file", path=self.store,
                                 expected="a folder of named memories (made when missing)")
            if not folder.exists() and not folder.parent.is_dir():
                raise InputError(f"the store's folder {folder.parent} does not exist",
                                 path=self.store, expected="a path in an existing folder")

    def accepts(self, model: str) -> bool:
        """Whether a request may name `model`: any name of at most MAX_MODEL_NAME characters
        when no names were given."""
        if len(model) > MAX_MODEL_NAME:
            return False
        return not self.models or model in (OWN_MODEL, READOUT_MODEL) or model in self.models

    @property
    def listed(self) -> tuple[str, ...]:
        """The names `GET /v1/models` lists: "factres", "factres-readout", then the accepted
        names in order."""
        own = (OWN_MODEL, READOUT_MODEL)
        return own + tuple(m for m in dict.fromkeys(self.models) if m not in own)

    def describe(self) -> dict:
        """What `/v1/models` and every reply say about the server (no key)."""
        return {"version": __version__, "plan_sets": [f"live:{s.removeprefix('live:')}"
                                                      for s in self.plan_sets],
                "mode": self.mode, "abstain_below": self.abstain_below}
