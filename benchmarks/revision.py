"""P-Mem's ALFWorld-Revision probes, generated and fed to a `Memory` as text only.

    python benchmarks/revision.py [--seed 42] [--n 140] [--json OUT]

The paper's generator is not public: the sets match the shape its section 4.2 and appendix
B.2-B.3 describe (transcribed in ../shared/data/references/PUBLISHED.md), not its instances.
Objects and locations are ALFWorld's types (resolver/data/alfworld/types.json) with an
instance number ("mug 3", "countertop 1"); every line is one of the templates of issue 32:

  revision    L = 1, 2, 4, 8 (n per L): the target's "Earlier observation: {obj} was in {loc}."
              and L "Update: {obj} has been moved from {a} to {b}." lines, interleaved (each
              chain in its order) with four distractor chains of the same shape about other
              objects; then "Where is {obj} now?". Right: the last location (Table 6).
  retraction  d = 0, 32 (n per d): the target observed in v1 and moved v1 -> v2 (the wrong
              move), then d distractor events (four chains of observations and moves), then
              "Correction: the move of {obj} to {v2} was reported in error." (v1 not restated);
              then the question. recovered: v1; wrong: another location; lost: no answer; v1 in
              store: v1 among the key's versions (Table 8).
  conflict    (n): "Report: {obj} is in {a}." and "Report: {obj} is in {b}." (no recency cue),
              eight distractor events, the question (flagged: the answer is contested; both
              recorded: a and b among the key's versions), then "Check: {obj} is in {c}." (c one
              of a and b) and the question again (resolved: no longer contested; right: c).

Each case is a fresh `Memory`, fed one line per `ingest` (each line ending with a line break),
asked through `Memory.query`. Nothing else reaches the memory: no patch, no ledger call. The
lines the memory reports (text it does not read, a correction it cannot apply) are counted and
printed, so a memory that reads none of the probe language scores what it scores, and says why.
Answers are compared after MemoryAgentBench's normalisation (`normalize_answer`): equal, not
contained. Published figures come from resolver/data/references.json (`probes`), which the
tests check against the committed copy of the transcription.

Deterministic: the same seed gives the same cases (`generate`) and the same output; the cases'
digest (sha256 of their JSON) is printed, so two runs can be seen to have fed the same text."""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

SEED = 42
N = 140
REVISIONS = (1, 2, 4, 8)
DISTRACTIONS = (0, 32)
CONFLICT_DISTRACTORS = 8
DISTRACTOR_CHAINS = 4
INSTANCES = 5                     # "cabinet 1" .. "cabinet 5"

OBSERVED = "Earlier observation: {obj} was in {loc}."
MOVED = "Update: {obj} has been moved from {a} to {b}."
REPORT = "Report: {obj} is in {loc}."
CHECK = "Check: {obj} is in {loc}."
RETRACT = "Correction: the move of {obj} to {loc} was reported in error."
QUESTION = "Where is {obj} now?"


@dataclass(frozen=True)
class Case:
    """One probe case: the lines fed, the question, and what a right answer is."""
    probe: str                      # "revision", "retraction" or "conflict"
    size: int                       # L (revision), d (retraction), distractors (conflict)
    index: int
    target: str                     # the object asked about
    lines: tuple[str, ...]          # fed before the question
    question: str
    gold: str                       # the right location (conflict: after the check)
    wrong: str = ""                 # retraction: v2, the retracted location
    reported: tuple[str, ...] = ()  # conflict: the two reported locations (a, b)
    check: str = ""                 # conflict: the line that settles it, fed after the first ask


