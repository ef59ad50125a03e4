"""What `Memory.forget` erases, for privacy: an entity's name, wherever the memory holds it.

An entity is named as the store names it (case and spacing ignored, `norm`): its spellings are
every subject and object of the store's facts that normalise to it. Erased: every fact whose
subject or object is the entity or whose text names it (whole words, any case: "Apple" in "Apple
Park" too; erring on the side of erasing), and every other operation whose key is the entity's,
whose value is the entity or whose evidence names it; an operation that no longer applies
without them goes too. Every text kept (the chunks of text, the reader's pending text) has each
spelling replaced by MARK. The log keeps a tombstone with the counts, never the name."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from resolver.errors import ProvenanceError, clip
from resolver.store.fact_store import FactStore, norm
from resolver.store.provenance import ACCEPT, Operation

MARK = "[erased]"


@dataclass(frozen=True)
class Erasure:
    """What one `forget` erased (counts only: the tombstone the log keeps)."""
    facts: int                  # facts of the store
    operations: int             # operations of the log, the facts' accepts included
    chunks: int                 # chunks of text kept in which the name was replaced
    compacted: bool             # the bytes are gone from the file (False: a reader kept pages)

    def to_json(self) -> dict:
        return {"facts": self.facts, "operations": self.operations, "chunks": self.chunks,
                "compacted": self.compacted}

    def describe(self) -> str:
        gone = "the file rewritten without them" if self.compacted else \
            "the file not yet compacted (a reader holds it open: forget again once it closes)"
        return (f"{self.facts} fact(s) and {self.operations} operation(s) erased, the name "
                f"replaced in {self.chunks} chunk(s) of text; {gone}")


def spellings(store: FactStore, entity: str) -> list[str]:
    """Every spelling of `entity` among the store's subjects and objects, longest first;
    ProvenanceError when the store never names it."""
    target = norm(entity)
    found = sorted({name for fact in store for name in (fact.subject, fact.object)
                    if norm(name) == target}, key=lambda n: (-len(n), n))
    if not found:
        raise ProvenanceError(f"no entity {clip(entity)!r} in the memory: nothing to forget")
    return found


def pattern(names: Iterable[str]) -> re.Pattern:
    """Any of `names` as whole words, in any case, its blanks any run of blanks."""
    parts = ["\\s+".join(map(re.escape, name.split())) for name in names]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + r")(?!\w)", re.IGNORECASE)


def erased(operation: Operation, target: str, names: re.Pattern, facts: set[int]) -> bool:
    """Whether the erasure of `target` (normalised) takes `operation` (`facts`: the ids of the
    store's facts it erases)."""
    if operation.op == ACCEPT and id(operation.evidence) in facts:
        return True
    if operation.key and norm(operation.key[0]) == target:
        return True
    if operation.value is not None and norm(operation.value) == target:
        return True
    evidence = operation.evidence
    return evidence is not None and names.search(evidence.text) is not None


def redact_json(value, names: re.Pattern):
    """A JSON value with every string's names replaced by MARK (the memory's state)."""
    if isinstance(value, str):
        return names.sub(MARK, value)
    if isinstance(value, list):
        return [redact_json(v, names) for v in value]
    if isinstance(value, dict):
        return {k: redact_json(v, names) for k, v in value.items()}
    return value
