"""`factres serve` under load, against `factres run`; its memory against its cache budget.

    python benchmarks/serve.py [--clients 8] [--cache-mb 128] [--conversations 50]

Every ratio comes from one run of this script. The server runs as `factres serve` in a process
of its own on a loopback port; the clients are threads of this process, each with its own
`openai.OpenAI()` configured only by OPENAI_BASE_URL and OPENAI_API_KEY, sending exactly what
MemoryAgentBench's long-context agent sends (a system message, then one user message holding
every memorize frame of the context joined by line breaks, a line break and the instruction
prompt; gpt-4o-mini, max_tokens 10).

  questions  the 200 dev questions over the 6K context and 600 seeded synthetic questions
             (benchmarks/synthetic.py: 100 single-hop and 100 multi-hop per size) over the
             32K, 64K and 262K contexts. Each reply must equal the run's answer.
  in run     a question's time inside `factres run`: compiling it with the live plan sets
             (`compile_live`: rules and lexicon) and `resolve_question` over the run's store
             of its context, the steps `factres run` takes per question once the context is
             parsed and its store built (parsing, scoring and writing the run folder are left
             out: they are not per question). Measured here, in one process: each question
             once, in order, over a fresh store whose lazy indexes a throwaway question built,
             as a run meets them (no read cache has seen the question before).
  load       a fresh server, each conversation warmed by one request (its memory built),
             then the 800 questions in a seeded order, by 1 client; again with a fresh server
             and --clients concurrent clients: requests/s, p50 and p95 latency (from the
             client's call to its parsed reply), and the ratio of the p50 latency to the p50
             in-run time of the same questions, per size and over all. Target: <= 3 on
             loopback. The server's own time per request and per step (its Server-Timing
             header: wait for a worker thread, read the body, parse the JSON, split and hash,
             find the memory, query, write the reply) breaks the latency down; the rest is
             the client's (the openai client encoding a body as large as the context and
             decoding the reply) and the loopback's.
  rss        --conversations different conversations (the four contexts in turn, each with
             its own frame time stamps, so each is a new memory; 3 questions each) arrive at
             two fresh servers from --clients concurrent clients: one with a cache budget of
             --cache-mb, one that keeps nothing (budget 0), whose peak resident memory is the
             fixed base (the process, its imports, and the transient memory of the requests
             in flight). Target: the first's peak RSS <= the second's + the budget.
  size       the cache's estimate of a memory (resolver/serve/cache.py) against tracemalloc,
             for each context fed as the harness sends it, after 200 questions.

Exits 1 when a target is missed."""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from resolver.haystack import Question, bundled_path, load  # noqa: E402
from resolver.memory import harness  # noqa: E402
from resolver.plan.planning import compile_live  # noqa: E402
from resolver.search.resolve import resolve_question  # noqa: E402
from resolver.serve.cache import estimate_bytes  # noqa: E402
from resolver.serve.conversation import remember, split  # noqa: E402
from resolver.serve.request import Message  # noqa: E402
from resolver.store.fact_store import FactStore  # noqa: E402
from resolver.text.cache import load_parse  # noqa: E402

SYSTEM = ("You are a helpful assistant that can read the context and memorize it for future "
          "retrieval.")
SIZES = ("6k", "32k", "64k", "262k")
TARGET_RATIO = 3.0
MODEL = "gpt-4o-mini"


