"""Scale: how time and memory grow with the facts, along two axes, from about 18K to 1.2M fact lines.

    python benchmarks/scale.py [--seed 0] [--steps 4] [--out benchmarks/figures]

Two seeded axes over one generated world (entities with made-up names, facts written with the
MQuAKE cloze templates, as the FactConsolidation contexts are):
- keys: more entities, each key a few versions (1 to 3), the world 1, 4, 16, 64 times larger;
- depth: the same keys revised again and again: the world's versions written 1, 4, 16, 64
  times over (up to 192 versions per key), each revision a value from the key's own few
  candidates (a key changes back and forth, as an office changes hands).
The base world is the same at every size of both axes, and so are the questions (100
single-hop and 100 multi-hop, asked about the base world's entities, their gold the generator's
latest values, checked only for sanity).

Each size runs in fresh processes (`--measure`; `--rounds` of them, 2 by default, the least
figure of each stage kept), with the cyclic collector paused as the `factres` commands pause
it, and times these stages in CPU seconds of the process (on this shared 2-core machine the
wall clock of the same work varies threefold from run to run; a process's own CPU time far
less), one small function each (`STAGES`):
- parse: the context text -> facts (the Lark grammar, no parse cache);
- store: `FactStore` over the facts, lookup tables and provenance ledger built; the process's
  resident memory is read right after it (memory per fact: store and ledger built);
- ingest: the commit-on-arrival write path: an empty store whose ledger and lookup tables
  exist, the same facts appended in chunks of 1,000 (`FactStore.extend`, which keeps both up
  to date). The `Memory` object another branch builds (`Memory.ingest(text)`: parse a chunk
  of text, commit its facts) belongs here as one more stage: a function that takes the state
  and the context, added to `STAGES`;
- plan: the questions compiled by the rule and lexicon compilers;
- search: the questions resolved (`resolve_question`); the least of three first passes, each
  on a fresh store over the same facts (a store keeps what the search reads in its read
  cache);
- traces: the predictions' trace records made (`to_json`): every hop lists the versions it
  passed over, so a trace grows with the versions of its keys;
It also records the process's peak memory. The parent writes a Markdown growth table
(scale.md), the figures it is made from (scale.json) and a log-log figure (scale.png,
matplotlib: the `plot` extra) of time and memory against facts into --out, with the
least-squares slope of each line, and checks the targets:
- time per fact (parse + store + ingest) at the largest size <= 1.3x that at the smallest,
  on both axes;
- search time per question at the deepest size (192 versions per key) <= 1.5x that at 3,
  the same questions (the smallest size of both axes is the same store: the lesser of its
  two figures is the baseline of both targets);
- resident memory per fact at the largest size <= 0.5 KB, read as 500 bytes (both axes).
A third axis, repeated (`--axes repeated` runs it alone): the bundled 262K context's fact
lines repeated k times and numbered 0, 1, 2, ... in order (k = 16 and 64: 293K and 1.17M
facts, 48 and 192 versions per key; the same construction as same_answers.py's deep case),
with the 200 synthetic 262K questions (benchmarks/synthetic.py, seed 0), resolved by
`factres run --no-cache` as a whole process, as a user runs it: its wall time and its peak
memory, the greater of the largest process's high-water mark and the process tree's summed
proportional set size (PSS, sampled every 50 ms: a run that forks workers shares pages with
them, which each one's resident set counts whole). Target (issue 35): peak <= 600 MB at k = 64.
Every MB here is 10^6 bytes (`MB`), as the issue's own figures are ("877 MB, about 750 B a
fact" for 1.17M facts), never 2^20 (MiB).
Exits 1 if a target is missed. One run takes a few minutes on the 2-core reference machine."""
from __future__ import annotations

import argparse
import bisect
import gc
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic  # noqa: E402  (benchmarks/ is not a package: the MQuAKE question wording)
from same_answers import repeated_context  # noqa: E402
from timing import factres, private_env  # noqa: E402

