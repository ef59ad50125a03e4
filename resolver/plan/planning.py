"""Plan sets compiled live from the questions (no archive needed): the rule set and the lexicon
set. Deterministic: the same questions and store give the same plans."""
from __future__ import annotations

import hashlib

from resolver._version import __version__
from resolver.errors import InputError
from resolver.haystack import Dataset
from resolver.plan.plans import Compiled, PlanSet

LIVE_SETS = ("rules", "lexicon")


def compiler(name: str):
    """The live compiler of a set name: `compile_question(text, store) -> Compiled`."""
    if name == "rules":
        from resolver.plan.compile_rules import compile_question
    elif name == "lexicon":
        from resolver.plan.compile_lexicon import compile_question
    else:
        raise InputError(f"unknown live plan set {name!r}", expected=", ".join(LIVE_SETS))
    return compile_question


def compile_live(text: str, store, names: tuple[str, ...] = LIVE_SETS
                 ) -> list[tuple[str, Compiled]]:
    """(set id, plans) of one question over one store, for each live set named: what a run's
    live plan sets hold for the question (`live_plan_sets` compiles through the same
    compilers), in the shape `resolve_question` takes. Used by the memory, which has no
    dataset."""
    return [(f"live:{name}", compiler(name)(text, store)) for name in names]


def _compile(dataset: Dataset, name: str) -> PlanSet:
    compile_question = compiler(name)
    return live_set(dataset, name, [compile_question(q.text, dataset.haystack_of(q).store)
                                    for q in dataset.questions])


def live_set(dataset: Dataset, name: str, compiled: list[Compiled]) -> PlanSet:
    """The live set `name` of `dataset` from its questions' plans, compiled in question order
    (here, or by a run's workers: `resolver.run.workers`)."""
    plans: dict[str, Compiled] = {}
    shas: dict[str, str] = {}
    for q, plan in zip(dataset.questions, compiled, strict=True):
        plans[q.qid] = plan
        shas[q.qid] = hashlib.sha256(q.text.encode("utf-8")).hexdigest()
    manifest = {"planner": name, "model": None, "temperature": None, "level": "relation",
                "live": True, "factres_version": __version__}
    return PlanSet(f"live:{name}", manifest, plans, shas)


def live_plan_sets(dataset: Dataset, names: tuple[str, ...] = LIVE_SETS) -> list[PlanSet]:
    """The live plan sets for every question of `dataset`, compiled now by the current code.

    Args:
        dataset: the questions (from `load`); each is compiled over its own context's store.
        names: the compilers, in order: "rules" (MQuAKE question templates, exact one-hop
            plans) and "lexicon" (cue phrases and English nesting, N-best plans). Default both.

    Returns:
        One `PlanSet` per name, with set ids `live:rules` and `live:lexicon`.

    Raises:
        InputError: a name that is no live compiler.
    """
    return [_compile(dataset, n) for n in names]
