"""The relation inventory: canonical name, Wikidata P-ids, fact template, question template,
object type and families of every relation.

Nothing here is written twice: the fact template comes from the grammar (`grammar.templates()`),
the question template from MQuAKE's question_templates.json (bundled), and the table below adds
only what neither of them says. tests/test_relations.py checks the three agree."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from resolver.text import grammar

# Answer types a question can name; "any" constrains nothing.
ANSWER_TYPES = ("city", "country", "continent", "language", "person", "organisation", "sport",
                "religion", "genre", "occupation", "position", "work", "place", "any")

# Families group relations a paraphrase may blur (issue 4). A relation can be in several.
FAMILIES = ("language", "origin", "maker", "leader", "place", "work", "membership", "kin")

# name: (P-ids, object type, families). P131 and P276 share one template ("[X] is located in
# __"), so no parser can tell them apart: both map to `located_in`.
_TABLE: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "located_in_country": (("P17",), "country", ("origin",)),
    "born_in": (("P19",), "city", ("place",)),
    "died_in": (("P20",), "city", ("place",)),
    "married_to": (("P26",), "person", ("kin",)),
    "continent": (("P30",), "continent", ()),
    "capital": (("P36",), "city", ("place",)),
    "child": (("P40",), "person", ("kin",)),
    "author": (("P50",), "person", ("maker",)),
    "educated_at": (("P69",), "organisation", ("membership",)),
    "field_of_work": (("P106",), "occupation", ("work",)),
    "founded_by": (("P112",), "person", ("maker",)),
    "owned_by": (("P127",), "organisation", ("membership",)),
    "located_in": (("P131", "P276"), "place", ("place",)),
    "genre": (("P136",), "genre", ("work",)),
    "headquarters": (("P159",), "city", ("place", "origin")),
    "created_by": (("P170",), "person", ("maker",)),
    "performed_by": (("P175",), "person", ("maker",)),
    "produced_by": (("P176",), "organisation", ("maker",)),
    "record_label": (("P264",), "organisation", ("membership",)),
    "language_of_work": (("P407",), "language", ("language",)),
    "position": (("P413",), "position", ("work",)),
    "country_of_origin": (("P495",), "country", ("origin",)),
    "founded_in": (("P740",), "city", ("place", "origin")),
    "famous_for": (("P800",), "work", ("work",)),
    "original_language": (("P364",), "language", ("language",)),
    "languages_spoken": (("P1412",), "language", ("language",)),
    "citizenship": (("P27",), "country", ("origin",)),
    "work_location": (("P937",), "city", ("place",)),
    "official_language": (("P37",), "language", ("language",)),
    "religion": (("P140",), "religion", ()),
    "developer": (("P178",), "organisation", ("maker",)),
    "employer": (("P108",), "organisation", ("membership",)),
    "sport": (("P641",), "sport", ("work",)),
    "twinned_with": (("P190",), "city", ()),
    "member_of": (("P463",), "organisation", ("membership",)),
    "original_broadcaster": (("P449",), "organisation", ("maker",)),
    "head_of_state": (("P35",), "person", ("leader",)),
    "head_coach": (("P286",), "person", ("leader",)),
    "officeholder": (("P1308",), "person", ("leader",)),
    "chairperson": (("P488",), "person", ("leader",)),
    "ceo": (("P169",), "person", ("leader",)),
    "director": (("P1037",), "person", ("leader",)),
    "head_of_government": (("P6",), "person", ("leader",)),
}

# What a relation's subject can be, in the answer-type vocabulary: Wikidata's subject-type
# constraints of each property, coarsened ("work" = creative work or product; "place" = a region
# that is neither city nor country). Used to type-check plans (signatures.py), never to answer.
SUBJECT_TYPES: dict[str, tuple[str, ...]] = {
    "located_in_country": ("city", "place", "organisation", "work"),
    "born_in": ("person",), "died_in": ("person",), "married_to": ("person",),
    "child": ("person",), "educated_at": ("person",), "field_of_work": ("person",),
    "citizenship": ("person",), "languages_spoken": ("person",), "work_location": ("person",),
    "religion": ("person", "organisation"), "position": ("person",),
    "employer": ("person",), "member_of": ("person", "organisation", "country"),
    "famous_for": ("person",), "record_label": ("person",),
    "genre": ("person", "work"),
    "continent": ("country", "city", "place"),
    "capital": ("country", "place"),
    "head_of_state": ("country", "place"),
    "head_of_government": ("country", "city", "place"),
    "official_language": ("country", "city", "place", "organisation"),
    "twinned_with": ("city",),
    "located_in": ("city", "place", "organisation", "work"),
    "author": ("work",), "created_by": ("work",), "performed_by": ("work",),
    "produced_by": ("work",), "developer": ("work",), "original_broadcaster": ("work",),
    "language_of_work": ("work",), "original_language": ("work",),
    "country_of_origin": ("work", "sport", "organisation"),
    "founded_by": ("organisation", "religion", "country", "city", "place", "work"),
    "founded_in": ("organisation", "religion"),
    "owned_by": ("organisation", "work"),
    "headquarters": ("organisation",),
    "head_coach": ("organisation",), "chairperson": ("organisation",),
    "ceo": ("organisation",), "director": ("organisation",),
    "officeholder": ("position",),
    "sport": ("person", "organisation", "position", "work"),
}

# Relations of other sources than MQuAKE: name -> (source, question template, object type,
# subject types). `location` is P-Mem's ALFWorld-Revision relation
# (where an object is: "work" is the subject type of things), read by the correction language
# (grammars/corrections.lark), which gives its template; it has no Wikidata property and no
# family.
NOT_MQUAKE = {
    "location": ("ALFWorld-Revision (P-Mem)", "Where is [X] now?", "place", ("work",)),
}

# Followed both ways by the search: "A is married to B" also says who B is married to.
SYMMETRIC = frozenset({"married_to", "twinned_with"})


@dataclass(frozen=True)
class Relation:
    name: str                 # canonical snake_case name (= the grammar rule alias)
    pids: tuple[str, ...]     # Wikidata property ids
    template: str             # cloze, from the grammar: "[X] died in the city of __"
    question: str             # MQuAKE question template: "Which city did [X] die in?"
    object_type: str          # one of ANSWER_TYPES
    subject_types: frozenset[str]   # what the subject can be (SUBJECT_TYPES)
    families: frozenset[str]  # subset of FAMILIES
    symmetric: bool
    source: str = "MQuAKE"    # where the relation comes from (NOT_MQUAKE names the others)

    def render(self, subject: str, obj: str) -> str:
        """The fact sentence, exactly as FactConsolidation writes it (without serial)."""
        return self.template.replace("[X]", subject).replace(" __", "") + " " + obj + "."


def _mquake(name: str) -> dict[str, str]:
    text = resources.files("resolver.data").joinpath("mquake", name).read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def inventory() -> dict[str, Relation]:
    templates = grammar.templates()
    questions = _mquake("question_templates.json")
    missing = sorted((set(templates) ^ set(_TABLE)) | (set(_TABLE) ^ set(SUBJECT_TYPES)))
    if missing:
        raise RuntimeError(f"grammar, relation table and subject types disagree on: {missing}")
    out = {}
    for name in sorted(_TABLE):
        pids, otype, fams = _TABLE[name]
        out[name] = Relation(name, pids, templates[name], questions[pids[0]], otype,
                             frozenset(SUBJECT_TYPES[name]), frozenset(fams), name in SYMMETRIC)
    from resolver.text.corrections import location_template
    for name, (source, question, otype, subjects) in NOT_MQUAKE.items():
        out[name] = Relation(name, (), location_template(), question, otype,
                             frozenset(subjects), frozenset(), False, source)
    return dict(sorted(out.items()))


def relation(name: str) -> Relation:
    return inventory()[name]


def family_members(family: str) -> frozenset[str]:
    return frozenset(r.name for r in inventory().values() if family in r.families)


def mquake_cloze_templates() -> dict[str, str]:
    return _mquake("cloze_templates.json")


def mquake_question_templates() -> dict[str, str]:
    return _mquake("question_templates.json")


def mquake_relation_prompts() -> dict[str, str]:
    return _mquake("rel-prompts.json")
