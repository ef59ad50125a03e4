"""Model plan compiler: a local Ollama model turns each question into one plan, before any
haystack is read. It is the only place a language model takes part, and it never sees a fact:
it receives the question text and the store entity names the question mentions, nothing else.

Every reply is validated against the store and the relation inventory; any failure (timeout,
refused connection, non-200, truncated or invalid reply) falls back to the lexicon's plans for
that question, and the plan's note says what happened. A host that is down or lacks the model
stops the compiler before the first question, and one that stops answering partway stops it
too (ModelHostError): no set is made. The result is a `PlanSet` that `archive.write_plan_set`
stores, so a run can be repeated without the model; a set whose every call failed is marked
`all_failed` and the archive refuses it.

`compile_plan_set` is the one door for every planner (rules, lexicon, ollama:MODEL), so the
archive records them alike."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable

import orjson

from resolver._version import __version__
from resolver.errors import InputError
from resolver.haystack import Dataset
from resolver.models.ollama_client import INVALID_PLAN, ModelCallError, ModelClient, model_of
from resolver.plan.plans import FAMILY_PREFIX, Compiled, Plan, PlanSet
from resolver.text import grammar
from resolver.text.relations import FAMILIES, inventory

LEVELS = ("relation", "family")
PROMPT_FILES = {"relation": "planner_relation.txt", "family": "planner_family.txt"}
PLANNERS = ("rules", "lexicon", "ollama:MODEL")
NUM_PREDICT = 200            # a plan is ~40 tokens; a longer reply is rambling, cut it short


def prompt_text(name: str) -> str:
    return resources.files("resolver.models.prompts").joinpath(name).read_text("utf-8")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render_relations() -> str:
    """The relation list of the prompts, rendered from the inventory (never copied by hand)."""
    return "\n".join(f"- {r.name}: \"{r.template}\" | \"{r.question}\" | {r.object_type}"
                     for r in _mquake_relations())


def _mquake_relations() -> list:
    """The relations the prompts name: MQuAKE's (the ALFWorld-Revision `location` is read from
    correction lines, never asked of a model), so the prompts stay as archived."""
    return [r for r in inventory().values() if r.source == "MQuAKE"]


def lone_relations() -> tuple[str, ...]:
    """Relations in no family: at family level they are named on their own."""
    return tuple(r.name for r in _mquake_relations() if not r.families)


def render_families() -> str:
    lines = []
    for family in FAMILIES:
        members = [r for r in inventory().values() if family in r.families]
        lines.append(f"- {family}: " + "; ".join(f"{r.name} (\"{r.template}\")" for r in members))
    for name in lone_relations():
        lines.append(f"- {name}: \"{inventory()[name].template}\"")
    return "\n".join(lines)


@lru_cache(maxsize=None)
def planner_prompt(level: str = "relation") -> str:
    """The final system prompt for a level; its sha256 is what the manifest records."""
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}", expected=" or ".join(LEVELS))
    text = prompt_text(PROMPT_FILES[level])
    return (text.replace("{{RELATIONS}}", render_relations())
            .replace("{{FAMILIES}}", render_families()))


def step_names(level: str) -> tuple[str, ...]:
    """What a chain step may be called in a reply at this level."""
    if level == "family":
        return FAMILIES + lone_relations()
    return tuple(r.name for r in _mquake_relations())


def reply_schema(level: str = "relation") -> dict:
    """The JSON schema sent as `format`: Ollama constrains decoding to it."""
    return {"type": "object",
            "properties": {"entity": {"type": "string"},
                           "chain": {"type": "array", "minItems": 1, "maxItems": 4,
                                     "items": {"type": "string", "enum": list(step_names(level))}}},
            "required": ["entity", "chain"]}


def mentioned_names(text: str, store) -> list[str]:
    """Store entity names the question mentions, widest first, each once."""
    out: list[str] = []
    for mention in store.mentions(text):
        for name in mention.names:
            if name not in out:
                out.append(name)
    return out


def user_message(text: str, store, plan: Plan | None = None) -> str:
    """All the model is told: the question, the store names it mentions (and, for repair, the
    plan to repair). Names only, never a fact."""
    names = orjson.dumps(mentioned_names(text, store)).decode()
    lines = [f"Question: {text}", f"Entities named in the question: {names}"]
    if plan is not None:
        lines.append("Plan to repair: " + orjson.dumps(
            {"entity": plan.entity, "chain": list(plan.chain)}).decode())
    lines.append("Reply:")
    return "\n".join(lines)


def _answer_type(chain: tuple[str, ...]) -> str:
    last = chain[-1]
    if last.startswith(FAMILY_PREFIX):
        types = {r.object_type for r in inventory().values()
                 if last[len(FAMILY_PREFIX):] in r.families}
        return types.pop() if len(types) == 1 else "any"
    return inventory()[last].object_type


def validate_reply(obj: dict, store, level: str, compiler: str, rule: str,
                   note: str = "") -> Plan:
    """A reply as a plan, or ModelCallError(INVALID_PLAN) saying what is wrong with it."""
    entity, chain = obj.get("entity"), obj.get("chain")
    if not isinstance(entity, str) or not entity.strip():
        raise ModelCallError(INVALID_PLAN, f"no entity in reply {obj!r}"[:200])
    if not isinstance(chain, list) or not all(isinstance(s, str) for s in chain):
        raise ModelCallError(INVALID_PLAN, f"chain is not a list of names: {chain!r}"[:200])
    if not 1 <= len(chain) <= 4:
        raise ModelCallError(INVALID_PLAN, f"chain has {len(chain)} steps, not 1 to 4")
    spelled = store.spelling(entity.strip().strip("\"'"))
    if spelled is None:
        raise ModelCallError(INVALID_PLAN, f"entity {entity!r} is not in the store")
    allowed = set(step_names(level))
    steps = []
    for step in chain:
        bare = step.strip()
        if level == "family" and bare.startswith(FAMILY_PREFIX):
            bare = bare[len(FAMILY_PREFIX):]
        if bare not in allowed:
            what = "family" if level == "family" else "relation"
            raise ModelCallError(INVALID_PLAN, f"unknown {what} {step!r}")
        steps.append(FAMILY_PREFIX + bare if bare in FAMILIES and level == "family" else bare)
    chain_t = tuple(steps)
    return Plan(spelled, chain_t, _answer_type(chain_t), compiler, rule, note)


def fallback(text: str, store, what: str) -> Compiled:
    """The lexicon's plans for a question the model could not plan, marked as such."""
    from resolver.plan.compile_lexicon import compile_question

    lex = compile_question(text, store)
    note = f"fallback: {what}"
    plans = tuple(Plan(p.entity, p.chain, p.answer_type, "lexicon", p.rule, note)
                  for p in lex.plans)
    return Compiled(plans, "" if plans else f"{note}; lexicon: {lex.reason}")