# ---- the questions -------------------------------------------------------------------------------
def synthetic():
    spec = importlib.util.spec_from_file_location("factres_bench_synthetic",
                                                  ROOT / "benchmarks" / "synthetic.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def contexts() -> dict[str, tuple[str, list[str]]]:
    """size -> (context, questions)."""
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    out = {"6k": (haystack.text, [q.text for q in dataset.questions])}
    syn = synthetic()
    for size in SIZES[1:]:
        text = (ROOT / "resolver" / "data" / "fc" / f"factconsolidation_{size}_context.txt"
                ).read_text("utf-8")
        rows = syn.generate(text, size, seed=0, n_sh=100, n_mh=100)
        out[size] = (text, [q for row in rows for q in row["questions"]])
    return out


def memory_text(context: str, stamp: str = "2025-01-01") -> str:
    frames = [harness.frame_chunk(c, f"{stamp} {i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}")
              for i, c in enumerate(harness.chunk_context(context))]
    return "\n".join(frames) + "\n"


def messages(memory: str, question: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": memory + harness.prompt(question)}]


# ---- inside factres run ------------------------------------------------------------------------
def in_run(ctx: dict[str, tuple[str, list[str]]]) -> dict[tuple[str, int], tuple[float, str]]:
    """(size, index) -> (seconds, the run's answer): each question once, in order, over a fresh
    store of its context whose lazy indexes one throwaway question built, as a run meets
    them (the read caches hold no question twice)."""
    out = {}
    for size, (context, questions) in ctx.items():
        store = FactStore(load_parse(context).facts)
        store.ledger
        for i, text in enumerate(["Who is the head of state of Atlantis?", *questions]):
            start = time.perf_counter()
            q = Question("q", "bench", 0, text, "unknown", "unknown", "")
            answer = resolve_question(q, store, compile_live(text, store)).answer
            if i:
                out[(size, i - 1)] = (time.perf_counter() - start, answer)
    return out


# ---- the server --------------------------------------------------------------------------------
class Server:
    """`factres serve` in a process of its own, on a free loopback port."""

    def __init__(self, cache_mb: float) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from oracle.cli import main; main()", "serve",
             "--port", str(self.port), "--cache-mb", str(cache_mb), "--no-access-log"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client().models.list()
                return
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("factres serve did not start")
                time.sleep(0.1)

    def client(self):
        os.environ.update(OPENAI_BASE_URL=self.url, OPENAI_API_KEY="sk-bench")
        from openai import OpenAI
        return OpenAI()

    def rss(self) -> int:
        """Resident bytes of the server process now (Linux: /proc)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def cpu(self) -> float:
        """CPU seconds the server process has used (Linux: /proc, user + system)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def cache(self) -> dict:
        return self.client().models.list().model_extra["factres"]["cache"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def timed_request(api, memory: str, question: str) -> tuple[float, str, dict]:
    start = time.perf_counter()
    raw = api.chat.completions.with_raw_response.create(
        model=MODEL, messages=messages(memory, question), max_tokens=10, temperature=0)
    reply = raw.parse()
    seconds = time.perf_counter() - start
    steps = {}
    for part in raw.headers.get("server-timing", "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        if dur:
            steps[name] = float(dur) / 1e3
    return seconds, reply.choices[0].message.content, steps


def run_load(server: Server, jobs: list[tuple[str, int, str, str]], clients: int
             ) -> tuple[float, dict]:
    """(wall seconds, (size, index) -> (latency, answer, server steps))."""
    local = threading.local()

    def work(job):
        if not hasattr(local, "api"):
            local.api = server.client()
        size, i, memory, question = job
        return (size, i), timed_request(local.api, memory, question)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = dict(pool.map(work, jobs))
    return time.perf_counter() - start, results


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


STEPS = ("wait", "read", "parse", "split", "memory", "query", "reply")


def bench_load(ctx, run_times, clients: int) -> tuple[bool, list[str]]:
    lines = []
    memories = {size: memory_text(context) for size, (context, _) in ctx.items()}
    jobs = [(size, i, memories[size], q) for size, (_, qs) in ctx.items()
            for i, q in enumerate(qs)]
    random.Random(0).shuffle(jobs)
    ok = True
    for n in (1, clients):
        server = Server(cache_mb=512)         # a fresh one: every question is new to it
        try:
            warm = server.client()
            for size in ctx:
                seconds, _, steps = timed_request(warm, memories[size], "Who is Q?")
                if n == 1:
                    lines.append(f"warm    {size:>4}: first request {seconds * 1e3:.0f} ms, of "
                                 f"which building the memory {steps['memory'] * 1e3:.0f} ms")
            cpu = server.cpu(), time.process_time()
            wall, results = run_load(server, jobs, n)
            cpu = server.cpu() - cpu[0], time.process_time() - cpu[1]
        finally:
            server.stop()
        wrong = [k for k, (_, answer, _) in results.items() if answer != run_times[k][1]]
        assert not wrong, f"served answers differ from the run's: {wrong[:5]}"
        lines.append(f"load    {n} client(s): {len(jobs)} requests in {wall:.2f} s, "
                     f"{len(jobs) / wall:.1f} requests/s, every answer equal to the run's; CPU "
                     f"per request: server {cpu[0] / len(jobs) * 1e3:.2f} ms, clients "
                     f"{cpu[1] / len(jobs) * 1e3:.2f} ms (2 cores: at most "
                     f"{2 * len(jobs) / sum(cpu):.0f} requests/s)")
        for size in (*ctx, "all"):
            keys = [k for k in results if size in ("all", k[0])]
            lat = [results[k][0] for k in keys]
            p50, run = statistics.median(lat), statistics.median(run_times[k][0] for k in keys)
            served = statistics.median(sum(results[k][2].values()) for k in keys)
            steps = {name: statistics.median(results[k][2].get(name, 0) for k in keys)
                     for name in STEPS}
            ratio = p50 / run
            lines.append(
                f"  {size:>4}: p50 {p50 * 1e3:6.2f} ms, p95 {pct(lat, 0.95) * 1e3:6.2f} ms; "
                f"in run p50 {run * 1e3:5.2f} ms; ratio {ratio:6.2f}"
                f"{'' if ratio <= TARGET_RATIO else ' (missed)'}; server p50 {served * 1e3:5.2f}"
                f" ms ({served / run:.2f} x in run): "
                + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in steps.items()))
            if size == "all" and ratio > TARGET_RATIO:
                ok = False
    return ok, lines


def bench_rss(ctx, clients: int, cache_mb: float, conversations: int) -> tuple[bool, list[str]]:
    sizes = list(ctx)
    plan = []
    for c in range(conversations):
        size = sizes[c % len(sizes)]
        context, questions = ctx[size]
        memory = memory_text(context, stamp=f"2025-02-{c + 1:02d}")   # a new conversation
        plan += [(size, c, memory, q) for q in questions[c:c + 3]]
    peaks, lines = {}, []
    for budget in (cache_mb, 0):
        server = Server(cache_mb=budget)
        try:
            server.client().chat.completions.create(
                model=MODEL, messages=messages("0. Tim Cook is employed by Apple.\n",
                                               "Who is Tim Cook employed by?"))
            start = server.rss()
            peak, stop = start, threading.Event()

            def sample():
                nonlocal peak
                while not stop.is_set():
                    peak = max(peak, server.rss())
                    time.sleep(0.005)

            sampler = threading.Thread(target=sample)
            sampler.start()
            local = threading.local()

            def work(job):
                if not hasattr(local, "api"):
                    local.api = server.client()
                size, _, memory, question = job
                return timed_request(local.api, memory, question)

            with ThreadPoolExecutor(clients) as pool:
                list(pool.map(work, plan))
            stop.set()
            sampler.join()
            cache = server.cache()
            peaks[budget] = peak
            lines.append(f"rss     budget {budget:>4} MiB: start {start / 2**20:.0f} MiB, peak "
                         f"{peak / 2**20:.0f} MiB, end {server.rss() / 2**20:.0f} MiB; cache "
                         f"holds {cache['memories']} memories, "
                         f"{cache['estimated_bytes'] / 2**20:.0f} MiB estimated, "
                         f"{cache['evictions']} evicted")
        finally:
            server.stop()
    over = peaks[cache_mb] - peaks[0]
    ok = over <= cache_mb * 2**20
    lines.append(f"rss     {conversations} conversations from {clients} clients: peak with a "
                 f"{cache_mb} MiB budget - peak keeping nothing = {over / 2**20:.0f} MiB "
                 f"(target <= {cache_mb} MiB){'' if ok else ' MISSED'}")
    return ok, lines


def bench_size(ctx) -> list[str]:
    lines = []
    for size, (context, questions) in ctx.items():      # warm the shared read caches first
        r = remember(split((Message("system", SYSTEM),
                            Message("user", memory_text(context) + harness.prompt("Q?")))),
                     ("rules", "lexicon"), "search")
        for q in questions:
            r.memory.query(q)
    del r
    for size, (context, questions) in ctx.items():
        conversation = split((Message("system", SYSTEM),
                              Message("user", memory_text(context) + harness.prompt("Q?"))))
        gc.collect()
        tracemalloc.start()
        r = remember(conversation, ("rules", "lexicon"), "search")
        for q in questions[:200]:
            r.memory.query(q)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        estimate = estimate_bytes(r.facts, r.chars)
        lines.append(f"size    {size:>4}: {r.facts} facts, {r.chars} characters; tracemalloc "
                     f"{held / 2**20:.2f} MiB, estimate {estimate / 2**20:.2f} MiB: ratio "
                     f"{estimate / held:.2f}")
        del r
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--cache-mb", type=float, default=128)
    ap.add_argument("--conversations", type=int, default=50)
    ap.add_argument("--skip", nargs="*", default=(), choices=("load", "rss", "size"))
    args = ap.parse_args(argv)
    ctx = contexts()
    ok = True
    if "load" not in args.skip:
        run_times = in_run(ctx)
        good, lines = bench_load(ctx, run_times, args.clients)
        ok &= good
        print("\n".join(lines), flush=True)
    if "rss" not in args.skip:
        good, lines = bench_rss(ctx, args.clients, args.cache_mb, args.conversations)
        ok &= good
        print("\n".join(lines), flush=True)
    if "size" not in args.skip:
        print("\n".join(bench_size(ctx)), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
