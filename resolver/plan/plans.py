"""`Plan`: what a compiler makes of a question, before any search. `PlanSet`: the plans of one
compiler run for many questions, as archived under plans/<set-id>/."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import permutations

from resolver.text.relations import ANSWER_TYPES, FAMILIES, inventory

FAMILY_PREFIX = "family:"
_ANSWER_TYPES = frozenset(ANSWER_TYPES)


@dataclass(frozen=True)
class Plan:
    entity: str                 # base entity, as written in the store
    chain: tuple[str, ...]      # relation names, or "family:<name>" for a whole family
    answer_type: str = "any"    # the type the question names (relations.ANSWER_TYPES)
    compiler: str = "lexicon"   # "rule", "lexicon", "ollama:<model>", "derived:<how>"
    rule: str = ""              # which rule, pattern or prompt produced it
    note: str = ""              # e.g. why a model plan fell back to the lexicon

    def __post_init__(self) -> None:
        if not 1 <= len(self.chain) <= 4:
            shown = f": {self.chain}" if len(self.chain) <= 8 else ""    # never 5,000 of them
            raise ValueError(f"a plan has 1 to 4 hops, not {len(self.chain):,}{shown}")
        if self.answer_type not in _ANSWER_TYPES:
            raise ValueError(f"unknown answer type {self.answer_type!r}")
        steps = _steps()
        for step in self.chain:
            if step not in steps:
                raise ValueError(f"unknown relation or family {step!r}")

    def to_json(self) -> dict:
        return {"entity": self.entity, "chain": list(self.chain),
                "answer_type": self.answer_type, "compiler": self.compiler,
                "rule": self.rule, "note": self.note}

    @classmethod
    def from_json(cls, obj: dict) -> "Plan":
        """A plan from its JSON; ValueError naming what is wrong (a chain given as a string,
        "capital", would read as seven one-letter hops)."""
        if not isinstance(obj, dict):
            raise ValueError(f"a plan is {_json_kind(obj)} (expected an object)")
        for key, default in (("entity", None), ("chain", None)):
            if key not in obj:
                raise ValueError(f"'{key}' is missing")
        if not isinstance(obj["entity"], str):
            raise ValueError(f"'entity' is {_json_kind(obj['entity'])} (expected a string)")
        chain = obj["chain"]
        if not isinstance(chain, list) or not all(isinstance(c, str) for c in chain):
            raise ValueError(f"'chain' is {_json_kind(chain)} (expected a list of relation "
                             "names)" if not isinstance(chain, list) else
                             "'chain' holds a step that is not a string (expected relation "
                             "names)")
        for key in ("answer_type", "compiler", "rule", "note"):
            if key in obj and not isinstance(obj[key], str):
                raise ValueError(f"'{key}' is {_json_kind(obj[key])} (expected a string)")
        return cls(obj["entity"], tuple(chain), obj.get("answer_type", "any"),
                   obj.get("compiler", ""), obj.get("rule", ""), obj.get("note", ""))

    def describe(self) -> str:
        return f"{self.entity} -> " + " -> ".join(self.chain) + f" : {self.answer_type}"


def _json_kind(value) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def is_step(step: str) -> bool:
    return step in _steps()


@lru_cache(maxsize=None)        # a plan checks each of its steps when it is made
def _steps() -> frozenset[str]:
    """Every step a chain may hold: a relation's name or "family:<name>"."""
    return frozenset(inventory()) | {FAMILY_PREFIX + family for family in FAMILIES}


@lru_cache(maxsize=None)        # asked for every step of every plan the search runs
def step_relations(step: str) -> frozenset[str]:
    """The relations a chain step allows: one relation, or every member of a family."""
    if step.startswith(FAMILY_PREFIX):
        family = step[len(FAMILY_PREFIX):]
        return frozenset(r.name for r in inventory().values() if family in r.families)
    return frozenset((step,))


@dataclass(frozen=True)
class Compiled:
    """A compiler's output for one question: plans best first, or none and the reason."""
    plans: tuple[Plan, ...]
    reason: str = ""            # why there is no plan (empty when there are plans)


@dataclass
class PlanSet:
    """Plans for a set of questions, from one compiler: `set_id` ("live:rules", "live:lexicon"
    or an archived set's id), the `manifest` (planner, model, temperature, level, ...), `plans`
    (question id -> its compiled plans, best first) and the sha256 of each question's text."""
    set_id: str
    manifest: dict                                   # planner, model, ... (see archive.py)
    plans: dict[str, Compiled] = field(default_factory=dict)   # qid -> compiled
    question_sha256: dict[str, str] = field(default_factory=dict)


def every_order(plan: Plan) -> list[Plan]:
    """The plan in every order of its relations (derived plan sets), original order first."""
    seen, out = set(), []
    for order in permutations(plan.chain):
        if order in seen:
            continue
        seen.add(order)
        out.append(Plan(plan.entity, order, plan.answer_type,
                        plan.compiler if order == plan.chain else f"derived:order({plan.compiler})",
                        plan.rule, plan.note))
    return out
