"""OpenAI's error objects: every refusal is `{"error": {"message", "type", "param", "code"}}`
with the HTTP status OpenAI gives the same case, so a client raises its usual exception
(`openai.BadRequestError`, `NotFoundError`, `AuthenticationError`, ...) with our message."""
from __future__ import annotations

import orjson

from resolver.errors import FactresError

INVALID_REQUEST = "invalid_request_error"
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


def model_not_found(model: str, accepted: tuple[str, ...]) -> ApiError:
    return ApiError(404, f"The model `{model}` does not exist or you do not have access to it. "
                    f"This factres server answers to: {', '.join(accepted)}.",
                    param="model", code="model_not_found")


def question_too_long(length: int, limit: int, message: int, whole: bool) -> ApiError:
    """The question found in messages[`message`] is longer than factres reads (`factres run`
    refuses such a row too). `whole`: the message asks nothing at its end, so all of it was
    taken for the question, which the client most likely did not mean."""
    where = f"the last user message (messages[{message}])"
    found = (f"{where} asks nothing at its end (no last sentence ending with \"?\", no "
             "instruction prompt), so all of it is the question, and it" if whole
             else f"the question in {where}")
    return ApiError(400, f"{found[0].upper()}{found[1:]} has {length:,} characters: factres "
                    f"reads questions of at most {limit:,} characters.",
                    param="messages", code="question_too_long")


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
    return ApiError(404, f"Unknown request URL: {method} {path}. factres serves POST "
                    "/v1/chat/completions and GET /v1/models.", code="unknown_url")


def method_not_allowed(method: str, path: str) -> ApiError:
    return ApiError(405, f"Method {method} is not allowed for {path}.",
                    code="method_not_allowed")


def internal(what: str) -> ApiError:
    return ApiError(500, f"The factres server failed on this request ({what}); it keeps "
                    "serving. Please report it with the request.", type=SERVER_ERROR,
                    code="internal_error")
