"""Building the store through the provenance operations against the plain build.

    python benchmarks/provenance.py [--repeat N] [--size 262k]

In one process, on the parsed facts of one bundled haystack (parsing excluded), N rounds, each
timing in turn:
  - plain:       the store's lookup tables (`_Index.add`: every version of every key, the
                 plain build `FactStore` does on first use),
  - accept:      a `Ledger` built by calling `accept` once per fact in serial order (subjects
                 normalised as the store does),
  - accept_many: the same through `accept_many`, which is what `FactStore.ledger` does,
  - both:        plain then accept_many reusing its normalised names (what a store whose
                 tables and ledger are both built pays, as the resolver's stores do).
Reports the median of each and the ratios to plain; both ledgers are checked equal. Exits 1 if
the ratio of accept or accept_many is above the issue's limit of 2 (`both` is reported only:
the ledger is built on first use, and the resolver reads it only to name statuses)."""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from resolver.haystack import BUNDLED, bundled_path, load
from resolver.store.fact_store import _Index, _writes
from resolver.store.provenance import Ledger

LIMIT = 2.0


def plain(facts) -> _Index:
    index = _Index()
    index.add(facts)
    return index


def one_by_one(facts) -> Ledger:
    ledger = Ledger()
    accept = ledger.accept
    for key, value, fact in _writes(facts):
        accept(key, value, fact)
    return ledger


def many(facts) -> Ledger:
    ledger = Ledger()
    ledger.accept_many(_writes(facts))
    return ledger


def both(facts) -> tuple[_Index, Ledger]:
    index = plain(facts)
    ledger = Ledger()
    ledger.accept_many(_writes(facts, index.normed))
    return index, ledger


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--repeat", type=int, default=9, help="rounds (median taken)")
    args.add_argument("--size", default="262k", choices=sorted(BUNDLED))
    opts = args.parse_args()
    dataset, _ = load([bundled_path(BUNDLED[opts.size])])
    facts = list(next(iter(dataset.haystacks.values())).parse.facts)

    builds = {"plain": plain, "accept": one_by_one, "accept_many": many, "both": both}
    times: dict[str, list[float]] = {name: [] for name in builds}
    for _ in range(opts.repeat):
        # Interleaved, so each build sees the same machine noise.
        for name, build in builds.items():
            start = time.perf_counter()
            build(facts)
            times[name].append(time.perf_counter() - start)
    assert one_by_one(facts).dump() == many(facts).dump(), "accept_many differs from accept"

    median = {name: statistics.median(ts) for name, ts in times.items()}
    keys = sum(len(relations) for relations in plain(facts).by_subject.values())
    print(f"{opts.size}: {len(facts)} facts, {keys} keys, "
          f"median of {opts.repeat} rounds")
    print(f"| {'build':<12} | {'ms':>7} | {'min ms':>7} | {'x plain':>7} |")
    print(f"|{'-' * 14}|{'-' * 9}|{'-' * 9}|{'-' * 9}|")
    for name in builds:
        print(f"| {name:<12} | {median[name] * 1000:7.1f} | {min(times[name]) * 1000:7.1f} | "
              f"{median[name] / median['plain']:7.2f} |")
    worst = max(median["accept"], median["accept_many"]) / median["plain"]
    verdict = "ok" if worst <= LIMIT else "TOO SLOW"
    print(f"worst ratio {worst:.2f} (limit {LIMIT}): {verdict}")
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
