"""The server: `create_app(config)` is the Starlette app, `bind(config)` its listening sockets,
`serve(config)` runs it on uvicorn (what `factres serve` calls, once `bind` succeeded),
`serving(config)` runs it on a loopback port in a thread for as long as a `with` block lasts
(tests and benchmarks).

Routes: `POST /v1/chat/completions` (the answer, or its server-sent events), `GET /v1/models`
and `GET /v1/models/{name}` (the names accepted, factres's version, plan sets and mode, the
cache's state); with a store folder (`ServeConfig.store`), the named memories (named.py): the
same two under `/v1/memories/NAME/`, `POST /v1/memories/NAME/operations` (P-Mem patches, issue
32: `Memory.apply`), `GET /v1/memories` and `DELETE /v1/memories/NAME`. Every refusal is OpenAI's
error object (api_errors.py) with its status (the
question a memory refuses, such as one over MAX_QUESTION characters, is the client's: a 400);
a fault of the server's own is a 500 of the same shape, logged, and the server keeps serving.
Never a traceback to the client.

A request whose memory is cached is answered on the event loop (reading the JSON, splitting
the conversation, finding its memory, the query: about 2.7 ms for the 262K context, where a
hand-over to a worker thread costs as much again in contention for the interpreter); a new
conversation's memory is built in a worker thread, so the loop keeps answering the others
meanwhile. The body's limit and its timeout are checked as it arrives (body.py). Each reply's
Server-Timing header gives the milliseconds of each step (read, parse, split, memory; for a new
memory, the wait for a worker thread and the build; query, reply), which benchmarks/serve.py
reads."""
from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

import orjson

from resolver.errors import InputError, MissingExtraError, clip
from resolver.haystack import MAX_QUESTION
from resolver.memory.memory import Answer
from resolver.serve import header_timeout
from resolver.serve.api_errors import (SHOWN_PATH, ApiError, bad_request, internal, invalid_json,
                                       method_not_allowed, missing_key, model_not_found,
                                       question_too_long, stopping, unknown_url, wrong_key)
from resolver.serve.body import read_body
from resolver.serve.cache import MemoryCache, estimate_bytes
from resolver.serve.config import MAX_MODEL_NAME, SHUTDOWN_TIMEOUT, ServeConfig
from resolver.serve.context_cut import cut_warnings
from resolver.serve.conversation import Conversation, Remembered, remember, split
from resolver.serve.fact_lists import lowered
from resolver.serve.named import NamedMemories, check_name, close_evicted, parts
from resolver.serve.question import NO_QUESTION_FOUND, NOT_FOUND
from resolver.serve.readout import reply_answer
from resolver.serve.reply import chunks, completion, factres_field, usage
from resolver.serve.request import ChatRequest, parse_request

NEEDS_EXTRA = ("factres serve needs the serve extra (Starlette and uvicorn), which is not "
               "installed: pip install 'factres[serve]'")

try:
    # The web stack is the `serve` extra: only this module imports it, and only the serve
    # command imports this module.
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # the extra is missing: say what to install
    raise MissingExtraError(NEEDS_EXTRA) from exc


def _http_protocol() -> type:
    """The HTTP protocol uvicorn's "auto" picks: httptools' compiled parser (uvicorn[standard]
    installs it), else h11; header_timeout.py adds a header deadline to it."""
    try:
        import httptools  # noqa: F401
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        return HttpToolsProtocol
    except ImportError:                    # pragma: no cover
        from uvicorn.protocols.http.h11_impl import H11Protocol
        return H11Protocol

log = logging.getLogger("factres.serve")
JSON = "application/json"