# ---- the world ---------------------------------------------------------------------------
# Kinds of entity and the relations (MQuAKE ids) each one has, with the kind of its object.
# Every entity has every relation of its kind, so a chain of relations typed by kind reaches
# an answer whatever the values along it: the same questions stay answerable at every depth.
RELATIONS = {
    "country": (("P36", "city"), ("P37", "language"), ("P30", "continent"), ("P35", "person")),
    "city": (("P17", "country"), ("P190", "city")),
    "person": (("P27", "country"), ("P19", "city"), ("P26", "person"), ("P108", "organisation"),
               ("P1412", "language")),
    "organisation": (("P159", "city"), ("P112", "person"), ("P169", "person")),
    "language": (),
    "continent": (),
}
KIND_SHARE = (("person", 0.45), ("city", 0.25), ("organisation", 0.15), ("language", 0.08),
              ("country", 0.07))
CONTINENTS = ("Aurelia", "Borvane", "Cestria", "Dunmarra", "Eskeland", "Faroth", "Galdren")
VERSIONS = ((1, 0.5), (2, 0.3), (3, 0.2))      # versions per key in the base world
CANDIDATES = 3                                  # values a key moves between
BASE_ENTITIES = 3100                            # about 18K fact lines
SYLLABLES = ("ba", "bel", "bor", "ca", "dan", "del", "dor", "en", "fal", "fen", "gar", "hal",
             "is", "ka", "kel", "lin", "lor", "ma", "mer", "mon", "na", "nor", "ol", "pa",
             "ral", "ren", "ros", "sa", "sel", "ska", "tam", "tor", "ul", "va", "vel", "wyn",
             "ya", "zan")
N_SH, N_MH = 100, 100
SEARCH_ROUNDS = 3                               # search timed on 3 fresh stores, min taken


