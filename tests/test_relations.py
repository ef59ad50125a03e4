"""The relation inventory agrees with the grammar and with MQuAKE's own template files."""
from __future__ import annotations

from resolver.text import grammar
from resolver.text.relations import (
    ANSWER_TYPES,
    FAMILIES,
    SYMMETRIC,
    family_members,
    inventory,
    mquake_cloze_templates,
    mquake_question_templates,
    relation,
)


def _mquake():
    return [rel for rel in inventory().values() if rel.source == "MQuAKE"]


def test_every_mquake_pid_has_exactly_one_relation():
    pids = [pid for rel in inventory().values() for pid in rel.pids]
    assert sorted(pids) == sorted(mquake_cloze_templates())
    assert len(pids) == len(set(pids)) == 44


def test_each_relation_template_is_the_grammar_template_and_mquake_cloze():
    cloze = mquake_cloze_templates()
    for rel in _mquake():
        assert rel.template == grammar.templates()[rel.name]
        for pid in rel.pids:
            assert cloze[pid] == rel.template, (rel.name, pid)


def test_question_templates_come_from_mquake():
    questions = mquake_question_templates()
    for rel in _mquake():
        assert rel.question == questions[rel.pids[0]]


def test_located_in_covers_both_pids_that_share_its_template():
    assert relation("located_in").pids == ("P131", "P276")


def test_language_relations_are_distinct_and_share_a_family():
    assert relation("original_language").pids == ("P364",)
    assert relation("language_of_work").pids == ("P407",)
    assert {"original_language", "language_of_work", "languages_spoken",
            "official_language"} == family_members("language")


def test_types_families_and_symmetry_are_from_the_declared_sets():
    for rel in inventory().values():
        assert rel.object_type in ANSWER_TYPES
        assert rel.families <= set(FAMILIES)
        assert rel.symmetric == (rel.name in SYMMETRIC)
        assert rel.subject_types and rel.subject_types <= set(ANSWER_TYPES) - {"any"}
    assert SYMMETRIC == {"married_to", "twinned_with"}


def test_render_writes_the_fact_sentence():
    assert relation("capital").render("France", "Paris") == "The capital of France is Paris."
    assert relation("child").render("Walter Chrysler", "Walter Percy Chrysler Jr.") == \
        "Walter Chrysler's child is Walter Percy Chrysler Jr.."


def test_location_is_the_alfworld_revision_relation_of_its_own():
    # issue 32: P-Mem's object locations, not from MQuAKE, its template from the correction
    # grammar's `location` rule and its question the probes' question
    rel = relation("location")
    assert rel.source != "MQuAKE" and rel.pids == ()
    assert rel.template == "[X] is in __"
    assert rel.question == "Where is [X] now?"
    assert [r.name for r in inventory().values() if r.source != "MQuAKE"] == ["location"]
    assert len(_mquake()) == 43
