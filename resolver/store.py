"""`FactStore`: every version of each (subject, relation) key, append-only, in serial order.

The latest serial is current; displaced versions stay reachable (history, provenance, rollback
with `as_of`). Subjects are looked up case- and whitespace-insensitively; the text as written
is kept for output."""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

from .facts import Fact

_WORD = re.compile(r"\w+")


def norm(name: str) -> str:
    """Lookup key of a name: case-folded, whitespace collapsed."""
    return " ".join(name.split()).casefold()


def name_tokens(text: str) -> tuple[str, ...]:
    """Word tokens used to find names inside questions: case-folded, punctuation and quotes
    ignored ("Mike D'Antoni's" -> mike d antoni s)."""
    return tuple(_WORD.findall(text.casefold()))


@dataclass(frozen=True, slots=True)
class Mention:
    """A store entity named in a text: token span [start, end) and the names it may be."""
    start: int
    end: int
    names: tuple[str, ...]     # store spellings, sorted
    as_subject: bool           # some spelling is the subject of a fact (it can start a chain)

    @property
    def width(self) -> int:
        return self.end - self.start


class FactStore:
    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self._keys: dict[tuple[str, str], list[Fact]] = {}
        self._by_subject: dict[str, dict[str, list[Fact]]] = defaultdict(dict)
        self._by_object: dict[str, list[Fact]] = defaultdict(list)
        self._spelling: dict[str, str] = {}
        self._subjects: set[str] = set()
        self._facts: list[Fact] = []
        self._token_index: dict[tuple[str, ...], set[str]] | None = None
        self._last_serial = -1
        for fact in facts:
            self.add(fact)

    # ---- writing -----------------------------------------------------------------------
    def add(self, fact: Fact) -> None:
        """Append a fact. Serials must increase: the store is append-only."""
        if fact.serial <= self._last_serial:
            raise ValueError(f"serial {fact.serial} after {self._last_serial}: the store is "
                             "append-only and ordered by serial")
        self._last_serial = fact.serial
        key = (norm(fact.subject), fact.relation)
        versions = self._keys.get(key)
        if versions is None:
            versions = self._keys[key] = []
            self._by_subject[key[0]][fact.relation] = versions
        versions.append(fact)
        self._by_object[norm(fact.object)].append(fact)
        self._spelling.setdefault(key[0], fact.subject)
        self._spelling.setdefault(norm(fact.object), fact.object)
        self._subjects.add(key[0])
        self._facts.append(fact)
        self._token_index = None

    # ---- reading -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._facts)

    def versions(self, subject: str, relation: str) -> tuple[Fact, ...]:
        """Every version of the key, oldest first."""
        return tuple(self._keys.get((norm(subject), relation), ()))

    def current(self, subject: str, relation: str, as_of: int | None = None) -> Fact | None:
        """The latest version (with `as_of`, the latest at or before that serial: rollback)."""
        versions = self._keys.get((norm(subject), relation))
        if not versions:
            return None
        if as_of is None:
            return versions[-1]
        older = [v for v in versions if v.serial <= as_of]
        return older[-1] if older else None

    def relations_of(self, subject: str) -> dict[str, tuple[Fact, ...]]:
        """relation -> versions (oldest first) for one subject, relations sorted by name."""
        found = self._by_subject.get(norm(subject), {})
        return {rel: tuple(found[rel]) for rel in sorted(found)}

    def by_object(self, obj: str) -> tuple[Fact, ...]:
        """Every fact, any version, whose object is `obj` (reverse lookup), in serial order."""
        return tuple(self._by_object.get(norm(obj), ()))

    def is_subject(self, name: str) -> bool:
        return norm(name) in self._subjects

    def spelling(self, name: str) -> str | None:
        """The store's own spelling of a name (first seen), or None if the store never saw it."""
        return self._spelling.get(norm(name))

    def keys(self) -> list[tuple[str, str]]:
        """(subject as written, relation) of every key, sorted."""
        return sorted((self._spelling[s], r) for s, r in self._keys)

    def entities(self) -> list[str]:
        """Every subject and object name as first written, sorted."""
        return sorted(self._spelling.values())

    # ---- names in questions ------------------------------------------------------------
    def _index(self) -> dict[tuple[str, ...], set[str]]:
        if self._token_index is None:
            index: dict[tuple[str, ...], set[str]] = defaultdict(set)
            for key, spelling in self._spelling.items():
                tokens = name_tokens(spelling)
                if tokens:
                    index[tokens].add(key)
            self._token_index = dict(index)
            self._max_tokens = max((len(t) for t in index), default=0)
        return self._token_index

    def mentions(self, text: str) -> list[Mention]:
        """Every store entity named in `text` (whole-word token match), widest first, then by
        position. Overlapping mentions are all returned; the planner decides."""
        index = self._index()
        tokens = name_tokens(text)
        found = []
        for width in range(min(self._max_tokens, len(tokens)), 0, -1):
            for start in range(len(tokens) - width + 1):
                keys = index.get(tokens[start:start + width])
                if keys:
                    names = tuple(sorted(self._spelling[k] for k in keys))
                    found.append(Mention(start, start + width, names,
                                         any(k in self._subjects for k in keys)))
        return found

    def longest_entity(self, text: str, subjects_only: bool = True) -> str | None:
        """The longest store entity named in `text` (ties: the earliest, then alphabetical)."""
        for mention in self.mentions(text):
            if mention.as_subject or not subjects_only:
                subjects = [n for n in mention.names if self.is_subject(n)]
                return (subjects or list(mention.names))[0]
        return None

    # ---- statistics ----------------------------------------------------------------------
    def stats(self) -> dict:
        depth = max((len(v) for v in self._keys.values()), default=0)
        histogram: dict[str, int] = defaultdict(int)
        for fact in self._facts:
            histogram[fact.relation] += 1
        return {
            "facts": len(self._facts),
            "keys": len(self._keys),
            "keys_with_several_versions": sum(1 for v in self._keys.values() if len(v) > 1),
            "deepest_version_chain": depth,
            "entities": len(self._spelling),
            "relations": dict(sorted(histogram.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
