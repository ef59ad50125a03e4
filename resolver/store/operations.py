"""What corrections and patches do to a store: the typed operations of the provenance ledger
(resolver/store/provenance.py) reached from text and from the API (issue 32).

A correction line (`resolver.text.corrections`) or a patch (`Patch`, P-Mem's patch form) becomes
at most one or two ledger operations on one key, done through `FactStore.operate`, so every
version it writes is seen by the lookup tables, the names and the reverse hops as a fact line's
version is. The evidence of each operation is a `Fact` holding the line's serial (its own, else
the next one in arrival order), its line and its text; for a version it writes, its subject
and value. What changes nothing is said in `Applied.note` (a memory reports it), never raised.
The rules, form by form, are in docs/memory.md ("Corrections and operations")."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from resolver.errors import InputError, ProvenanceError, clip
from resolver.store.fact_store import FactStore, norm
from resolver.store.provenance import (ACCEPT, CONTEST, CONTESTED, NOOP, OPERATIONS, REJECT,
                                       RESOLVE, REVOKE, Version, show_key)
from resolver.text.corrections import (CHECK, CONTRADICT, EARLIER, MOVE, REPORT, RETRACT, UPDATE,
                                       Correction, read_sentence)
from resolver.text.corrections import read as read_correction
from resolver.text.cues import any_candidate, candidate_lines, cued
from resolver.text.facts import BOM, Fact, ParseResult, UnparsedLine

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class Applied:
    """What one correction or patch did: the ledger operations done, in order (empty: nothing
    changed), on which key, with which serial, and what a report says ("" when nothing)."""
    operations: tuple[str, ...]
    subject: str
    relation: str
    value: str | None
    serial: int
    line: int
    text: str
    note: str = ""
    head: Version | None = None          # the key's head afterwards

    @property
    def changed(self) -> bool:
        return bool(self.operations)

    def to_json(self) -> dict:
        return {"operations": list(self.operations), "subject": self.subject,
                "relation": self.relation, "value": self.value, "serial": self.serial,
                "line": self.line, "text": self.text, "note": self.note,
                "head": None if self.head is None else self.head.to_json()}


def next_serial(store: FactStore) -> int:
    """The serial a line or patch without one takes: the next after every serial so far."""
    last = store.last_serial
    return 0 if last is None else last + 1


def _state(store: FactStore, subject: str, relation: str
           ) -> tuple[Version | None, list[str], bool]:
    """The key's head, its open alternatives' values and whether it was ever written."""
    key = (norm(subject), relation)
    ledger = store.ledger
    head = ledger.head(key)
    alternatives = [v.value for v in ledger.alternatives(key)]
    return head, alternatives, bool(ledger.history(key))


def _older(store: FactStore, subject: str, relation: str, value: str) -> bool:
    """Whether an older version of the key's lineage (not the head) holds `value`."""
    lineage = store.lineage(subject, relation)
    return any(v.value == value for v in lineage[1:])