def vocabulary() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(object types, receptacle types) of ALFWorld, as the package ships them."""
    data = json.loads(resources.files("resolver.data").joinpath("alfworld", "types.json")
                      .read_text("utf-8"))
    return tuple(data["objects"]), tuple(data["receptacles"])


class _Draw:
    """One case's random choices: objects of distinct types, locations of a few receptacles."""

    def __init__(self, rng: random.Random, objects, receptacles) -> None:
        self.rng = rng
        self.objects = iter(rng.sample(objects, 1 + DISTRACTOR_CHAINS))
        self.places = [f"{r} {k}" for r in rng.sample(receptacles, 6)
                       for k in range(1, INSTANCES + 1)]

    def thing(self) -> str:
        return f"{next(self.objects)} {self.rng.randint(1, INSTANCES)}"

    def place(self, unlike: tuple[str, ...] = ()) -> str:
        while True:
            found = self.rng.choice(self.places)
            if found not in unlike:
                return found

    def chain(self, obj: str, moves: int) -> list[str]:
        """An observation, then `moves` moves, each to another place than the one before."""
        here = self.place()
        out = [OBSERVED.format(obj=obj, loc=here)]
        for _ in range(moves):
            there = self.place((here,))
            out.append(MOVED.format(obj=obj, a=here, b=there))
            here = there
        return out

    def distractors(self, events: int) -> list[str]:
        """`events` lines about DISTRACTOR_CHAINS other objects, interleaved."""
        chains, left = [], events
        for k in range(DISTRACTOR_CHAINS):
            share = left // (DISTRACTOR_CHAINS - k)
            left -= share
            if share:
                chains.append(self.chain(self.thing(), share - 1))
        return self.interleave(chains)

    def interleave(self, chains: list[list[str]]) -> list[str]:
        """The chains merged at random, each kept in its own order."""
        queues = [list(c) for c in chains if c]
        out = []
        while queues:
            weights = [len(q) for q in queues]
            q = self.rng.choices(range(len(queues)), weights)[0]
            out.append(queues[q].pop(0))
            if not queues[q]:
                queues.pop(q)
        return out


def _rng(seed: int, probe: str, size: int) -> random.Random:
    # one stream per cell, so a cell's cases do not depend on which other cells are generated
    return random.Random(f"{seed}:{probe}:{size}")


def _cases(probe: str, size: int, seed: int, n: int, make) -> list[Case]:
    """n cases of one cell: `make(draw, rng, index)` makes each from its own draw."""
    objects, receptacles = vocabulary()
    rng = _rng(seed, probe, size)
    return [make(_Draw(rng, objects, receptacles), rng, i) for i in range(n)]


def revision_cases(seed: int = SEED, n: int = N, moves: int = 1) -> list[Case]:
    def make(draw: _Draw, rng, i: int) -> Case:
        target = draw.thing()
        own = draw.chain(target, moves)
        others = [draw.chain(draw.thing(), moves) for _ in range(DISTRACTOR_CHAINS)]
        gold = own[-1].rsplit(" to ", 1)[1].rstrip(".") if moves else \
            own[0].rsplit(" in ", 1)[1].rstrip(".")
        return Case("revision", moves, i, target, tuple(draw.interleave([own] + others)),
                    QUESTION.format(obj=target), gold)
    return _cases("revision", moves, seed, n, make)


def retraction_cases(seed: int = SEED, n: int = N, distractors: int = 0) -> list[Case]:
    def make(draw: _Draw, rng, i: int) -> Case:
        target = draw.thing()
        v1 = draw.place()
        v2 = draw.place((v1,))
        lines = [OBSERVED.format(obj=target, loc=v1), MOVED.format(obj=target, a=v1, b=v2)]
        lines += draw.distractors(distractors)
        lines.append(RETRACT.format(obj=target, loc=v2))
        return Case("retraction", distractors, i, target, tuple(lines),
                    QUESTION.format(obj=target), v1, wrong=v2)
    return _cases("retraction", distractors, seed, n, make)


def conflict_cases(seed: int = SEED, n: int = N,
                   distractors: int = CONFLICT_DISTRACTORS) -> list[Case]:
    def make(draw: _Draw, rng, i: int) -> Case:
        target = draw.thing()
        a = draw.place()
        b = draw.place((a,))
        settled = rng.choice((a, b))
        lines = [REPORT.format(obj=target, loc=a), REPORT.format(obj=target, loc=b)]
        lines += draw.distractors(distractors)
        return Case("conflict", distractors, i, target, tuple(lines),
                    QUESTION.format(obj=target), settled, reported=(a, b),
                    check=CHECK.format(obj=target, loc=settled))
    return _cases("conflict", distractors, seed, n, make)


def generate(seed: int = SEED, n: int = N) -> dict[str, dict[int, list[Case]]]:
    """Every probe set: probe -> size -> its n cases."""
    return {"revision": {m: revision_cases(seed, n, m) for m in REVISIONS},
            "retraction": {d: retraction_cases(seed, n, d) for d in DISTRACTIONS},
            "conflict": {CONFLICT_DISTRACTORS: conflict_cases(seed, n)}}


