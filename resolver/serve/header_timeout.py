"""A deadline for a request's headers: uvicorn's HTTP protocol with a timer from the first byte
of a request (or the connection's opening) to the end of its headers (verify-e F07).

uvicorn has none: its keep-alive timeout closes a connection idle after a reply, and the body
timeout (body.py) starts once the headers are read, so a connection that sends nothing, or half
its headers, stayed open for as long as the client liked, and counted against
`--limit-concurrency`: three such sockets under `--limit-concurrency 3` made every real
client's request a 503. Here such a connection is closed `--header-timeout` seconds after it
opened or its request began: with a 408 when some of the request came, quietly when nothing
did. The deadline is for the whole head (a client sending a byte a second does not keep it),
so a slow client cannot hold a connection for more than that long before its request is read.

The protocol is uvicorn's own (httptools when installed, as uvicorn's "auto" picks, else h11),
subclassed: both make a new `cycle` when a request's headers are complete, which ends the
wait."""
from __future__ import annotations

import asyncio
import logging

import orjson

log = logging.getLogger("factres.serve")


def timeout_reply(seconds: float) -> bytes:
    """The 408 sent to a connection whose request's headers did not all come in time."""
    body = orjson.dumps({"error": {
        "message": f"The request headers did not all arrive within {seconds:g} s (factres "
                   "serve --header-timeout SECONDS sets the wait).",
        "type": "invalid_request_error", "param": None, "code": "request_timeout"}})
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n" % len(body)) + body


def protocol(base: type, seconds: float) -> type:
    """uvicorn's HTTP protocol `base` (app.py picks it: only app.py imports the web stack) with
    a header deadline of `seconds` (see the module docstring), for `uvicorn.Config(http=...)`."""

    class HeaderDeadline(base):
        header_timeout = seconds

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._head_timer = None
            self._head_bytes = 0
            self._arm()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            waiting = before is None or before.response_complete
            if waiting:
                self._head_bytes += len(data)
            super().data_received(data)
            if self.cycle is not before:       # the headers came: a request is read
                self._disarm()
                self._head_bytes = 0
            elif waiting and self._head_timer is None:
                self._arm()                    # a request after a reply has begun

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if not self.transport.is_closing():
                self._head_timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _expired(self) -> None:
            self._head_timer = None
            if self.transport.is_closing():
                return
            if self._head_bytes:
                log.warning("closed a connection whose request headers did not all arrive "
                         "within %g s (%d bytes came)", self.header_timeout, self._head_bytes)
                self.transport.write(timeout_reply(self.header_timeout))
            self.transport.close()

    return HeaderDeadline