def apply_correction(store: FactStore, correction: Correction, serial: int) -> Applied:
    """Do what a correction line says (docs/memory.md); `serial`: its own, or the next."""
    c = correction
    subject, relation, value = c.subject, c.relation, c.value
    head, alternatives, known = _state(store, subject, relation)
    # S is the head or an open alternative already: a report or an observation supports it
    held = head is not None and (head.value == value or value in alternatives)
    done: list[str] = []
    note = ""
    key = show_key((subject, relation))

    def evidence(written: str | None = value) -> Fact:
        return Fact(serial, subject, relation, written if written else value, c.line, c.text)

    def do(op: str, target: str | None = value, written: str | None = value) -> None:
        store.operate(op, subject, relation, target, evidence(written))
        done.append(op)

    if c.form == RETRACT:
        if head is None:
            note = (f"nothing to retract: {key} " + (
                "is empty (every version retracted)" if known else "was never stored"))
        elif head.value == value and alternatives:
            note = (f"{value!r} is the head of the contested {key}: settle it with a Check "
                    "first (nothing changed)")
        elif head.value == value:
            do(REVOKE, None)
        elif value in alternatives or _older(store, subject, relation, value):
            do(REVOKE, value)
        else:
            note = (f"{value!r} was never stored as {key} (its head is {head.value!r}): "
                    "nothing changed")
    elif c.form == CONTRADICT:
        other = c.other
        if head is None:
            do(ACCEPT)
            note = f"{other!r} was never stored as {key}: {value!r} accepted"
        elif head.value == value:
            do(NOOP)
        elif head.value == other and value in alternatives:
            do(RESOLVE)
        elif head.value == other:
            do(REJECT)
        else:
            do(ACCEPT)
            note = (f"{other!r} is not the current value of {key} (it was {head.value!r}): "
                    f"{value!r} accepted, {other!r} left as it was")
    elif c.form in (REPORT, EARLIER) and (head is None or held):
        do(NOOP if held else ACCEPT)
    elif c.form == REPORT:
        do(CONTEST)
    elif c.form == CHECK:
        if alternatives and (head.value == value or value in alternatives):
            do(RESOLVE)
        else:
            do(ACCEPT)
    elif c.form == UPDATE:
        do(ACCEPT)
    elif c.form == MOVE:
        do(ACCEPT)
        if head is None:
            note = f"{subject!r} had no location: the move says from {c.other!r}"
        elif head.value != c.other:
            note = (f"the move says {subject!r} was in {c.other!r}, the memory had "
                    f"{head.value!r}: {value!r} is current")
    elif c.form == EARLIER:
        if alternatives:
            note = (f"{key} is contested: the earlier observation {value!r} is not kept as a "
                    "version")
        else:
            # kept as a version of the key's history that never becomes current: an
            # alternative settled at once in the head's favour
            current = head.value
            do(CONTEST)
            do(RESOLVE, current, current)
    else:                                      # the grammar has no other form
        raise ValueError(f"unknown correction form {c.form!r}")
    after = store.head(subject, relation)
    return Applied(tuple(done), subject, relation, value, serial, c.line, c.text, note, after)


def commit(store: FactStore, facts, corrections) -> list[Applied]:
    """Extend `store` with `facts` (in serial order), each correction applied after the facts
    of the lines before it, with its own serial or the next one: what a memory does with a
    batch, and what a run does with a context holding corrections. Returns what each did."""
    done, at = [], 0
    for correction in corrections:
        end = at
        while end < len(facts) and facts[end].line < correction.line:
            end += 1
        store.extend(facts[at:end])
        at = end
        serial = correction.serial if correction.serial is not None else next_serial(store)
        done.append(apply_correction(store, correction, serial))
    store.extend(facts[at:])
    return done


def read_context(parsed: ParseResult, context: str) -> tuple[ParseResult, FactStore]:
    """A parse and its store, with the context's correction lines read and applied
    (`factres parse` counts them, `factres run` answers from the store they made): each is
    taken out of the facts (a correction may read as a fact with a wrong subject) and the
    unparsed lines, or reported when it opens with a cue and reads as none. A context holding
    no candidate line (every FactConsolidation context) gives the parse as it is and the store
    of its facts, after one search of the text."""
    if not any_candidate(context):
        return parsed, FactStore(parsed.facts)
    text = context.removeprefix(BOM).replace("\r\n", "\n")
    lines = text.split("\n")
    found: dict[int, Correction | UnparsedLine] = {}
    for index in candidate_lines(text):
        raw, number = lines[index], index + 1
        read = read_correction(raw, number)
        if isinstance(read, Correction) or cued(raw):
            found[number] = read
    if not found:
        return parsed, FactStore(parsed.facts)
    facts = [f for f in parsed.facts if f.line not in found]
    unparsed = [u for u in parsed.unparsed if u.line not in found]
    unparsed += [u for u in found.values() if isinstance(u, UnparsedLine)]
    unparsed.sort(key=lambda u: u.line)
    corrections = tuple(c for c in found.values() if isinstance(c, Correction))
    store = FactStore()
    applied = commit(store, facts, corrections)
    return replace(parsed, facts=tuple(facts), unparsed=tuple(unparsed),
                   corrections=tuple(applied)), store


