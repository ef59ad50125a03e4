"""benchmarks/revision.py (issue 32, item 6): the generator of P-Mem's three ALFWorld-Revision
probe sets has the paper's shape (revision chains with four interleaved distractor chains,
retractions after d distractor events, two conflicting reports, eight distractors and a check),
draws its words from the committed ALFWorld vocabulary, and gives the same cases for the same
seed; the script runs end to end and prints P-Mem's published figures beside factres's. What
factres scores is not asserted here: it depends on the correction language (items 1-3)."""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def revision():
    spec = importlib.util.spec_from_file_location("factres_bench_revision",
                                                  ROOT / "benchmarks" / "revision.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module            # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


OBSERVED = re.compile(r"^Earlier observation: (.+) was in (.+)\.$")
MOVED = re.compile(r"^Update: (.+) has been moved from (.+) to (.+)\.$")
REPORT = re.compile(r"^Report: (.+) is in (.+)\.$")
RETRACT = re.compile(r"^Correction: the move of (.+) to (.+) was reported in error\.$")


def _names(name: str, line: str) -> bool:
    """Whether the line names the object ("towel 4" is not named by "handtowel 4")."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", line) is not None


def _chains(lines):
    """object -> its locations in order (observation, then each move's destination), checking
    that each move starts where the object was."""
    where: dict[str, list[str]] = {}
    for line in lines:
        if m := OBSERVED.match(line):
            assert m[1] not in where, line                     # one observation, first
            where[m[1]] = [m[2]]
        elif m := MOVED.match(line):
            assert where[m[1]][-1] == m[2] and m[3] != m[2], line
            where[m[1]].append(m[3])
    return where


def test_the_vocabulary_is_alfworlds_types():
    data = json.loads(resources.files("resolver.data").joinpath("alfworld", "types.json")
                      .read_text("utf-8"))
    assert len(data["objects"]) == 56 and len(data["receptacles"]) == 29
    assert {"apple", "mug", "knife", "spraybottle"} <= set(data["objects"])
    assert {"countertop", "cabinet", "fridge", "sinkbasin"} <= set(data["receptacles"])
    assert not set(data["objects"]) & set(data["receptacles"])
    assert all(w == w.lower() and w.isalpha() for w in data["objects"] + data["receptacles"])


@pytest.mark.parametrize("moves", [1, 2, 4, 8])
def test_revision_chains_have_l_moves_and_four_interleaved_distractor_chains(revision, moves):
    objects, receptacles = revision.vocabulary()
    cases = revision.revision_cases(42, 140, moves)
    assert len(cases) == 140
    for case in cases:
        chains = _chains(case.lines)
        assert len(case.lines) == 5 * (1 + moves) and len(chains) == 5
        assert all(len(c) == 1 + moves for c in chains.values())
        assert case.gold == chains[case.target][-1]
        assert case.question == f"Where is {case.target} now?"
        assert len({name.split()[0] for name in chains}) == 5          # distinct types
        for name, places in chains.items():
            kind, number = name.split()
            assert kind in objects and 1 <= int(number) <= 5
            assert all(p.split()[0] in receptacles for p in places)
    # interleaved: the target's lines are not all first
    assert any(not OBSERVED.match(c.lines[0]) or c.target not in c.lines[0] for c in cases)


@pytest.mark.parametrize("distractors", [0, 32])
def test_a_wrong_move_is_retracted_after_d_distractor_events(revision, distractors):
    for case in revision.retraction_cases(42, 140, distractors):
        assert len(case.lines) == 2 + distractors + 1
        first, move, *middle, last = case.lines
        assert OBSERVED.match(first).groups() == (case.target, case.gold)
        assert MOVED.match(move).groups() == (case.target, case.gold, case.wrong)
        assert RETRACT.match(last).groups() == (case.target, case.wrong)
        assert case.gold not in last                            # v1 is not restated
        assert len(middle) == distractors
        assert not any(_names(case.target, line) for line in middle)
        if distractors:
            assert len(_chains(middle)) == 4


def test_two_conflicting_reports_eight_distractors_then_a_check(revision):
    for case in revision.conflict_cases(42, 140):
        a, b, *middle = case.lines
        assert REPORT.match(a).groups() == (case.target, case.reported[0])
        assert REPORT.match(b).groups() == (case.target, case.reported[1])
        assert case.reported[0] != case.reported[1] and case.gold in case.reported
        assert len(middle) == 8 and not any(_names(case.target, line) for line in middle)
        assert case.check == f"Check: {case.target} is in {case.gold}."
    settled = [c.reported.index(c.gold) for c in revision.conflict_cases(42, 140)]
    assert 0 < sum(settled) < 140                               # either report may win


def test_the_same_seed_gives_the_same_cases(revision):
    one, two = revision.generate(42, 6), revision.generate(42, 6)
    assert one == two and revision.digest(one) == revision.digest(two)
    assert revision.digest(revision.generate(7, 6)) != revision.digest(one)
    assert {p: sorted(by) for p, by in one.items()} == {
        "revision": [1, 2, 4, 8], "retraction": [0, 32], "conflict": [8]}
    # a cell's cases do not depend on how many cells or cases come before it
    assert revision.generate(42, 3)["retraction"][32] == one["retraction"][32][:3]


def test_the_script_prints_the_published_figures_beside_factres(revision, capsys):
    assert revision.main(["--n", "2"]) == 0
    first = capsys.readouterr().out
    assert "| L | factres | commit (P-Mem) | raw top-10 |" in first
    assert re.search(r"^\| 2 \| [0-9.]+ \| 100\.0 \| 72\.9 \| 94\.3 \| 97\.9 \| 100\.0 \|$",
                     first, re.M)
    assert re.search(r"^\| factres \(Memory, text only\) \|( [0-9.]+ \|){5}$", first, re.M)
    assert "| raw top-10 (archival) | 97.9 | 92.0 | 6.6 | 1.5 | 100 |" in first
    assert "| P-Mem (contest path) | 100 | 100 | – | – | 97.9 |" in first
    # every line fed is counted, and what the memory reported is said
    fed = 2 * (5 * (2 + 3 + 5 + 9) + 3 + 35 + 10 + 1)
    assert f"lines fed: {fed:,};" in first
    assert revision.main(["--n", "2"]) == 0
    again = capsys.readouterr().out
    assert first.rsplit("\n(", 1)[0] == again.rsplit("\n(", 1)[0]      # the timing aside
