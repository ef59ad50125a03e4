"""Reading a request's body: bounded in size (413 past `--max-body`) and in time (408 when it
stops arriving for `--body-timeout` seconds).

uvicorn bounds neither a body's size nor how long it takes to arrive: a client that sent its
headers and 10 of 1,000 bytes held its request open for ever, and on SIGTERM the server waited
for it and never exited (audit E, E31). Here each part of the body must arrive within the
timeout of the one before (a body that keeps arriving, however slowly, is read), and uvicorn's
graceful-shutdown timeout (`config.SHUTDOWN_TIMEOUT`) ends what is still waiting at a stop."""
from __future__ import annotations

import asyncio
from typing import AsyncIterator

from resolver.serve.api_errors import bad_request, body_timeout, body_too_large

DRAIN = 4          # a body over the limit is still read (and dropped) up to this many limits


async def read_body(parts: AsyncIterator[bytes], declared: str | None, limit: int,
                    timeout: float) -> bytes:
    """The body from `parts` (the ASGI stream), or an ApiError: 400 for a `declared`
    Content-Length that is not a number, 413 past `limit` bytes, 408 when no part comes for
    `timeout` seconds. A body over the limit is read to its end and dropped when it is not much
    larger (up to DRAIN limits), so that a client still sending it gets the 413 instead of a
    connection reset; a larger one is cut off."""
    if declared is not None and not declared.isdigit():
        raise bad_request("Content-Length is not a number of bytes")
    if declared is not None and int(declared) > DRAIN * limit:
        raise body_too_large(limit)
    kept, size = [], 0
    parts = aiter(parts)
    while True:
        try:
            async with asyncio.timeout(timeout):
                part = await anext(parts)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise body_timeout(timeout, size) from None
        size += len(part)
        if size > limit:
            kept = []
            if size > DRAIN * limit:
                break
        else:
            kept.append(part)
    if size > limit:
        raise body_too_large(limit)
    return b"".join(kept)