@dataclass
class ModelPlanner:
    """Compiles one question at a time through one model; counts what happened."""
    client: ModelClient
    level: str = "relation"
    temperature: float = 0.0
    stream: bool = False
    ok: int = 0
    fallbacks: Counter = field(default_factory=Counter)
    fallback_qids: dict = field(default_factory=dict)

    @property
    def compiler(self) -> str:
        return f"ollama:{self.client.model}"

    @property
    def prompt(self) -> str:
        return planner_prompt(self.level)

    def compile_question(self, text: str, store, qid: str = "") -> Compiled:
        messages = [{"role": "system", "content": self.prompt},
                    {"role": "user", "content": user_message(text, store)}]
        try:
            obj, _ = self.client.chat_json(messages, reply_schema(self.level),
                                           temperature=self.temperature,
                                           num_predict=NUM_PREDICT, stream=self.stream)
            plan = validate_reply(obj, store, self.level, self.compiler,
                                  f"{PROMPT_FILES[self.level]} sha256:"
                                  f"{sha256_text(self.prompt)[:12]}")
        except ModelCallError as exc:
            self.fallbacks[exc.kind] += 1
            self.fallback_qids[qid] = str(exc)
            return fallback(text, store, str(exc))
        self.ok += 1
        return Compiled((plan,))


def _inputs(dataset: Dataset) -> dict[str, str]:
    # by file name, not path: the manifest must not depend on where the checkout lives
    return {Path(p).name: sha for p, sha in sorted(dataset.files_sha256.items())}


def compile_plan_set(dataset: Dataset, planner: str, set_id: str, *, temperature: float = 0.0,
                     level: str = "relation", host: str | None = None, timeout: float = 60.0,
                     stream: bool = False, progress: Callable[[int], None] | None = None
                     ) -> PlanSet:
    """Compile every question of the dataset with one planner into a plan set (not yet
    archived). `planner` is "rules", "lexicon" or "ollama:MODEL"."""
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}", expected=" or ".join(LEVELS))
    manifest = {"set_id": set_id, "planner": planner, "model": None, "temperature": None,
                "level": level, "prompt_sha256": None, "prompt_file": None,
                "inputs_sha256": _inputs(dataset), "grammar_sha256": grammar.grammar_sha256(),
                "factres_version": __version__, "fallbacks": {}, "fallback_count": 0,
                "all_failed": False}
    if planner in ("rules", "lexicon"):
        if level != "relation":
            raise InputError(f"the {planner} planner compiles relations only, not {level!r}")
        if planner == "rules":
            from resolver.plan.compile_rules import compile_question
        else:
            from resolver.plan.compile_lexicon import compile_question
        compile_one = lambda text, store, qid: compile_question(text, store)  # noqa: E731
        model_planner = None
    else:
        model = model_of(planner)
        client = ModelClient(model, host=host, timeout=timeout)
        model_planner = ModelPlanner(client, level, temperature, stream)
        compile_one = model_planner.compile_question
        manifest.update({"model": model, "temperature": temperature, "host": client.base_url,
                         "timeout_s": client.timeout, "max_retries": client.retries,
                         "num_predict": NUM_PREDICT, "prompt_file": PROMPT_FILES[level],
                         "prompt_sha256": sha256_text(model_planner.prompt),
                         "schema_sha256": hashlib.sha256(orjson.dumps(
                             reply_schema(level), option=orjson.OPT_SORT_KEYS)).hexdigest()})
    plans: dict[str, Compiled] = {}
    shas: dict[str, str] = {}
    try:
        if model_planner is not None:
            model_planner.client.check_host()      # a dead host fails before any question
            manifest["model_details"] = model_planner.client.describe_model()
        for q in dataset.questions:
            store = dataset.haystack_of(q).store
            plans[q.qid] = compile_one(q.text, store, q.qid)
            shas[q.qid] = sha256_text(q.text)
            if progress:
                progress(1)
    finally:
        if model_planner is not None:
            model_planner.client.close()
    if model_planner is not None:
        manifest.update({"calls_ok": model_planner.ok,
                         "fallbacks": dict(sorted(model_planner.fallbacks.items())),
                         "fallback_count": sum(model_planner.fallbacks.values()),
                         "fallback_qids": dict(model_planner.fallback_qids),
                         "all_failed": bool(plans) and model_planner.ok == 0})
    manifest["count"] = len(plans)
    return PlanSet(set_id, manifest, plans, shas)
