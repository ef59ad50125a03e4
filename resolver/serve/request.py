"""A chat-completions request body, read and checked: the model, the messages as (role, text),
`stream` and `stream_options.include_usage`, and factres's own `abstain_below` (a client sends it
with `extra_body`). A body that is not UTF-8 is refused naming the byte and its offset. Everything factres has no use for (temperature,
max_tokens, top_p, stop, tools, ...) is accepted and ignored, as the issue asks; `n` above 1 is
refused (factres has one answer). Each refusal is the `ApiError` OpenAI gives, naming the
parameter (`messages[2].content`)."""
from __future__ import annotations

from dataclasses import dataclass

import orjson

from resolver.errors import clip
from resolver.serve.api_errors import bad_request, invalid_json, not_utf8
from resolver.serve.config import ABSTAIN_LEVELS

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
SHOWN = 80                  # characters of a value sent that a refusal quotes


@dataclass(frozen=True)
class Message:
    role: str
    text: str        # the content as text: a string, or its text parts joined by line breaks


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: tuple[Message, ...]
    stream: bool = False
    include_usage: bool = False      # stream_options.include_usage: a last chunk with usage
    abstain_below: str | None = None  # factres's own field (a client's `extra_body`): empty an
                                      # answer labelled below it, as `factres run --abstain-below`


# The magic numbers of compressed bodies a client may send (Content-Encoding: gzip, zstd).
COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))


def parse_request(body: bytes) -> ChatRequest:
    """The request in `body`, or the ApiError (400) naming what is wrong."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        packed = next((name for magic, name in COMPRESSED if body.startswith(magic)), None)
        if packed is not None:
            # a client that compresses its body (Content-Encoding): said so, not "byte 0x8b at
            # offset 1" (verify-e F15)
            raise invalid_json(f"the body is {packed}-compressed (it starts with "
                               f"{' '.join(f'0x{b:02x}' for b in body[:2])}): compressed "
                               "bodies are not supported; send the JSON uncompressed, with no "
                               "Content-Encoding") from None
        try:
            # orjson says where in the decoded text, "line 1 column 1 (char 0)" for a bad byte
            # (E14): the body's own offset is found only when the JSON is refused
            body.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise not_utf8(body[bad.start], bad.start, bad.reason) from None
        raise invalid_json(str(exc)) from None
    if not isinstance(data, dict):
        raise invalid_json(f"the body is a JSON {_kind(data)}, not an object")
    model = data.get("model")
    if model is None:
        raise bad_request("you must provide a model parameter", param="model")
    if not isinstance(model, str):
        raise _invalid_type("model", "a non-empty string", model)
    if not model:
        raise bad_request("Invalid value for 'model': it is empty (expected a model name, "
                          "such as gpt-4o-mini).", param="model", code="invalid_value")
    n = data.get("n")
    if n is not None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise bad_request(f"Invalid value for 'n': expected an integer of at least 1, but "
                              f"got {_kind(n)} {n!r}.", param="n", code="invalid_value")
        if n > 1:
            raise bad_request(f"n = {n} is not supported: factres gives one answer per "
                              "question (n must be 1).", param="n", code="unsupported_value")
    stream = data.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _invalid_type("stream", "a boolean", stream)
    options = data.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise _invalid_type("stream_options", "an object", options)
    usage = (options or {}).get("include_usage")
    level = data.get("abstain_below")
    if level is not None and level not in ABSTAIN_LEVELS:
        if not isinstance(level, str):
            raise _invalid_type("abstain_below", "a string (low, medium or high)", level)
        raise bad_request(f"Invalid value for 'abstain_below': {_shown(level)}; supported values "
                          f"are: {', '.join(repr(v) for v in ABSTAIN_LEVELS)} (or null).",
                          param="abstain_below", code="invalid_value")
    return ChatRequest(model, _messages(data.get("messages")), bool(stream), usage is True,
                       level)


def _messages(raw) -> tuple[Message, ...]:
    if raw is None:
        raise bad_request("Missing required parameter: 'messages'.", param="messages",
                          code="missing_required_parameter")
    if not isinstance(raw, list):
        raise _invalid_type("messages", "an array", raw)
    out = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise _invalid_type(where, "an object", message)
        if "role" not in message:
            raise _missing(f"{where}.role")
        role = message["role"]
        if not isinstance(role, str):
            raise _invalid_type(f"{where}.role", "a string", role)
        if role not in ROLES:
            raise bad_request(f"Invalid value for '{where}.role': {_shown(role)}; supported "
                              f"values are: {', '.join(repr(r) for r in ROLES)}.",
                              param=f"{where}.role", code="invalid_value")
        out.append(Message(role, _text(message.get("content"), f"{where}.content")))
    if not any(m.role == "user" for m in out):
        raise bad_request("The messages hold no user message: factres answers the question "
                          "at the end of the last user message.", param="messages",
                          code="no_user_message")
    return tuple(out)


def _text(content, where: str) -> str:
    """A message's content as text: a string; text parts joined by line breaks; "" for none
    (an assistant message that only called tools)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _invalid_type(where, "a string or an array of content parts", content)
    texts = []
    for j, part in enumerate(content):
        texts.append(_part_text(part, f"{where}[{j}]"))
    return "\n".join(texts)


def _part_text(part, here: str) -> str:
    """A content part's text. Each refusal names the field at fault: the part itself (not an
    object, a type other than text), its `type` or its `text` (missing, or not a string)."""
    if not isinstance(part, dict):
        raise _invalid_type(here, "an object (a content part)", part)
    if "type" not in part:
        raise _missing(f"{here}.type")
    kind = part["type"]
    if not isinstance(kind, str):
        raise _invalid_type(f"{here}.type", "a string", kind)
    if kind != "text":
        raise bad_request(f"Invalid content part '{here}': factres reads text only "
                          f'({{"type": "text", "text": "..."}}), not a part of type '
                          f"{_shown(kind)}.", param=here, code="invalid_value")
    if "text" not in part:
        raise _missing(f"{here}.text")
    text = part["text"]
    if not isinstance(text, str):
        raise _invalid_type(f"{here}.text", "a string", text)
    return text


def _missing(param: str):
    return bad_request(f"Missing required parameter: '{param}'.", param=param,
                       code="missing_required_parameter")


def _invalid_type(param: str, expected: str, value):
    """OpenAI's refusal of a field of the wrong JSON type, naming the field and both types."""
    return bad_request(f"Invalid type for '{param}': expected {expected}, but got "
                       f"{_kind(value)}.", param=param, code="invalid_type")


def _shown(value) -> str:
    """A value the client sent, as a message quotes it: its repr, cut (a 100,000-character
    role must not come back whole)."""
    return clip(repr(value), SHOWN)


def _kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
            float: "number", type(None): "null"}.get(type(value), type(value).__name__)