def digest(sets: dict[str, dict[int, list[Case]]]) -> str:
    """sha256 of the cases as JSON: the same digest, the same text fed."""
    body = {p: {str(k): [asdict(c) for c in cases] for k, cases in by.items()}
            for p, by in sets.items()}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


# ---- feeding a memory ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    answer: str
    right: bool
    reports: tuple[str, ...]        # the kinds of what the memory reported, one per report
    contested: bool = False         # the answer was flagged (conflict: before the check)
    kept: tuple[str, ...] = ()      # the target's stored values (every version)
    after: str = ""                 # conflict: the answer after the check
    after_right: bool = False
    after_contested: bool = False


def _same(a: str, b: str) -> bool:
    from resolver.mab.exact_match import normalize_answer
    return bool(a) and normalize_answer(a) == normalize_answer(b)


def _feed(memory, lines) -> list[str]:
    kinds = []
    for line in lines:
        kinds += [r.kind for r in memory.ingest(line + "\n").reports]
    return kinds


def _kept(memory, target: str) -> tuple[str, ...]:
    from resolver.errors import FactresError
    try:
        found = memory.store.history(target)
    except FactresError:
        return ()
    return tuple(v.value for versions in found.values() for v in versions if v.value)


def run_case(case: Case) -> Outcome:
    from resolver import Memory

    memory = Memory()
    reports = _feed(memory, case.lines)
    answer = memory.query(case.question)
    kept = _kept(memory, case.target)
    if case.probe != "conflict":
        return Outcome(answer.text, _same(answer.text, case.gold), tuple(reports),
                       answer.contested, kept)
    reports += _feed(memory, (case.check,))
    later = memory.query(case.question)
    return Outcome(answer.text, _same(answer.text, case.gold), tuple(reports),
                   answer.contested, kept, later.text, _same(later.text, case.gold),
                   later.contested)


# ---- the tables -------------------------------------------------------------------------------
def _pct(k: int, n: int) -> float:
    return round(100 * k / n, 1) if n else 0.0


def measure(sets) -> dict:
    """factres's figure for every cell of the paper's tables, and what the memory reported."""
    out: dict = {"revision": {}, "retraction": {}, "conflict": {}, "reports": Counter(),
                 "lines": 0}

    def run(cases: list[Case]) -> list[Outcome]:
        outcomes = [run_case(c) for c in cases]
        for case, outcome in zip(cases, outcomes):
            out["lines"] += len(case.lines) + (1 if case.check else 0)
            out["reports"].update(outcome.reports)
        return outcomes

    for moves, cases in sets["revision"].items():
        outcomes = run(cases)
        out["revision"][moves] = {"accuracy": _pct(sum(o.right for o in outcomes), len(cases)),
                                  "n": len(cases)}
    for d, cases in sets["retraction"].items():
        outcomes = run(cases)
        n = len(cases)
        out["retraction"][d] = {
            "recovered": _pct(sum(o.right for o in outcomes), n),
            "wrong": _pct(sum(bool(o.answer) and not o.right for o in outcomes), n),
            "lost": _pct(sum(not o.answer for o in outcomes), n),
            "v1 in store": _pct(sum(any(_same(v, c.gold) for v in o.kept)
                                    for c, o in zip(cases, outcomes)), n),
            "n": n}
    for d, cases in sets["conflict"].items():
        outcomes = run(cases)
        n = len(cases)
        out["conflict"][d] = {
            "records both": _pct(sum(all(any(_same(v, r) for v in o.kept) for r in c.reported)
                                     for c, o in zip(cases, outcomes)), n),
            "flagged before the check": _pct(sum(o.contested for o in outcomes), n),
            "answers before the check match the eventual gold": _pct(
                sum(o.right for o in outcomes), n),
            "resolved": _pct(sum(bool(o.after) and not o.after_contested for o in outcomes), n),
            "accuracy after the check": _pct(sum(o.after_right for o in outcomes), n),
            "n": n}
    out["reports"] = dict(sorted(out["reports"].items()))
    return out


def _cell(value) -> str:
    if value is None:
        return "–"
    return str(value)