def _names(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(name, kind) of the first `count` entities: the same prefix for any count."""
    out = [(name, "continent") for name in CONTINENTS]
    taken = set(CONTINENTS)
    kinds = [k for k, _ in KIND_SHARE]
    weights = [w for _, w in KIND_SHARE]
    while len(out) < count:
        kind = rng.choices(kinds, weights)[0]
        while True:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).title()
            name = word
            if kind == "person":
                name += " " + "".join(rng.choice(SYLLABLES)
                                      for _ in range(rng.randint(2, 3))).title()
            if name not in taken:
                break
        taken.add(name)
        out.append((name, kind))
    return out


class World:
    """Entities, and per key its base versions and its candidate values. The entities come in
    blocks the size of the base world, and a fact's object is an entity of its subject's
    block: a larger world is the smaller one with more blocks, and an entity has as many
    neighbours however large the world (as in a real haystack, where a city gains no spouses
    because unrelated people were added)."""

    def __init__(self, seed: int, entities: int) -> None:
        self.seed = seed
        self.entities = _names(random.Random(seed), max(entities, BASE_ENTITIES))[:entities]
        self.of_kind: dict[str, list[int]] = {}
        for i, (_, kind) in enumerate(self.entities):
            self.of_kind.setdefault(kind, []).append(i)
        # key (entity index, relation) -> (base versions, candidates), as entity indexes
        self.keys: list[tuple[int, str, list[int], list[int]]] = []
        for i, (_, kind) in enumerate(self.entities):
            rng = random.Random(seed * 1_000_003 + i)
            block = i - i % BASE_ENTITIES
            for relation, object_kind in RELATIONS[kind]:
                pool = self.of_kind[object_kind]
                low = bisect.bisect_left(pool, block)
                high = bisect.bisect_left(pool, block + BASE_ENTITIES)
                if high - low < 2:
                    low, high = 0, len(pool)
                candidates = []
                for at in rng.sample(range(low, high), min(CANDIDATES + 1, high - low)):
                    if pool[at] != i and len(candidates) < CANDIDATES:
                        candidates.append(pool[at])
                count = rng.choices([v for v, _ in VERSIONS], [w for _, w in VERSIONS])[0]
                self.keys.append((i, relation, self._sequence(rng, candidates, count, None),
                                  candidates))

    @staticmethod
    def _sequence(rng, candidates, count, previous) -> list[int]:
        out = []
        for _ in range(count):
            choices = [c for c in candidates if c != previous] or candidates
            previous = rng.choice(choices)
            out.append(previous)
        return out

    def lines(self, revisions: int) -> tuple[list[str], dict[tuple[int, str], int]]:
        """Fact lines ("N. sentence"), the world's versions written `revisions` times over
        (each time in rounds: every key's first version, then every second one, ...), and the
        latest value of every key."""
        cloze, _ = synthetic.load_templates()
        names = [name for name, _ in self.entities]
        pieces = {rel: cloze[rel].split("[X]") for rel in cloze}
        out = ["Here is a list of facts:"]
        latest: dict[tuple[int, str], int] = {}
        serial = 0
        rng = random.Random(self.seed * 7919 + revisions)
        sequences = [list(base) for _, _, base, _ in self.keys]
        for revision in range(revisions):
            if revision:
                sequences = [self._sequence(rng, cands, len(base), seq[-1])
                             for (_, _, base, cands), seq in zip(self.keys, sequences)]
            rounds = max(len(s) for s in sequences)
            for r in range(rounds):
                for (i, relation, _, _), seq in zip(self.keys, sequences):
                    if r < len(seq):
                        prefix, rest = pieces[relation]
                        out.append(f"{serial}. {prefix}{names[i]}{rest[:-3]} {names[seq[r]]}.")
                        latest[(i, relation)] = seq[r]
                        serial += 1
        return out, latest

    def questions(self, latest: dict[tuple[int, str], int]) -> list[dict]:
        """The fixed questions: about base entities only, the same at every size; gold from
        `latest`."""
        _, templates = synthetic.load_templates()
        rng = random.Random(self.seed * 31 + 1)
        names = [name for name, _ in self.entities]
        base_keys = [(i, rel) for i, rel, _, _ in self.keys if i < BASE_ENTITIES]
        out = []
        for key in rng.sample(base_keys, N_SH):
            out.append({"kind": "sh", "question": synthetic.sh_question(names[key[0]], key[1],
                                                                        templates),
                        "chain": [list(key)]})
        starts = [i for i in range(BASE_ENTITIES) if RELATIONS[self.entities[i][1]]]
        while len(out) < N_SH + N_MH:
            i = rng.choice(starts)
            hops = rng.choice((2, 2, 3))
            chain, entity = [], i
            for _ in range(hops):
                options = [rel for rel, kind in RELATIONS[self.entities[entity][1]]
                           if RELATIONS[kind] or len(chain) == hops - 1]
                if not options:
                    break
                relation = rng.choice(options)
                chain.append([entity, relation])
                entity = latest[(entity, relation)]
            if len(chain) < 2:
                continue
            text = synthetic.mh_question([(names[chain[0][0]], chain[0][1])] +
                                         [("", rel) for _, rel in chain[1:]], templates)
            out.append({"kind": "mh", "question": text,
                        "chain": [[chain[0][0], rel] for _, rel in chain]})
        for q in out:
            entity = q["chain"][0][0]
            for _, relation in q["chain"]:
                entity = latest[(entity, relation)]
            q["gold"] = names[entity]
            del q["chain"]
        return out


# ---- one size, in its own process --------------------------------------------------------
def _resident() -> int:
    """Resident memory of this process now, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def stage_parse(state: dict) -> None:
    from resolver.text.facts import parse_context
    result = parse_context(state["text"])
    if result.unparsed:
        raise SystemExit(f"{len(result.unparsed)} generated lines fit no template: "
                         f"{result.unparsed[0]}")
    state["facts"] = result.facts


def stage_store(state: dict) -> None:
    from resolver.store.fact_store import FactStore
    store = FactStore(state["facts"])
    store.is_subject("")          # the lookup tables
    store.ledger                  # the provenance ledger
    state["store"] = store
    state["resident"] = _resident()


def stage_ingest(state: dict) -> None:
    from resolver.store.fact_store import FactStore
    store = FactStore()
    store.is_subject("")
    store.ledger                  # commit on arrival: the ledger exists before the first fact
    facts = state["facts"]
    for start in range(0, len(facts), 1000):
        store.extend(facts[start:start + 1000])
    assert len(store.ledger) == len(facts)


def stage_plan(state: dict) -> None:
    from resolver.plan.compile_lexicon import compile_question as lexicon_plans
    from resolver.plan.compile_rules import compile_question as rule_plans
    store = state["store"]
    state["compiled"] = [[("live:rules", rule_plans(q["question"], store)),
                          ("live:lexicon", lexicon_plans(q["question"], store))]
                         for q in state["questions"]]


def stage_search(state: dict) -> None:
    from resolver.haystack import Question
    from resolver.search.resolve import resolve_question
    store = state["store"]
    right = 0
    predictions = []
    for n, (q, compiled) in enumerate(zip(state["questions"], state["compiled"])):
        question = Question(f"q{n}", f"scale_{q['kind']}", n, q["question"], q["kind"],
                            "unknown", "")
        pred = resolve_question(question, store, compiled)
        right += pred.answer == q["gold"]
        predictions.append(pred)
    state["right"] = right
    state["predictions"] = predictions


def stage_traces(state: dict) -> None:
    for pred in state.pop("predictions"):
        pred.to_json()


# In order; a stage reads what the ones before it left in the state.
STAGES = (("parse", stage_parse), ("store", stage_store), ("plan", stage_plan),
          ("search", stage_search), ("traces", stage_traces), ("ingest", stage_ingest))


def measure(context: Path, questions: Path) -> dict:
    state = {"text": context.read_text("utf-8"),
             "questions": json.loads(questions.read_text("utf-8"))}
    seconds = {}
    gc.disable()                  # as the factres commands run (resolver.cli.options)
    for name, stage in STAGES:
        start = time.process_time()
        stage(state)
        seconds[name] = time.process_time() - start
    # The search again, each time on a fresh store over the same facts (its read cache empty,
    # as in a run): the least disturbed of a few first passes, on a shared, noisy machine.
    for _ in range(SEARCH_ROUNDS - 1):
        again = {"facts": state["facts"], "questions": state["questions"],
                 "compiled": state["compiled"]}
        stage_store(again)
        start = time.process_time()
        stage_search(again)
        seconds["search"] = min(seconds["search"], time.process_time() - start)
        again.pop("predictions")
        del again
    store = state["store"]
    stats = store.stats()
    return {"facts": len(store), "keys": stats["keys"],
            "deepest": stats["deepest_version_chain"], "seconds": seconds,
            "resident": state["resident"],
            "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "right": state["right"], "questions": len(state["questions"])}


# ---- the parent: sizes, table, figure, targets --------------------------------------------
def _slope(xs, ys) -> float:
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / \
        sum((a - mx) ** 2 for a in lx)


def _run_size(world: World, revisions: int, folder: Path, label: str, rounds: int) -> dict:
    lines, latest = world.lines(revisions)
    context = folder / f"{label}.txt"
    context.write_text("\n".join(lines) + "\n", "utf-8")
    questions = folder / "questions.json"
    base = World(world.seed, BASE_ENTITIES)
    # The questions' gold: the latest values of this size (its keys are the base world's).
    questions.write_text(json.dumps(base.questions(latest)), "utf-8")
    runs = []
    for _ in range(rounds):
        done = subprocess.run([sys.executable, __file__, "--measure", str(context),
                               str(questions)], capture_output=True, text=True, cwd=ROOT)
        if done.returncode:
            raise SystemExit(f"{label} failed:\n{done.stderr}")
        runs.append(json.loads(done.stdout))
    context.unlink()
    # The least disturbed figure of each stage, and of the memory, over the processes.
    out = runs[0]
    for name in out["seconds"]:
        out["seconds"][name] = min(r["seconds"][name] for r in runs)
    for name in ("resident", "peak"):
        out[name] = min(r[name] for r in runs)
    return out


FACT_STAGES = ("parse", "store", "ingest")

# ---- the repeated axis: whole `factres run` processes ------------------------------------
REPEATS = (16, 64)
MB = 10 ** 6                                    # a megabyte, as the targets count it
REPEATED_PEAK_MB = 600                          # issue 35, at the largest repeat, in MB


SAMPLE_SECONDS = 0.05                           # how often the process tree is read


def _tree(pid: int) -> list[int]:
    """`pid` and every process below it (the workers a run may fork)."""
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    out += _tree(int(child))
    except OSError:               # gone meanwhile
        pass
    return out


def _pss(pid: int) -> int:
    """A process's proportional set size in bytes: its own pages, and its share of the pages
    it shares with others (a forked worker's copy-on-write pages), so that a tree's sum counts
    each page once."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _peak_of(command: list[str]) -> None:
    """Run `command` (output discarded) and print as JSON its wall time and its peak memory in
    bytes, two ways: `largest`, the high-water mark of the largest process (the command's, or
    a worker's; exact, apart from this script's other children), and `tree`, the process
    tree's summed proportional set size, read every SAMPLE_SECONDS (a forked worker shares
    the parent's pages, so the largest process alone says too little once there are several;
    a sample may miss a short peak, which `largest` holds). `peak` is the greater."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree, processes = 0, 1
    with ThreadPoolExecutor(1) as pool:        # stderr drained, so the child never blocks
        errors = pool.submit(child.stderr.read)
        while child.poll() is None:
            pids = _tree(child.pid)
            processes = max(processes, len(pids))
            tree = max(tree, sum(_pss(pid) for pid in pids))
            time.sleep(SAMPLE_SECONDS)
        stderr = errors.result()
    seconds = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr.decode(errors='replace')}")
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak": max(largest, tree), "largest": largest,
                      "tree": tree, "processes": processes}))


