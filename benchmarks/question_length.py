"""What one question costs by its length, up to the longest factres reads (haystack.MAX_QUESTION).

    python benchmarks/question_length.py

Reading a question, compiling it with the rule and lexicon compilers and searching its plans grow
faster than its length (the lexicon compiler tries orders of the cue phrases it finds; the
search, paths through each), and before the limit a 100 KB question took minutes. So factres
refuses a question longer than MAX_QUESTION characters when the rows are read. This script
times one question of each adversarial shape (a real question repeated; many questions
concatenated; store entity names joined) at 156 characters (the longest bundled question), 500
and the limit, over the 6K store, and checks that a question one character longer is refused.
Target: a question at the limit costs at most 0.5 s (the worst shape, this 2-core machine)."""
from __future__ import annotations

import random
import sys
import time

from resolver.errors import InputError
from resolver.haystack import MAX_QUESTION, Dataset, Question, bundled_path, load, read_row
from resolver.plan.planning import live_plan_sets
from resolver.search.resolve import resolve_dataset

TARGET_S = 0.5


def shapes(questions: list[str], names: list[str]) -> dict:
    rng = random.Random(0)

    def repeat(base: str, n: int) -> str:
        return ((base + " ") * (n // (len(base) + 1) + 1))[:n]

    def joined(n: int) -> str:
        text = ""
        while len(text) < n:
            text += rng.choice(names) + " and "
        return text[:n]
    return {"one question repeated": lambda n: repeat(questions[0], n),
            "50 questions concatenated": lambda n: repeat(" ".join(questions[:50]), n),
            "entity names joined": joined}


def main() -> int:
    dataset, _ = load([bundled_path()])
    haystack = next(iter(dataset.haystacks.values()))
    names = sorted({f.subject for f in haystack.parse.facts})
    texts = [q.text for q in dataset.questions]
    worst = 0.0
    print(f"{'shape':<28} {'chars':>6} {'plan s':>8} {'search s':>9}")
    for shape, make in shapes(texts, names).items():
        for n in (max(len(t) for t in texts), 500, MAX_QUESTION):
            q = Question("q", "factconsolidation_mh_6k", 0, make(n), "mh", "6k", haystack.sha256)
            sub = Dataset(dataset.paths, dataset.files_sha256, [q], dataset.haystacks)
            start = time.perf_counter()
            sets = live_plan_sets(sub, ("rules", "lexicon"))
            planned = time.perf_counter()
            resolve_dataset(sub, sets)
            searched = time.perf_counter()
            worst = max(worst, searched - start)
            print(f"{shape:<28} {n:>6} {planned - start:>8.3f} {searched - planned:>9.3f}")
    try:
        read_row({"context": "x", "questions": ["x" * (MAX_QUESTION + 1)]}, "rows.json", 0)
        refused = False
    except InputError as exc:
        refused = True
        print(f"\n{MAX_QUESTION + 1} characters: {exc}")
    print(f"worst at or under the limit: {worst:.3f} s (target <= {TARGET_S} s)")
    return 0 if refused and worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
