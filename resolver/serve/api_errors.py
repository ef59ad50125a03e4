"""OpenAI's error objects: every refusal is `{"error": {"message", "type", "param", "code"}}`
with the HTTP status OpenAI gives the same case, so a client raises its usual exception
(`openai.BadRequestError`, `NotFoundError`, `AuthenticationError`, ...) with our message."""
from __future__ import annotations

import orjson

from resolver.errors import FactresError, clip

INVALID_REQUEST = "invalid_request_error"
SHOWN_NAME = 80             # characters of a name too long that a refusal echoes
SHOWN_PATH = 200            # characters of a URL path a refusal or the access log echoes
SERVER_ERROR = "server_error"


class ApiError(FactresError):
    """A request the server refuses, as OpenAI would: status, message, type, param, code."""

    def __init__(self, status: int, message: str, *, type: str = INVALID_REQUEST,
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message = status, message
        self.type, self.param, self.code = type, param, code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}

    def to_bytes(self) -> bytes:
        return orjson.dumps(self.body())


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def invalid_json(detail: str) -> ApiError:
    return ApiError(400, f"We could not parse the JSON body of your request: {detail}. "
                    "(factres expects a JSON chat-completions request body.)",
                    code="invalid_json")


def model_not_found(model: str, accepted: tuple[str, ...], longest: int) -> ApiError:
    """A model name the server does not answer to; one over `longest` characters is echoed
    cut (E13: a name of 10^6 characters came back whole)."""
    if len(model) > longest:
        return ApiError(404, f"The model `{clip(model, SHOWN_NAME)}` does not exist: model "
                        f"names are at most {longest} characters, and this one has "
                        f"{len(model):,}.", param="model", code="model_not_found")
    return ApiError(404, f"The model `{model}` does not exist or you do not have access to it. "
                    f"This factres server answers to: {', '.join(accepted)}.",
                    param="model", code="model_not_found")


def question_too_long(length: int, limit: int, message: int) -> ApiError:
    """The question found in messages[`message`] is longer than factres reads (`factres run`
    refuses such a row too)."""
    return ApiError(400, f"The question in the last user message (messages[{message}]) has "
                    f"{length:,} characters: factres reads questions of at most {limit:,} "
                    "characters.", param="messages", code="question_too_long")


def body_timeout(seconds: float, received: int) -> ApiError:
    """The body stopped arriving (E31): no byte came for `seconds`."""
    return ApiError(408, f"The request body stopped arriving: no byte came for {seconds:g} s "
                    f"after {received:,} bytes (factres serve --body-timeout SECONDS sets the "
                    "wait).", code="request_timeout")


def not_utf8(byte: int, offset: int, reason: str) -> ApiError:
    """A body that is not UTF-8 (E14): the byte, its offset in the body, and what is wrong
    (Python's words: "invalid start byte", "invalid continuation byte", ...)."""
    return invalid_json(f"the body is not UTF-8: byte 0x{byte:02x} at offset {offset:,} of the "
                        f"body (counted from 0): {reason}")


def body_too_large(limit: int) -> ApiError:
    return ApiError(413, f"The request body is larger than this server's limit of {limit} bytes "
                    "(factres serve --max-body MB raises it).", code="request_too_large")


def missing_key() -> ApiError:
    return ApiError(401, "You didn't provide an API key. You need to provide your API key in an "
                    "Authorization header using Bearer auth (i.e. Authorization: Bearer "
                    "YOUR_KEY); this factres server was started with --api-key.")


def wrong_key() -> ApiError:
    return ApiError(401, "Incorrect API key provided: it is not the key this factres server "
                    "was started with (--api-key).", code="invalid_api_key")


def unknown_url(method: str, path: str) -> ApiError:
    return ApiError(404, f"Unknown request URL: {method} {clip(path, SHOWN_PATH)}. factres "
                    "serves POST /v1/chat/completions and GET /v1/models.", code="unknown_url")


def method_not_allowed(method: str, path: str) -> ApiError:
    return ApiError(405, f"Method {method} is not allowed for {clip(path, SHOWN_PATH)}.",
                    code="method_not_allowed")


def stopping(seconds: int) -> ApiError:
    """A request cut off by the server's stop: uvicorn cancels what is still in progress
    `seconds` after SIGTERM or Ctrl-C (a body still arriving, a memory being built)."""
    return ApiError(503, f"The factres server is stopping: this request was still in progress "
                    f"{seconds} s after the stop was asked, and was given up. Send it again "
                    "once the server is back.", type=SERVER_ERROR, code="server_stopping")


def internal(what: str) -> ApiError:
    return ApiError(500, f"The factres server failed on this request ({what}); it keeps "
                    "serving. Please report it with the request.", type=SERVER_ERROR,
                    code="internal_error")