# ---- patches ------------------------------------------------------------------------------
PATCH_FIELDS = ("op", "key", "old_value", "new_value", "evidence", "hard_commit")
EXPECTED_PATCH = ('{"op": one of ' + ", ".join(OPERATIONS) + ', "key": {"subject": ..., '
                  '"relation": ...} or a fact sentence, "old_value", "new_value", "evidence", '
                  '"hard_commit"}')


def _patch_model() -> type[BaseModel]:
    from typing import Literal, Union

    from pydantic import BaseModel, ConfigDict, Field  # lazily: only a patch needs it

    class Key(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        subject: str = Field(min_length=1)
        relation: str = Field(min_length=1)

    class Patch(BaseModel):
        """P-Mem's patch form (docs/memory.md)."""
        model_config = ConfigDict(extra="forbid", strict=True)
        op: Literal[ACCEPT, REJECT, CONTEST, REVOKE, RESOLVE, NOOP]
        key: Union[Key, str]
        old_value: str | None = Field(default=None, min_length=1)
        new_value: str | None = Field(default=None, min_length=1)
        evidence: str = ""
        hard_commit: bool = False

    return Patch


_MODEL: list = []


@dataclass(frozen=True)
class Patch:
    """A validated patch: the key read (subject, relation), the operation and its values."""
    op: str
    subject: str
    relation: str
    old_value: str | None
    new_value: str | None
    evidence: str
    hard_commit: bool

    def to_json(self) -> dict:
        return {"op": self.op, "key": {"subject": self.subject, "relation": self.relation},
                "old_value": self.old_value, "new_value": self.new_value,
                "evidence": self.evidence, "hard_commit": self.hard_commit}


def read_patch(data, *, path: str | None = None, line: int | None = None) -> Patch:
    """A patch (a dict, or a `Patch`) checked: InputError naming the field and what was
    expected for a patch of the wrong shape, an unknown relation or a key sentence the grammar
    does not read. A key given as a fact sentence gives new_value its object when none is."""
    if isinstance(data, Patch):
        return data
    if not _MODEL:
        _MODEL.append(_patch_model())
    from pydantic import ValidationError
    if not isinstance(data, dict):
        raise _refused(f"a patch must be a JSON object, not {type(data).__name__}", None,
                       path, line, EXPECTED_PATCH)
    try:
        model = _MODEL[0].model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"] if not str(p).startswith(("Key", "str")))
        got = first.get("input")
        shown = "" if isinstance(got, dict) else f" (got {clip(repr(got), 80)})"
        raise _refused(f"field {where or 'patch'!r}: {first['msg']}{shown}", where or None,
                       path, line, EXPECTED_PATCH) from None
    new = model.new_value
    if isinstance(model.key, str):
        found = read_sentence(model.key.rstrip().removesuffix("."))
        if found is None:
            raise _refused(f"field 'key': {clip(model.key, 120)!r} is no fact sentence the "
                           "grammar reads", "key", path, line,
                           "a fact sentence (\"Tim Cook is employed by Apple.\") or "
                           '{"subject": ..., "relation": ...}')
        subject, relation, obj = found
        new = obj if new is None else new
    else:
        subject, relation = model.key.subject, model.key.relation
    from resolver.text.relations import inventory
    if relation not in inventory():
        raise _refused(f"field 'key.relation': unknown relation {relation!r}", "key.relation",
                       path, line, "one of " + ", ".join(sorted(inventory())))
    if model.op in (ACCEPT, REJECT, CONTEST, RESOLVE) and new is None:
        raise _refused(f"field 'new_value': a {model.op} needs one", "new_value", path, line,
                       "the value the operation writes or chooses")
    if model.op == NOOP and new is None and model.old_value is None:
        raise _refused("field 'new_value': a noop needs the value it supports", "new_value",
                       path, line, "new_value (or old_value)")
    return Patch(model.op, subject, relation, model.old_value, new, model.evidence,
                 model.hard_commit)


def _refused(message: str, field: str | None, path: str | None, line: int | None,
             expected: str) -> InputError:
    """The InputError of a bad patch; `field` (None: the whole patch) is kept on it as
    `.field`, for a server to name it as OpenAI's `param`."""
    error = InputError(message, path=path, line=line, expected=expected)
    error.field = field
    return error


def apply_patch(store: FactStore, patch: Patch, serial: int, line: int = 0) -> Applied:
    """Do a patch (P-Mem's rules, docs/memory.md): ProvenanceError with the reason when it
    breaks a rule, unless `hard_commit`: it is then an accept of new_value."""
    subject, relation = patch.subject, patch.relation
    head, alternatives, _ = _state(store, subject, relation)
    key = show_key((subject, relation))
    text = patch.evidence
    reason = _broken(patch, head, alternatives, key)
    op = patch.op
    value = patch.new_value
    note = ""
    if reason is not None:
        if not patch.hard_commit or patch.new_value is None:
            raise ProvenanceError(f"patch {op} on {key} refused: {reason}"
                                  + ("" if patch.new_value is not None or not patch.hard_commit
                                     else " (hard_commit needs a new_value to accept)"))
        op, note = ACCEPT, f"hard commit: {reason}; {patch.new_value!r} accepted"
    if op == REVOKE:
        target, written = None, head.value
    elif op == NOOP:
        target = written = value if value is not None else patch.old_value
    else:
        target = written = value
    evidence = Fact(serial, subject, relation, written, line, text)
    try:
        store.operate(op, subject, relation, target, evidence)
    except ProvenanceError as exc:
        if not patch.hard_commit or patch.new_value is None or op == ACCEPT:
            raise ProvenanceError(f"patch {op} on {key} refused: {exc}") from None
        op, note = ACCEPT, f"hard commit: {exc}; {patch.new_value!r} accepted"
        evidence = Fact(serial, subject, relation, patch.new_value, line, text)
        store.operate(ACCEPT, subject, relation, patch.new_value, evidence)
    return Applied((op,), subject, relation, evidence.object, serial, line, text, note,
                   store.head(subject, relation))


def _broken(patch: Patch, head: Version | None, alternatives: list[str], key: str
            ) -> str | None:
    """The rule a patch breaks, None when it keeps them all."""
    op = patch.op
    if patch.old_value is not None:
        if head is None:
            return f"old_value {patch.old_value!r} given, but {key} is empty"
        if head.value != patch.old_value:
            return f"old_value {patch.old_value!r} is not the head's value {head.value!r}"
    if op in (CONTEST, REVOKE, REJECT, NOOP) and head is None:
        return f"{op} needs a head, and {key} is empty"
    if op == CONTEST and head.value == patch.new_value:
        return f"{patch.new_value!r} is the head already (noop supports it)"
    if op == CONTEST and patch.new_value in alternatives:
        return f"{patch.new_value!r} contests the head already (noop supports it)"
    if op == REVOKE and head.status == CONTESTED:
        return f"{key} is contested: resolve it first"
    if op == RESOLVE:
        if not alternatives:
            return f"{key} is not contested"
        if patch.new_value != head.value and patch.new_value not in alternatives:
            parties = ", ".join(repr(v) for v in [head.value, *alternatives])
            return (f"{patch.new_value!r} is neither the head nor an alternative (parties: "
                    f"{parties})")
    return None
