"""A loopback server that speaks Ollama's HTTP API as the `ollama` Python client expects it:
`/api/chat`, `/api/generate` (streaming as newline-delimited JSON in chunked encoding, or one
JSON body), `/api/tags`, `/api/show`; 404 for a model it does not have. It binds 127.0.0.1 on a
free port, so no test needs the network.

Behaviour is scripted per test by `respond(request) -> Reply | Status | Slow | str | dict`:
a str is the assistant's content, a dict is JSON-encoded as the content, `Status` is an HTTP
error, `Slow` delays another reply (past the client's timeout), `Reply(done_reason="length")`
is a truncated reply. `tags` scripts the model list the same way (a `Slow` hangs the host check,
a `Status` fails it). Every request body is kept in `requests` for the test to inspect."""
from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

MODEL = "planner-test"
DIGEST = "sha256:" + "ab" * 32
DETAILS = {"parent_model": "", "format": "gguf", "family": "testfam", "families": ["testfam"],
           "parameter_size": "1B", "quantization_level": "Q4_K_M"}


@dataclass
class Reply:
    content: str
    done_reason: str = "stop"


@dataclass
class Status:
    code: int
    error: str = "internal error"


@dataclass
class Slow:
    seconds: float
    then: object = None


def refused_url() -> str:
    """A loopback URL nothing listens on (a port that was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class OllamaServer:
    def __init__(self, respond: Callable[[dict], object] | None = None,
                 models: tuple[str, ...] = (MODEL,), chunk: int = 7,
                 tags: Slow | Status | None = None) -> None:
        self.respond = respond or (lambda request: Reply("{}"))
        self.models, self.chunk, self.tags = models, chunk, tags
        self.requests: list[dict] = []        # {"path": ..., "body": ...} in arrival order
        self._stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True   # else delayed ACKs add ~40 ms per reply

            def log_message(self, *args):   # keep pytest output clean
                pass

            def do_GET(self):
                server._handle(self, "GET")

            def do_POST(self):
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def chat_requests(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["path"] == "/api/chat"]

    def __enter__(self) -> "OllamaServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()          # wakes any Slow reply still sleeping
        self._httpd.shutdown()
        self._httpd.server_close()

    # ---- protocol ----------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        with self._lock:
            self.requests.append({"path": h.path, "method": method, "body": body})
        try:
            if h.path == "/api/tags" and method == "GET":
                if isinstance(self.tags, Slow) and self._stop.wait(self.tags.seconds):
                    return
                if isinstance(self.tags, Status):
                    return self._json(h, self.tags.code, {"error": self.tags.error})
                return self._json(h, 200, {"models": [self._model_entry(m) for m in self.models]})
            if h.path == "/api/show" and method == "POST":
                if body.get("model") not in self.models:
                    return self._not_found(h, body.get("model"))
                return self._json(h, 200, {"modelfile": "", "parameters": "", "template": "",
                                           "details": DETAILS, "model_info": {},
                                           "capabilities": ["completion"]})
            if h.path in ("/api/chat", "/api/generate") and method == "POST":
                if body.get("model") not in self.models:
                    return self._not_found(h, body.get("model"))
                return self._generate(h, body)
            return self._json(h, 404, {"error": f"{method} {h.path} not found"})
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up (timeout): nothing to answer

    def _model_entry(self, name: str) -> dict:
        return {"name": name, "model": name, "modified_at": "2025-01-01T00:00:00Z",
                "size": 1000, "digest": DIGEST, "details": DETAILS}

    def _not_found(self, h, model) -> None:
        self._json(h, 404, {"error": f"model \"{model}\" not found, try pulling it first"})

    def _generate(self, h, body: dict) -> None:
        out = self.respond(body)
        while isinstance(out, Slow):
            if self._stop.wait(out.seconds):
                return
            out = out.then
        if isinstance(out, Status):
            return self._json(h, out.code, {"error": out.error})
        if isinstance(out, dict):
            out = Reply(json.dumps(out))
        if isinstance(out, str):
            out = Reply(out)
        chat = h.path == "/api/chat"

        def piece(text: str, done: bool) -> dict:
            obj = {"model": body["model"], "created_at": "2025-01-01T00:00:00Z", "done": done}
            if chat:
                obj["message"] = {"role": "assistant", "content": text}
            else:
                obj["response"] = text
            if done:
                obj.update({"done_reason": out.done_reason, "total_duration": 1000,
                            "prompt_eval_count": 10, "eval_count": 5})
            return obj

        if body.get("stream", True) is False:
            return self._json(h, 200, piece(out.content, True))
        # Ollama streams newline-delimited JSON in chunked transfer encoding.
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        text = out.content
        parts = [text[i:i + self.chunk] for i in range(0, len(text), self.chunk)]
        for part in parts:
            self._chunk(h, json.dumps(piece(part, False)).encode() + b"\n")
        self._chunk(h, json.dumps(piece("", True)).encode() + b"\n")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    @staticmethod
    def _chunk(h, data: bytes) -> None:
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    @staticmethod
    def _json(h, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()


# ---- helpers for the tests that drive the server ------------------------------------------
def question_of(request: dict) -> str:
    """The question text of a planner, repair or reader request."""
    import re

    return re.search(r"Question: (.*)\n", request["messages"][-1]["content"])[1]


def write_small_data(path, per_source: int = 5):
    """A copy of the bundled 6K rows with only the first questions of each row (same context)."""
    from resolver.haystack import bundled_path

    doc = json.loads(bundled_path().read_text("utf-8"))
    for row in doc["data"]:
        row["questions"] = row["questions"][:per_source]
        row["answers"] = row["answers"][:per_source]
        row["metadata"]["qa_pair_ids"] = row["metadata"]["qa_pair_ids"][:per_source]
    path.write_text(json.dumps(doc), "utf-8")
    return path