def render(measured: dict, seed: int, n: int, case_digest: str) -> str:
    from resolver.report.references import figure_text, load_references

    _, refs = load_references()
    lines = [f"P-Mem's ALFWorld-Revision probes (source B, section 4.2, appendix B.2-B.3), "
             f"generated with seed {seed}, n = {n} per cell, fed to factres's Memory as text "
             "only; P-Mem's published figures beside factres's (resolver/data/references.json, "
             "probes). The generator matches the paper's shape, not its instances.",
             f"cases sha256 {case_digest}", ""]
    revision = refs.probe("revision")
    lines += ["Table 6: current-value accuracy (%) as revisions accumulate",
              "| L | factres | " + " | ".join(p.arm for p in revision) + " |",
              "|--:|--:|" + "--:|" * len(revision)]
    for moves, got in measured["revision"].items():
        lines.append(f"| {moves} | {got['accuracy']} | " + " | ".join(
            _cell(figure_text(p.figures.get(f"L={moves}"))) for p in revision) + " |")
    retraction = refs.probe("retraction")
    columns = ("recovered d=0", "recovered d=32", "wrong (d=32)", "lost (d=32)", "v1 in store")
    lines += ["", "Table 8: reversibility under retraction (%)",
              "| arm | " + " | ".join(columns) + " |", "|---|" + "--:|" * len(columns)]
    got = measured["retraction"]
    ours = [got[0]["recovered"], got[32]["recovered"], got[32]["wrong"], got[32]["lost"],
            got[32]["v1 in store"]]
    lines.append("| factres (Memory, text only) | " + " | ".join(map(str, ours)) + " |")
    for p in retraction:
        lines.append(f"| {p.arm} | " + " | ".join(_cell(figure_text(p.figures.get(c)))
                                                   for c in columns) + " |")
    conflict = refs.probe("conflict")
    measures = ("records both", "flagged before the check",
                "answers before the check match the eventual gold", "resolved",
                "accuracy after the check")
    shown = ("records both", "flagged before", "before = eventual gold", "resolved",
             "right after the check")
    lines += ["", f"Concurrent conflicts (%): two reports, {CONFLICT_DISTRACTORS} distractors, "
              "then a check",
              "| arm | " + " | ".join(shown) + " |", "|---|" + "--:|" * len(shown)]
    got = measured["conflict"][CONFLICT_DISTRACTORS]
    lines.append("| factres (Memory, text only) | " + " | ".join(str(got[m]) for m in measures)
                 + " |")
    for p in conflict:
        figures = dict(p.figures)
        if "notices the conflict" in figures:        # the raw store's wording
            figures["flagged before the check"] = figures.pop("notices the conflict")
        if "both reports kept valid" in figures:     # Graphiti's, counted over graphs
            figures["records both"] = figures.pop("both reports kept valid")
        lines.append(f"| {p.arm} | " + " | ".join(_cell(figure_text(figures.get(m)))
                                                   for m in measures) + " |")
    notes = [f"{p.arm}: {p.note}" for p in conflict if p.note]
    lines += ["", "Published conflict figures are read from the paper's text: " + "; ".join(
        notes) + "; the raw store's \"notices the conflict\" is shown as flagged.",
        "– : the paper gives no figure there."]
    total = measured["lines"]
    reported = sum(measured["reports"].values())
    kinds = ", ".join(f"{k} {v}" for k, v in measured["reports"].items()) or "none"
    lines += ["", f"lines fed: {total:,}; reported by the memory: {reported:,} ({kinds})"]
    if reported:
        lines.append("A reported line was not read as the probe language meant it (it fits no "
                     "template this memory reads, or a correction could not apply): the "
                     "figures above are what this memory does with the text, not a failure of "
                     "the script.")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--n", type=int, default=N, help="cases per cell (default 140)")
    ap.add_argument("--json", type=Path, default=None,
                    help="also write factres's figures as JSON here")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be at least 1")
    started = time.perf_counter()
    sets = generate(args.seed, args.n)
    case_digest = digest(sets)
    measured = measure(sets)
    print(render(measured, args.seed, args.n, case_digest))
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.json is not None:
        args.json.write_text(json.dumps({"seed": args.seed, "n": args.n, "cases_sha256":
                                         case_digest, **measured}, indent=2, sort_keys=True)
                             + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
