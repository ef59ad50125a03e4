"""`factres serve`: parse the options, check them (`ServeConfig`), run the server on uvicorn.
The web stack (the `serve` extra) is imported only when the server starts."""
from __future__ import annotations

import math

import click

from resolver.cli.options import library_errors
from resolver.serve.config import (ABSTAIN_LEVELS, DEFAULT_BODY_TIMEOUT, DEFAULT_CACHE,
                                   DEFAULT_HOST, DEFAULT_KEEP_ALIVE, DEFAULT_LIMIT_CONCURRENCY,
                                   DEFAULT_MAX_BODY, DEFAULT_MAX_OPEN, DEFAULT_PORT, MAX_BODY,
                                   MAX_CACHE, MAX_MODEL_NAME, MAX_SECONDS, MIB, ServeConfig)


class Mebibytes(click.ParamType):
    """A size given in MiB, converted to whole bytes: a finite number that is at least
    `least` bytes once converted and at most `most` MiB. "nan" and "inf" are refused here,
    with the option's name (float("nan") passes any range check, and converting it to bytes
    raised a traceback); so is a size that rounds below the least ("1e-9" MiB is 0 bytes), and
    one above the most ("1e300" MiB: a finite number no reply can write), saying so."""
    name = "MB"

    def __init__(self, least: int, most: int) -> None:
        self.least, self.most = least, most

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            number = float(value)                 # the default, in MiB
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number of MiB", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of MiB", param, ctx)
        if number < 0:
            self.fail(f"{value!r} is a negative size", param, ctx)
        if number > self.most:
            self.fail(f"{value!r} MiB is above the largest size taken ({self.most:,} MiB)",
                      param, ctx)
        size = int(number * MIB)
        if size < self.least:
            unit = "one byte" if self.least == 1 else f"{self.least} bytes"
            self.fail(f"{value!r} MiB is below {unit} ({size} bytes once converted)", param, ctx)
        return size


def _names(ctx, param, values: tuple[str, ...]) -> tuple[str, ...]:
    """Names given as repeated options or comma-separated, in order, without repeats. A value
    that names no model ('', ',', ' ') is refused: dropped, it left no name, and a server of no
    names answers to every name (E33)."""
    names = []
    for value in values:
        found = [n.strip() for n in value.split(",") if n.strip()]
        if not found:
            raise click.BadParameter(f"{value!r} names no model (expected model names such as "
                                     "gpt-4o-mini, separated by commas)", ctx, param)
        names += found
    return tuple(dict.fromkeys(names))


@click.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to bind. Any address that is not loopback needs --api-key.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535),
              help="Port to bind (0: any free port).")
@click.option("--api-key", envvar="FACTRES_API_KEY", metavar="KEY",
              help="Refuse requests without 'Authorization: Bearer KEY' (401); printable "
                   "ASCII, no blank at either end. Also read from $FACTRES_API_KEY. Default: "
                   "no key (loopback only).")
