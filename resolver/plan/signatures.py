"""Relation signatures: which relation may follow which, by the types a chain passes through.

A chain is well typed when each relation's subject can be what the hop before gives and the
last relation gives a type the question accepts. The first hop needs no type: the compiler
takes a relation the base entity has in the store (or bridges to one); every later type is the
object type of the hop before. The lexicon compiler uses this to choose between
the relations a phrase may mean ("developed" is `developer` of a product but the
`country_of_origin` of a sport). No model, no gold."""
from __future__ import annotations

from functools import lru_cache

from resolver.plan.lexicon import TYPE_ACCEPTS
from resolver.text.relations import inventory

# Object types that name a place of some kind; "place" (located_in) may be any of them.
_PLACES = frozenset({"city", "country", "place"})


def fits(value_types: frozenset[str], relation: str) -> bool:
    """Can a value of one of these types be the subject of `relation`?"""
    subjects = inventory()[relation].subject_types
    if value_types & subjects:
        return True
    # located_in lands on "place": a city or a country, the store does not say which.
    return "place" in value_types and bool(subjects & _PLACES)


@lru_cache(maxsize=None)       # relation pairs only: an unknown name raises, and is not kept
def follows(previous: str, relation: str) -> bool:
    """May `relation` be the hop after `previous` (its subject what `previous` gives)?"""
    return fits(object_types(previous), relation)


def object_types(relation: str) -> frozenset[str]:
    return frozenset((inventory()[relation].object_type,))


def acceptance(answer_type: str, relation: str) -> float:
    """How well the relation's object answers a question naming `answer_type` (0 = not)."""
    got = inventory()[relation].object_type
    if answer_type == "any" or got == answer_type:
        return 1.0
    return TYPE_ACCEPTS.get(answer_type, {}).get(got, 0.0)
