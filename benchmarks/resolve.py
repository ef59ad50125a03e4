"""Resolve benchmark: all dev questions with every live plan set, and the same questions
searched against every bundled haystack size, measured in one run.

    python benchmarks/resolve.py [--repeat 3]

Prints total and per-question p50/p95 latency on the 6K dev rows, then for each size the parse
time and the plan+search time of the 200 dev questions over that store, and their growth
relative to 6K. Targets (issue 4): 200 dev questions in at most 2 s; search time grows no more
than parse time does."""
from __future__ import annotations

import argparse
import time

import numpy as np

from resolver.haystack import BUNDLED, bundled_path, load
from resolver.plan.planning import live_plan_sets
from resolver.plan.plans import Compiled
from resolver.search.resolve import resolve_question
from resolver.store.fact_store import FactStore
from resolver.text.facts import parse_context


def _resolve_all(dataset, store, plan_sets):
    latencies = []
    for q in dataset.questions:
        t0 = time.perf_counter()
        compiled = [(ps.set_id, ps.plans.get(q.qid, Compiled((), ""))) for ps in plan_sets]
        resolve_question(q, store, compiled)
        latencies.append(time.perf_counter() - t0)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the minimum is kept")
    args = parser.parse_args()

    dataset, _gold = load([bundled_path()], use_cache=False)
    store = next(iter(dataset.haystacks.values())).store
    best_total, best_lat = float("inf"), None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        plan_sets = live_plan_sets(dataset)
        lat = _resolve_all(dataset, store, plan_sets)
        total = time.perf_counter() - t0
        if total < best_total:
            best_total, best_lat = total, lat
    n_plans = sum(len(c.plans) for ps in plan_sets for c in ps.plans.values())
    print(f"6K dev: {len(dataset.questions)} questions, {len(plan_sets)} plan sets, "
          f"{n_plans} plans")
    print(f"  plan + search, all questions: {best_total:.3f} s (target <= 2 s)")
    print(f"  per question: p50 {1000 * np.percentile(best_lat, 50):.2f} ms, "
          f"p95 {1000 * np.percentile(best_lat, 95):.2f} ms")

    print("\nsize   facts  parse_s  search_s  parse_x  search_x")
    base = None
    for size, name in BUNDLED.items():
        path = bundled_path(name)
        text = path.read_text("utf-8")
        if size == "6k":
            import orjson
            text = orjson.loads(path.read_bytes())["data"][0]["context"]
        parse_t = min(_timed(lambda: parse_context(text)) for _ in range(args.repeat))
        facts = parse_context(text).facts
        big = FactStore(facts)
        search_t = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            plan_sets = [_replan(ps, dataset, big) for ps in ("rules", "lexicon")]
            _resolve_all(dataset, big, plan_sets)
            search_t = min(search_t, time.perf_counter() - t0)
        if base is None:
            base = (parse_t, search_t)
        print(f"{size:5} {len(facts):6} {parse_t:8.3f} {search_t:9.3f} "
              f"{parse_t / base[0]:8.1f} {search_t / base[1]:9.1f}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _replan(name, dataset, store):
    from resolver.plan.plans import PlanSet
    if name == "rules":
        from resolver.plan.compile_rules import compile_question
    else:
        from resolver.plan.compile_lexicon import compile_question
    return PlanSet(f"live:{name}", {}, {q.qid: compile_question(q.text, store)
                                       for q in dataset.questions})


if __name__ == "__main__":
    main()