class Service:
    """What the routes do, without HTTP: one config, one memory cache."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.cache = MemoryCache(config.cache_bytes, on_evict=close_evicted)
        self.started = int(time.time())
        self.named: NamedMemories | None = None
        if config.store is not None:
            Path(config.store).mkdir(exist_ok=True)
            self.named = NamedMemories(Path(config.store), self.cache, config.max_open,
                                       config.plan_sets, config.mode)

    def authorize(self, request: Request) -> None:
        if self.config.api_key is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise missing_key()
        if not hmac.compare_digest(key.strip().encode(), self.config.api_key.encode()):
            raise wrong_key()

    def prepare(self, body: bytes, clock: "_Clock") -> tuple[ChatRequest, Conversation]:
        """The request read and its conversation split (ApiError for a request refused)."""
        request = parse_request(body)
        if not self.config.accepts(request.model):
            raise model_not_found(request.model, self.config.listed, MAX_MODEL_NAME)
        clock.lap("parse")
        conversation = split(request.messages)
        if len(conversation.bare_question) > MAX_QUESTION:
            # the client's input, refused before a memory is built for it (the memory would
            # refuse it too, as every loader does)
            raise question_too_long(len(conversation.bare_question), MAX_QUESTION,
                                    conversation.last)
        clock.lap("split")
        return request, conversation

    def remembered(self, conversation: Conversation) -> tuple[Remembered, bool]:
        """(the conversation's memory, whether it was cached), built when it is new."""
        config = self.config
        try:
            # the cache keeps the memory part's text as the key (`kept`): counted in its size
            return self.cache.get(
                conversation.kept, lambda: remember(conversation, config.plan_sets, config.mode),
                lambda r: estimate_bytes(r.facts, r.chars) + conversation.kept.nbytes)
        except InputError as exc:
            raise bad_request(f"The messages cannot be read as text: {exc}",
                              param="messages", code="invalid_value") from None

    def answer(self, request: ChatRequest, conversation: Conversation, remembered: Remembered,
               cached: bool, clock: "_Clock") -> tuple[bool, object]:
        """(streamed, the reply: JSON bytes, or the events)."""
        level = request.abstain_below or self.config.abstain_below
        try:
            if conversation.found == NOT_FOUND:     # the facts are read; nothing is asked
                answer = Answer("", "", NO_QUESTION_FOUND)
            else:
                answer = remembered.memory.query(conversation.question, abstain_below=level)
        except InputError as exc:
            # the memory refuses only what it was asked (the question): the client's input
            raise bad_request(f"The question cannot be answered: {exc}", param="messages",
                              code="invalid_value") from None
        if not remembered.sure:             # a guess between fact lists (fact_lists.py)
            answer = lowered(answer, level)
        answer = reply_answer(request.model, remembered.memory, answer)
        clock.lap("query")
        warnings = cut_warnings(conversation.part.pieces) + list(remembered.warnings)
        if warnings and not cached:         # once per context: when its memory is built
            for warning in warnings:
                log.warning("memory %s: %s", conversation.key, warning)
        extra = factres_field(answer, remembered, cached,
                              self.config.describe() | {"abstain_below": level}, warnings)
        counts = usage(conversation, remembered, answer)
        if request.stream:
            reply = True, chunks(request.model, answer, counts, extra, request.include_usage)
        else:
            reply = False, completion(request.model, answer, counts, extra)
        clock.lap("reply")
        return reply

    def build_and_answer(self, request: ChatRequest, conversation: Conversation,
                         clock: "_Clock") -> tuple[bool, object]:
        """A worker thread's part for a memory not in the cache: build it (or wait for the
        request building it), then answer."""
        clock.lap("wait")
        remembered, cached = self.remembered(conversation)
        if not cached:
            release_free_memory()
        clock.lap("memory")
        return self.answer(request, conversation, remembered, cached, clock)

    def named_reply(self, name: str, body: bytes, clock: "_Clock") -> tuple[bool, object]:
        """A worker thread's part for a named memory: the request read, its memory part
        appended to the memory, its question asked (named.py)."""
        request = parse_request(body)
        if not self.config.accepts(request.model):
            raise model_not_found(request.model, self.config.listed, MAX_MODEL_NAME)
        conversation = split(request.messages)
        asked = parts(conversation)
        if asked.question is not None and len(conversation.bare_question) > MAX_QUESTION:
            raise question_too_long(len(conversation.bare_question), MAX_QUESTION,
                                    conversation.last)
        clock.lap("split")
        level = request.abstain_below or self.config.abstain_below
        answer, remembered, cached, ingested = self.named.answer(name, asked, request.model,
                                                                 level)
        clock.lap("memory")
        extra = factres_field(answer, remembered, cached,
                              self.config.describe() | {"abstain_below": level},
                              remembered.warnings)
        extra["memory"] |= {"name": name, "ingested": ingested}
        words = sum(len(m.text.split()) for m in request.messages)
        counts = {"prompt_tokens": words, "completion_tokens": len(answer.text.split()),
                  "total_tokens": words + len(answer.text.split())}
        if request.stream:
            return True, chunks(request.model, answer, counts, extra, request.include_usage)
        return False, completion(request.model, answer, counts, extra)

    def models(self) -> dict:
        about = self.about()
        return {"object": "list", "factres": about,
                "data": [self.model(name) for name in self.config.listed]}

    def model(self, name: str) -> dict:
        return {"id": name, "object": "model", "created": self.started, "owned_by": "factres",
                "factres": self.config.describe()}

    def about(self) -> dict:
        return {**self.config.describe(),
                "accepts": list(self.config.models) if self.config.models else "any model name",
                "cache": self.cache.stats()}


def create_app(config: ServeConfig) -> Starlette:
    """The app for `config`; uvicorn (or any ASGI server) runs it."""
    service = Service(config)

    async def body_of(request: Request) -> bytes | None:
        """The request's body (None: the client went away, nobody to answer)."""
        try:
            return await read_body(request.stream(), request.headers.get("content-length"),
                                   config.max_body, config.body_timeout)
        except ClientDisconnect:
            return None
        except asyncio.CancelledError:      # the server stops (E31): a 503, no traceback
            raise stopping(SHUTDOWN_TIMEOUT) from None

    async def chat(request: Request) -> Response:
        service.authorize(request)
        timing: dict[str, float] = {}
        clock = _Clock(timing)
        body = await body_of(request)
        if body is None:
            return Response(status_code=400)
        clock.lap("read")
        with _our_faults("chat completion"):
            request_, conversation = service.prepare(body, clock)
            # A memory in the cache answers here, on the event loop (a few ms at most, and no
            # hand-over between threads); a new one is built in a worker thread, so the loop
            # keeps serving while it is.
            found = service.cache.lookup(conversation.part)
            clock.lap("memory")
            if found is not None:
                streamed, reply = service.answer(request_, conversation, found, True, clock)
            else:
                streamed, reply = await run_in_threadpool(service.build_and_answer, request_,
                                                          conversation, clock)
        return _reply(streamed, reply, timing)

    async def models(request: Request) -> Response:
        service.authorize(request)
        if "memory" in request.path_params:
            check_name(request.path_params["memory"])
        return _json(service.models())

    async def named_body(request: Request) -> tuple[str, bytes | None]:
        """A named memory's request: the name checked, and the body (None: the client went
        away)."""
        service.authorize(request)
        name = request.path_params["memory"]
        check_name(name)
        return name, await body_of(request)

    async def named_chat(request: Request) -> Response:
        timing: dict[str, float] = {}
        clock = _Clock(timing)
        name, body = await named_body(request)
        if body is None:
            return Response(status_code=400)
        clock.lap("read")
        with _our_faults("named chat completion"):
            streamed, reply = await run_in_threadpool(service.named_reply, name, body, clock)
        return _reply(streamed, reply, timing)

    async def named_operations(request: Request) -> Response:
        # issue 32: P-Mem's patches (one object, or a list of them) applied to the memory
        name, body = await named_body(request)
        if body is None:
            return Response(status_code=400)
        patches = read_patches(body)
        with _our_faults("named operations"):
            done = await run_in_threadpool(service.named.operate, name, patches)
        return _json({"object": "list", "memory": name,
                      "data": [{"object": "memory.operation", **a.to_json()} for a in done]})

    async def named_list(request: Request) -> Response:
        service.authorize(request)
        listed = await run_in_threadpool(service.named.listing)
        return _json({"object": "list", "data": listed})

    async def named_delete(request: Request) -> Response:
        service.authorize(request)
        name = request.path_params["memory"]
        check_name(name)
        await run_in_threadpool(service.named.delete, name)
        return _json({"id": name, "object": "memory.deleted", "deleted": True})

    async def model(request: Request) -> Response:
        service.authorize(request)
        if "memory" in request.path_params:
            check_name(request.path_params["memory"])
        name = request.path_params["name"]
        if not config.accepts(name):
            raise model_not_found(name, config.listed, MAX_MODEL_NAME)
        return _json(service.model(name) | {"factres": service.about()})

    async def refused(request: Request, exc: ApiError) -> Response:
        # a body given up (408) may still be on its way: the connection cannot serve another
        headers = {"connection": "close"} if exc.status == 408 else None
        return Response(exc.to_bytes(), status_code=exc.status, media_type=JSON, headers=headers)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        try:
            service.authorize(request)
        except ApiError as denied:
            return await refused(request, denied)
        if exc.status_code == 405:
            error = method_not_allowed(request.method, request.url.path)
        elif exc.status_code == 404:
            error = unknown_url(request.method, request.url.path)
        else:
            error = ApiError(exc.status_code, str(exc.detail))
        return await refused(request, error)

    async def fault(request: Request, exc: Exception) -> Response:
        log.error("unexpected %s on %s %s", type(exc).__name__, request.method, request.url.path)
        return await refused(request, internal(type(exc).__name__))

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]),
              Route("/v1/models", models, methods=["GET"]),
              Route("/v1/models/{name:path}", model, methods=["GET"])]
    if service.named is not None:
        routes += [Route("/v1/memories", named_list, methods=["GET"]),
                   Route("/v1/memories/{memory}", named_delete, methods=["DELETE"]),
                   Route("/v1/memories/{memory}/operations", named_operations,
                         methods=["POST"]),
                   Route("/v1/memories/{memory}/chat/completions", named_chat,
                         methods=["POST"]),
                   Route("/v1/memories/{memory}/models", models, methods=["GET"]),
                   Route("/v1/memories/{memory}/models/{name:path}", model, methods=["GET"])]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        if service.named is not None:          # each named memory's last state written
            service.named.close_all()

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ApiError: refused, HTTPException: http_error,
                                        Exception: fault})
    app.state.service = service
    return app


