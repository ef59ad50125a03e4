"""benchmarks/serve.py's load generator sends exactly what the harness's `openai` client
sends: its request body, byte for byte, caught from the client on a loopback port (the script
checks the same on every run, for each context). The module is loaded by path (benchmarks/ is
not a package)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench():
    spec = importlib.util.spec_from_file_location("factres_bench_serve",
                                                  ROOT / "benchmarks" / "serve.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_load_generators_body_is_the_openai_clients(monkeypatch):
    serve = bench()
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):      # set by the capture; restored
        monkeypatch.setenv(name, "")
    # text a JSON encoder may write in more than one way: quotes, line breaks, non-ASCII
    memory = serve.memory_text('0. Tim Cook is employed by "Apple".\n1. Zoë lives in Köln\u2019s '
                               "centre.\n")
    headers, body = serve.capture_openai(memory, "Who is Tim Cook employed by?")
    assert body == serve.request_body(memory, "Who is Tim Cook employed by?")
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer sk-bench"