def repeated_rows(repeats: int, folder: Path) -> tuple[Path, int, int]:
    """The 262K synthetic rows, both carrying its context repeated `repeats` times, written as
    `{"data": [row, row]}` into `folder`: the file, its fact lines and its questions."""
    rows_path, _, _ = synthetic.write("262k", folder)
    rows = json.loads(rows_path.read_text("utf-8"))["data"]
    context = repeated_context(rows[0]["context"], repeats)
    for row in rows:
        row["context"] = context
    data = folder / f"repeated-{repeats}.json"
    data.write_text(json.dumps({"data": rows}, ensure_ascii=False), "utf-8")
    return data, context.count("\n") - 1, sum(len(row["questions"]) for row in rows)


def _run_repeated(repeats: int, folder: Path, rounds: int) -> dict:
    """`factres run --no-cache` over the 262K synthetic rows, their context repeated."""
    data, facts, questions = repeated_rows(repeats, folder)
    runs = []
    for n in range(rounds):
        results = folder / f"results-{repeats}-{n}"
        command = factres() + ["run", "--no-cache", "--no-progress", "--results-dir",
                               str(results), "--data", str(data)]
        done = subprocess.run([sys.executable, __file__, "--peak-of", *command],
                              capture_output=True, text=True, cwd=ROOT,
                              env=private_env(folder / "cache"))
        if done.returncode:
            raise SystemExit(f"repeated x{repeats} failed:\n{done.stderr}")
        runs.append(json.loads(done.stdout))
    data.unlink()
    least = min(runs, key=lambda r: r["peak"])
    return {"repeats": repeats, "facts": facts, "questions": questions,
            "seconds": min(r["seconds"] for r in runs), "peak": least["peak"],
            "largest": least["largest"], "tree": least["tree"],
            "processes": max(r["processes"] for r in runs), "rounds": rounds}