@contextlib.contextmanager
def _our_faults(what: str) -> Iterator[None]:
    """A request's work: an ApiError goes out as it is; the server stopping while the work
    waits (a memory built, a worker busy) is a 503; any other exception is a fault of ours,
    logged as "<what> failed" and answered 500, and the server keeps serving."""
    try:
        yield
    except ApiError:
        raise
    except asyncio.CancelledError:
        raise stopping(SHUTDOWN_TIMEOUT) from None
    except Exception as exc:
        log.exception("%s failed", what)
        raise internal(type(exc).__name__) from None


def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none."""
    import ctypes
    import ctypes.util
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    return trim


_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc; elsewhere nothing). Called after
    each memory is built (and others evicted): a harness sends about 1 MB with every question,
    and glibc serves those bodies from a heap that the memories' tables fragment, so freed
    pages stay resident. After 50 conversations a server keeping no memory held 210 MiB
    without this, 141 MiB with it (benchmarks/serve.py, rss); a fixed mmap threshold held
    less (91 MiB) but cost every 262K request 1.2 ms more in page faults."""
    if _TRIM is not None:
        _TRIM(0)


class _Clock:
    """Milliseconds between laps, into `timing` (a step's name -> ms)."""

    def __init__(self, timing: dict[str, float], start: float | None = None) -> None:
        self.timing = timing
        self.last = time.perf_counter() if start is None else start

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timing[name] = (now - self.last) * 1e3
        self.last = now