@click.option("--max-body", default=DEFAULT_MAX_BODY // MIB, show_default=True,
              type=Mebibytes(least=1, most=MAX_BODY // MIB), metavar="MB",
              help=f"Largest request body, in MiB (one byte to {MAX_BODY // MIB:,}); a larger "
                   "body is refused (413).")
@click.option("--models", "models", multiple=True, metavar="NAME", callback=_names,
              help=f"Answer only to these model names (and 'factres', 'factres-readout'); others "
                   f"get 404. Repeat or separate with commas; at most {MAX_MODEL_NAME} characters "
                   "each. Default: any name, echoed in the reply.")
@click.option("--cache-mb", default=DEFAULT_CACHE // MIB, show_default=True,
              type=Mebibytes(least=0, most=MAX_CACHE // MIB), metavar="MB",
              help=f"Budget of the memory cache, in MiB of estimated resident memory (0 to "
                   f"{MAX_CACHE // MIB:,}); the least recently used conversation's memory goes "
                   "first.")
@click.option("--plans", "plans", multiple=True, metavar="SET",
              help="Live plan set (live:rules, live:lexicon); repeat for several, tried in "
                   "order. Default: live:rules then live:lexicon, as factres run.")
@click.option("--mode", type=click.Choice(["search", "plain"]), default="search",
              show_default=True, help="search: the scored path search; plain: latest version "
              "at every hop (the baseline), as factres run --mode.")
@click.option("--abstain-below", type=click.Choice(ABSTAIN_LEVELS), default=None,
              metavar="LEVEL", help="Leave unanswered (with the reason) every question whose "
              "answer's confidence label is below LEVEL: low, medium or high, as factres run "
              "--abstain-below. A request's own abstain_below field (extra_body) overrides it.")
@click.option("--keep-alive", default=DEFAULT_KEEP_ALIVE, show_default=True,
              type=click.FloatRange(0, MAX_SECONDS, min_open=True), metavar="SECONDS",
              help="Close a connection idle for this long.")
@click.option("--limit-concurrency", default=DEFAULT_LIMIT_CONCURRENCY, show_default=True,
              type=click.IntRange(2), metavar="N",
              help="Answer 503 to a request that arrives while N connections are open (its "
                   "own included) or N requests are in progress.")
@click.option("--body-timeout", default=DEFAULT_BODY_TIMEOUT, show_default=True,
              type=click.FloatRange(0, MAX_SECONDS, min_open=True), metavar="SECONDS",
              help="Give up a request whose body stops arriving for this long (408).")
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="Log one line per request on stdout.")
@click.option("--store", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Keep named memories, one file each, in DIR (made when missing): the base "
                   "URL http://HOST:PORT/v1/memories/NAME is the memory NAME, kept across "
                   "requests and restarts. Default: none (every request carries its context).")
@click.option("--max-open", type=click.IntRange(1), default=DEFAULT_MAX_OPEN, show_default=True,
              metavar="N", help="Named memories open at once, at most (each counts against "
              "--cache-mb; the least recently used is closed first).")
@library_errors
def serve_command(host, port, api_key, max_body, models, cache_mb, plans, mode, abstain_below,
                  keep_alive, limit_concurrency, body_timeout, access_log, store,
                  max_open) -> None:
    """Answer OpenAI chat-completions requests with factres, so a harness evaluates it by
    pointing its OpenAI client here (OPENAI_BASE_URL=http://HOST:PORT/v1).

    POST /v1/chat/completions splits the conversation into memory (every message's text but
    the question, ingested into a memory cached by its hash, so the second question over the
    same context ingests nothing) and the question at the end of the last user message, and
    replies with the answer as the message content, usage counted in whitespace words, and a
    `factres` field (path, serials, ledger statuses, confidence, score terms); the model name
    factres-readout replies with the memory's readout for the question instead (the lines a
    language model of your own would read, 600 characters at most). stream: true is answered
    as server-sent events. Parameters factres has no use for (temperature,
    max_tokens, ...) are ignored; n > 1 is refused. GET /v1/models lists the names it answers
    to. Errors are OpenAI's error JSON: 400 malformed JSON, a body that is not UTF-8, no user
    message or a question over 1,000 characters, 401 a wrong or missing key, 404 a model
    outside --models or a name over 256 characters, 408 a body that stopped arriving
    (--body-timeout), 413 a body over --max-body; past --limit-concurrency, uvicorn answers 503.
    The address is bound before the first line names it (with --port 0, the port bound); a
    port in use is an error. The API key is the only protection: no TLS, so put a proxy in
    front when the address is not loopback.

    With --store DIR, named memories: POST /v1/memories/NAME/chat/completions appends the
    request's memory part to the memory NAME (DIR/NAME.db; a resent conversation only its new
    text) and answers its question from everything the memory holds, so facts sent in earlier
    requests, or before a restart, answer bare questions. GET /v1/memories lists them, DELETE
    /v1/memories/NAME removes one.

    Needs the serve extra: pip install 'factres[serve]'. The example serves until stopped
    (Ctrl-C or SIGTERM; requests in progress get 10 seconds to finish).

    Example: factres serve --port 8000 --models gpt-4.1-mini
    """
    config_args = {"plan_sets": tuple(plans)} if plans else {}
    config = ServeConfig(host=host, port=port, api_key=api_key, max_body=max_body,
                         models=models, cache_bytes=cache_mb, mode=mode, keep_alive=keep_alive,
                         limit_concurrency=limit_concurrency, body_timeout=body_timeout,
                         abstain_below=abstain_below, store=store, max_open=max_open,
                         **config_args)
    # The web stack loads here, not before: no other command imports it.
    from resolver.serve.app import bind, serve
    # Bound before the banner: an address in use is an error, never a banner and then
    # uvicorn's own message; with --port 0 the banner names the port bound.
    sockets = bind(config)
    port = sockets[0].getsockname()[1]
    click.echo(f"factres serve: http://{_url_host(host)}:{port}/v1: set OPENAI_BASE_URL to "
               "it; Ctrl-C stops", err=True)
    serve(config, access_log=access_log, sockets=sockets)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