def _repeated_table(rows: list[dict]) -> str:
    out = ["| repeats | fact lines | questions | `factres run --no-cache` wall s | processes | "
           "largest process: high-water MB | process tree: summed PSS MB | "
           "peak MB (10^6 bytes) | peak B/fact |", "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        out.append(f"| {r['repeats']} | {r['facts']:,} | {r['questions']} | "
                   f"{r['seconds']:.1f} | {r['processes']} | {r['largest'] / MB:.1f} | "
                   f"{r['tree'] / MB:.1f} | {r['peak'] / MB:.1f} | "
                   f"{r['peak'] / r['facts']:.0f} |")
    return "\n".join(out) + "\n"


def _table(results: dict[str, list[dict]]) -> str:
    out = ["| axis | fact lines | keys | versions per key (max) | parse µs/fact | "
           "store µs/fact | ingest µs/fact | search ms/question | traces ms/question | "
           "resident B/fact | peak MB (10^6 bytes) | answers right |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for axis, rows in results.items():
        for r in rows:
            s, n = r["seconds"], r["facts"]
            out.append(f"| {axis} | {n:,} | {r['keys']:,} | {r['deepest']} | "
                       f"{s['parse'] / n * 1e6:.1f} | {s['store'] / n * 1e6:.2f} | "
                       f"{s['ingest'] / n * 1e6:.2f} | "
                       f"{s['search'] / r['questions'] * 1e3:.2f} | "
                       f"{s['traces'] / r['questions'] * 1e3:.2f} | "
                       f"{r['resident'] / n:.0f} | {r['peak'] / MB:.0f} | "
                       f"{r['right']}/{r['questions']} |")
    out.append("")
    out.append("| axis | slope: parse | store | ingest | search (per run) | resident memory |")
    out.append("|---|--:|--:|--:|--:|--:|")
    for axis, rows in results.items():
        xs = [r["facts"] for r in rows]
        cells = [_slope(xs, [r["seconds"][k] for r in rows])
                 for k in ("parse", "store", "ingest", "search")]
        cells.append(_slope(xs, [r["resident"] for r in rows]))
        out.append(f"| {axis} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    return "\n".join(out) + "\n"


def _figure(results: dict[str, list[dict]], path: Path) -> None:
    import matplotlib  # the `plot` extra; only the figure needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8), dpi=150)
    styles = {"keys": "-", "depth": "--"}
    for axis, rows in results.items():
        xs = [r["facts"] for r in rows]
        for stage, colour in (("parse", "C0"), ("store", "C1"), ("ingest", "C2"),
                              ("search", "C3")):
            ys = [r["seconds"][stage] for r in rows]
            left.loglog(xs, ys, styles[axis], color=colour, marker="o", markersize=3,
                        label=f"{stage}, {axis} (slope {_slope(xs, ys):.2f})")
        ys = [r["resident"] / MB for r in rows]
        right.loglog(xs, ys, styles[axis], color="C4", marker="o", markersize=3,
                     label=f"resident, {axis} (slope {_slope(xs, ys):.2f})")
        ys = [r["peak"] / MB for r in rows]
        right.loglog(xs, ys, styles[axis], color="C5", marker="s", markersize=3,
                     label=f"peak, {axis} (slope {_slope(xs, ys):.2f})")
    left.set(xlabel="fact lines", ylabel="CPU seconds", title="time per stage (200 questions)")
    right.set(xlabel="fact lines", ylabel="MB (10^6 bytes)", title="memory")
    for ax in (left, right):
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def _repeated_axis(args) -> list[str]:
    """The repeated axis: its table (scale-repeated.md), figures (scale-repeated.json) and
    target; returns the targets missed."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for repeats in REPEATS:
            rows.append(_run_repeated(repeats, Path(scratch), args.rounds))
            print(f"repeated x{repeats}: {rows[-1]}", file=sys.stderr)
    table = _repeated_table(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale-repeated.md").write_text(table, "utf-8")
    (args.out / "scale-repeated.json").write_text(json.dumps(rows, indent=1, sort_keys=True)
                                                  + "\n", "utf-8")
    print("the 262K context repeated, `factres run --no-cache`, whole process (least of "
          f"{args.rounds} runs)")
    print(table)
    last = rows[-1]
    ok = last["peak"] <= REPEATED_PEAK_MB * MB
    print(f"- peak memory, 262K repeated x{last['repeats']} ({last['facts']:,} facts; "
          f"{last['processes']} process(es); largest {last['largest'] / MB:.1f} MB, tree "
          f"{last['tree'] / MB:.1f} MB): {last['peak'] / MB:.1f} MB (10^6 bytes; <= "
          f"{REPEATED_PEAK_MB} MB {'ok' if ok else 'MISSED'})")
    print(f"wrote {args.out / 'scale-repeated.md'}")
    return [] if ok else [f"peak memory, repeated x{last['repeats']}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=4, help="sizes per axis: 1, 4, 16, ... times")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "figures")
    ap.add_argument("--rounds", type=int, default=2, help="fresh processes per size (min taken)")
    ap.add_argument("--axes", default="keys,depth,repeated",
                    help="axes to run, comma-separated (keys, depth, repeated)")
    ap.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--peak-of", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return 0
    if args.peak_of:
        _peak_of(args.peak_of)
        return 0
    axes = set(args.axes.split(","))
    if not axes <= {"keys", "depth", "repeated"} or "keys" in axes and "depth" not in axes \
            or "depth" in axes and "keys" not in axes:
        ap.error("--axes: keys and depth together (they share their baseline), repeated "
                 "alone or with them")
    missed = []
    if "repeated" in axes:
        missed += _repeated_axis(args)
    if "keys" not in axes:
        return 1 if missed else 0
    factors = [4 ** k for k in range(args.steps)]
    results: dict[str, list[dict]] = {"keys": [], "depth": []}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        base = World(args.seed, BASE_ENTITIES)
        for factor in factors:
            results["keys"].append(_run_size(World(args.seed, BASE_ENTITIES * factor), 1,
                                             scratch, f"keys-{factor}", args.rounds))
            print(f"keys x{factor}: {results['keys'][-1]}", file=sys.stderr)
            results["depth"].append(_run_size(base, factor, scratch, f"depth-{factor}",
                                              args.rounds))
            print(f"depth x{factor}: {results['depth'][-1]}", file=sys.stderr)
    table = _table(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale.md").write_text(table, "utf-8")
    (args.out / "scale.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n",
                                         "utf-8")
    _figure(results, args.out / "scale.png")
    print(table)
    print("targets (ratios of this run):")
    # Both axes start from the same store (the base world, written once): the less disturbed
    # of its two measurements is the baseline of both.
    smallest = [rows[0] for rows in results.values()]
    base_per_fact = min(sum(r["seconds"][k] for k in FACT_STAGES) / r["facts"]
                        for r in smallest)
    for axis, rows in results.items():
        first, last = rows[0], rows[-1]
        ratio = sum(last["seconds"][k] for k in FACT_STAGES) / last["facts"] / base_per_fact
        ok = ratio <= 1.3
        missed += [] if ok else [f"time per fact, {axis}"]
        print(f"- time per fact (parse+store+ingest), {axis}: {last['facts']:,} vs "
              f"{first['facts']:,} facts: {ratio:.2f}x (<= 1.3x {'ok' if ok else 'MISSED'})")
        per_fact = last["resident"] / last["facts"]
        ok = per_fact <= 500
        missed += [] if ok else [f"memory per fact, {axis}"]
        print(f"- resident memory per fact, {axis}, {last['facts']:,} facts: {per_fact:.0f} B "
              f"(<= 500 B {'ok' if ok else 'MISSED'})")
    depth = results["depth"]
    ratio = depth[-1]["seconds"]["search"] / min(r["seconds"]["search"] for r in smallest)
    ok = ratio <= 1.5
    missed += [] if ok else ["search time at depth"]
    print(f"- search time per question, {depth[-1]['deepest']} vs {depth[0]['deepest']} "
          f"versions per key, same questions: {ratio:.2f}x (<= 1.5x {'ok' if ok else 'MISSED'})")
    print(f"wrote {args.out / 'scale.md'} and {args.out / 'scale.png'}")
    if missed:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