def _reply(streamed: bool, reply, timing: dict[str, float]) -> Response:
    """The reply (JSON bytes, or the events when `streamed`) with its Server-Timing header."""
    header = {"server-timing": ", ".join(f"{k};dur={v:.3f}" for k, v in timing.items())}
    if streamed:
        return StreamingResponse(iter(reply), media_type="text/event-stream",
                                 headers=header | {"cache-control": "no-cache"})
    return Response(reply, media_type=JSON, headers=header)


def read_patches(body: bytes) -> list:
    """The patches of an operations request: one patch object, or a list of them, each
    checked (`read_patch`); ApiError 400 naming the field of the first bad one."""
    from resolver.store.operations import EXPECTED_PATCH, read_patch
    from resolver.strict_json import loads
    try:
        data = loads(body)
    except InputError as exc:
        raise invalid_json(str(exc)) from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise bad_request(f"No operation given: expected {EXPECTED_PATCH}, or a list of them.",
                          code="invalid_value")
    out = []
    for index, item in enumerate(items):
        try:
            out.append(read_patch(item))
        except InputError as exc:
            field = getattr(exc, "field", None)
            where = f"operations[{index}]" if isinstance(data, list) else None
            param = ".".join(p for p in (where, field) if p) or None
            raise bad_request(f"Invalid operation: {exc.render()}", param=param,
                              code="invalid_value") from None
    return out


def _json(data: dict) -> Response:
    return Response(orjson.dumps(data), media_type=JSON)


def uvicorn_config(config: ServeConfig, *, access_log: bool = True,
                   log_level: str = "info") -> "uvicorn.Config":
    made = uvicorn.Config(create_app(config), host=config.host, port=config.port,
                          access_log=access_log, log_level=log_level,
                          server_header=False, date_header=False,
                          timeout_keep_alive=config.keep_alive,
                          http=header_timeout.protocol(_http_protocol(), config.header_timeout),
                          limit_concurrency=config.limit_concurrency,
                          timeout_graceful_shutdown=SHUTDOWN_TIMEOUT)
    # after uvicorn configured its loggers (when the Config is made), which keeps filters
    access = logging.getLogger("uvicorn.access")
    if _CUT_PATH not in access.filters:
        access.addFilter(_CUT_PATH)
    return made


class _CutPath(logging.Filter):
    """Cuts the path in uvicorn's access-log line ('%s - "%s %s HTTP/%s" %d': client, method,
    path, version, status) to SHOWN_PATH characters: GET /v1/models/<20,000 characters> was
    logged whole (E13)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str) \
                and len(args[2]) > SHOWN_PATH:
            record.args = args[:2] + (clip(args[2], SHOWN_PATH),) + args[3:]
        return True


_CUT_PATH = _CutPath()


BIND_TRIES = 5     # --port 0 on a host of several addresses: tries to find one port free on all
BACKLOG = 2048     # uvicorn's own


def bind(config: ServeConfig) -> list[socket.socket]:
    """Listening sockets on `config.host` and `config.port`, bound now: one per address the
    host resolves to, as asyncio's create_server (which uvicorn would call) binds them, all on
    one port (with port 0, the port the first got). Binding before uvicorn starts lets the
    command say where it serves only once it does, and turns an address in use into the
    user's error (InputError), where uvicorn logged its own "[Errno 98]" after the banner and
    exited with status 3."""
    host = config.host[1:-1] if config.host.startswith("[") else config.host
    shown = config.host or "every address"
    try:
        infos = socket.getaddrinfo(host or None, config.port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"cannot bind {shown}: {exc.strerror}",
                         expected="an address or a host name of this machine") from None
    addresses = list(dict.fromkeys((family, address) for family, _, _, _, address in infos))
    for _ in range(BIND_TRIES):
        sockets: list[socket.socket] = []
        port = config.port
        try:
            for family, address in addresses:
                try:
                    sock = socket.socket(family, socket.SOCK_STREAM)
                except OSError:                    # a family this machine lacks: as asyncio,
                    continue                       # the host's other addresses serve
                sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:      # as asyncio: each family its own socket
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((address[0], port) + tuple(address[2:]))
                # listening now: two sockets bound with SO_REUSEADDR may share a port until
                # one listens, so only a listening socket holds it
                sock.listen(BACKLOG)
                port = sock.getsockname()[1]
            if not sockets:
                raise InputError(f"cannot bind {shown}: no address of it can be opened here",
                                 expected="an address of this machine")
            for sock in sockets:
                sock.set_inheritable(True)
            return sockets
        except OSError as exc:
            for sock in sockets:
                sock.close()
            if exc.errno == errno.EADDRINUSE and config.port == 0 and len(sockets) > 1:
                continue                           # the first's port is taken on another
            if exc.errno == errno.EADDRINUSE:
                raise InputError(f"port {config.port} on {shown} is in use",
                                 expected="another port, or --port 0 for any free one") from None
            raise InputError(f"cannot bind {shown} port {config.port}: {exc.strerror or exc}",
                             expected="an address of this machine, and a port it may "
                             "bind") from None
    raise InputError(f"no port is free on every address of {shown} after {BIND_TRIES} tries",
                     expected="a port given with --port")


def serve(config: ServeConfig, *, access_log: bool = True, log_level: str = "info",
          sockets: list[socket.socket] | None = None) -> None:
    """Run the server until it is stopped (Ctrl-C or SIGTERM: the requests in progress get
    SHUTDOWN_TIMEOUT seconds to finish), on `sockets` (from `bind`; bound here when None)."""
    sockets = bind(config) if sockets is None else sockets
    server = uvicorn.Server(uvicorn_config(config, access_log=access_log, log_level=log_level))
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:
        # uvicorn stops on Ctrl-C (SIGINT), then raises the signal again, which Python turns
        # into KeyboardInterrupt and click into "Aborted!" and status 1 (E30): the stop asked
        # for is a clean one. SIGTERM ends the process by its signal, as a supervisor expects.
        pass


@contextlib.contextmanager
def serving(config: ServeConfig, *, log_level: str = "warning") -> Iterator[str]:
    """Run the server in a thread while the block lasts; yields its base URL
    ("http://127.0.0.1:PORT/v1", the port uvicorn bound when `config.port` is 0)."""
    sockets = bind(config)
    server = uvicorn.Server(uvicorn_config(config, access_log=False, log_level=log_level))
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets},
                              name="factres-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start on {config.host}:{config.port}")
        time.sleep(0.01)
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    try:
        yield f"http://{host}:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
