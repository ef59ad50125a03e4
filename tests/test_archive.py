"""The plan-set archive: write once, verify by sha256, refuse anything that does not match."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from resolver.errors import ArchiveError
from resolver.plan.archive import (
    check_set_id,
    derive_plan_set,
    list_plan_sets,
    load_plan_set,
    plans_root,
    verify_plan_set,
    write_plan_set,
)
from resolver.plan.plans import Compiled, Plan, PlanSet


def small_set(set_id: str = "demo") -> PlanSet:
    plans = {
        "q1": Compiled((Plan("Ann Vell", ("married_to", "born_in"), "city", "lexicon", "cue"),)),
        "q0": Compiled((Plan("Ann Vell", ("citizenship",), "country", "rule", "tpl"),
                        Plan("Ann Vell", ("born_in",), "city", "rule", "tpl2"))),
        "q2": Compiled((), "no entity named"),
    }
    shas = {q: hashlib.sha256(q.encode()).hexdigest() for q in plans}
    return PlanSet(set_id, {"planner": "lexicon", "model": None, "level": "relation"}, plans, shas)


def test_round_trip_keeps_plans_and_question_order(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    assert path == tmp_path / "demo"
    assert sorted(p.name for p in path.iterdir()) == ["SHA256SUMS", "manifest.json",
                                                      "plans.jsonl"]
    loaded = load_plan_set("demo", root=tmp_path)
    assert list(loaded.plans) == ["q1", "q0", "q2"]          # order of the set, not sorted
    assert loaded.plans == small_set().plans
    assert loaded.question_sha256 == small_set().question_sha256
    assert loaded.manifest["count"] == 3 and loaded.manifest["set_id"] == "demo"
    assert loaded.manifest["created"].endswith("Z")


def test_plans_file_is_deterministic_and_sums_are_sha256sum_format(tmp_path):
    a = write_plan_set(small_set("a"), root=tmp_path)
    b = write_plan_set(small_set("b"), root=tmp_path)
    assert (a / "plans.jsonl").read_bytes() == (b / "plans.jsonl").read_bytes()
    first = orjson.loads((a / "plans.jsonl").read_bytes().splitlines()[0])
    assert list(first) == ["plans", "qid", "question_sha256", "reason"]
    sums = (a / "SHA256SUMS").read_text().splitlines()
    for line, name in zip(sums, ["plans.jsonl", "manifest.json"]):
        digest = hashlib.sha256((a / name).read_bytes()).hexdigest()
        assert line == f"{digest}  {name}"


def test_an_existing_set_id_is_refused_and_left_alone(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    before = (path / "plans.jsonl").read_bytes()
    other = small_set()
    other.plans = {"q9": Compiled((Plan("X", ("born_in",)),))}
    with pytest.raises(ArchiveError, match="plan set 'demo' already exists at .*immutable"):
        write_plan_set(other, root=tmp_path)
    assert (path / "plans.jsonl").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]       # no temp folder left behind


@pytest.mark.parametrize("bad", ["", "Upper", "-lead", "a/b", "a b", ".hidden"])
def test_bad_set_ids_are_refused(bad):
    with pytest.raises(ArchiveError, match="bad plan set id"):
        check_set_id(bad)


def test_sound_set_verifies(tmp_path):
    write_plan_set(small_set(), root=tmp_path)
    assert verify_plan_set("demo", root=tmp_path) == []


def test_corrupted_plans_file_is_detected_and_refused(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    data = (path / "plans.jsonl").read_bytes().replace(b"born_in", b"died_in", 1)
    (path / "plans.jsonl").write_bytes(data)
    problems = verify_plan_set("demo", root=tmp_path)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path / 'plans.jsonl'}: sha256 mismatch")
    with pytest.raises(ArchiveError, match=r"failed verification: .*plans\.jsonl: sha256 "):
        load_plan_set("demo", root=tmp_path)


def test_missing_file_is_detected_and_refused(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    (path / "manifest.json").unlink()
    assert verify_plan_set("demo", root=tmp_path) == [f"{path / 'manifest.json'}: missing"]
    with pytest.raises(ArchiveError, match=r"manifest\.json: missing"):
        load_plan_set("demo", root=tmp_path)


def test_missing_sums_file_is_detected(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    (path / "SHA256SUMS").unlink()
    assert verify_plan_set("demo", root=tmp_path) == [f"{path / 'SHA256SUMS'}: missing"]


def test_edited_manifest_is_detected_and_refused(tmp_path):
    path = write_plan_set(small_set(), root=tmp_path)
    text = (path / "manifest.json").read_text().replace('"lexicon"', '"ollama:big"')
    (path / "manifest.json").write_text(text)
    assert verify_plan_set("demo", root=tmp_path)[0].startswith(
        f"{path / 'manifest.json'}: sha256 mismatch")
    with pytest.raises(ArchiveError, match=r"manifest\.json: sha256 mismatch"):
        load_plan_set(path)                         # by path as well as by id


def test_sums_rewritten_to_match_an_edit_are_still_caught(tmp_path):
    # Someone edits plans.jsonl and the sums file, but not the manifest's plans_sha256.
    path = write_plan_set(small_set(), root=tmp_path)
    body = (path / "plans.jsonl").read_bytes().replace(b"born_in", b"died_in", 1)
    (path / "plans.jsonl").write_bytes(body)
    sums = (path / "SHA256SUMS").read_text().splitlines()
    sums[0] = f"{hashlib.sha256(body).hexdigest()}  plans.jsonl"
    (path / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    assert verify_plan_set("demo", root=tmp_path) == [
        f"{path / 'manifest.json'}: plans_sha256 does not match plans.jsonl"]


def test_unknown_set_is_a_problem(tmp_path):
    assert verify_plan_set("nope", root=tmp_path) == [f"{tmp_path / 'nope'}: no such plan set"]
    with pytest.raises(ArchiveError, match="no plan set 'nope'"):
        load_plan_set("nope", root=tmp_path)


def test_list_reports_each_set_and_its_status(tmp_path):
    write_plan_set(small_set("b-set"), root=tmp_path)
    bad = write_plan_set(small_set("a-set"), root=tmp_path)
    (bad / "plans.jsonl").write_bytes(b"")
    listed = list_plan_sets(root=tmp_path)
    assert [(s["set_id"], s["ok"], s["count"]) for s in listed] == [("a-set", False, 3),
                                                                    ("b-set", True, 3)]


def test_root_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_PLANS", str(tmp_path / "elsewhere"))
    assert plans_root() == tmp_path / "elsewhere"
    assert write_plan_set(small_set()) == tmp_path / "elsewhere" / "demo"
    assert plans_root(tmp_path) == tmp_path


def test_derived_set_has_every_order_once(tmp_path):
    derived = derive_plan_set(small_set(), "demo-orders")
    chains = [p.chain for p in derived.plans["q1"].plans]
    assert chains == [("married_to", "born_in"), ("born_in", "married_to")]
    assert [p.compiler for p in derived.plans["q1"].plans] == ["lexicon",
                                                               "derived:order(lexicon)"]
    assert len(derived.plans["q0"].plans) == 2 and derived.plans["q2"].reason == "no entity named"
    assert derived.manifest["derived_from"] == "demo"
    path = write_plan_set(derived, root=tmp_path)
    assert load_plan_set(path).manifest["derivation"] == "order:all"


@pytest.mark.parametrize("set_id", ["rules-6k", "lexicon-6k", "lexicon-6k-orders"])
def test_committed_sets_verify_and_cover_the_bundled_questions(set_id, monkeypatch):
    from resolver.haystack import bundled_path, load
    from resolver.plan.archive import PLANS_DIR

    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    assert verify_plan_set(set_id) == []
    plan_set = load_plan_set(set_id)
    dataset, _gold = load([bundled_path()])
    assert list(plan_set.question_sha256) == [q.qid for q in dataset.questions]
    assert all(plan_set.question_sha256[q.qid] == hashlib.sha256(q.text.encode()).hexdigest()
               for q in dataset.questions)
    assert (PLANS_DIR / set_id / "manifest.json").is_file()


def test_a_non_editable_install_says_it_has_no_plan_archive(tmp_path):
    """A non-editable install (`pip install .`: the packages copied into site-packages, no
    checkout around them) never reads or writes site-packages/plans: a command that needs the
    archive says to set $FACTRES_PLANS or use a clone; with $FACTRES_PLANS it works."""
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    site = tmp_path / "site-packages"
    for package in ("resolver", "oracle"):
        shutil.copytree(root / package, site / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "FACTRES_PLANS"}
    env.update(PYTHONPATH=str(site), FACTRES_CACHE=str(tmp_path / "cache"))

    def factres(*args, **extra):
        return subprocess.run([sys.executable, "-c", "from oracle.cli import main; main()",
                               *args], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)
    assert factres("-h").returncode == 0
    for args in (("plans", "list"), ("plans", "verify", "rules-6k"),
                 ("plans", "derive", "rules-6k", "--order", "all", "--set-id", "x"),
                 ("run", "--plans", "rules-6k", "--results-dir", str(tmp_path / "r"))):
        done = factres(*args)
        assert done.returncode == 1, args
        assert done.stderr.startswith("Error: no plan archive: this factres is not installed "
                                      "from a checkout"), (args, done.stderr)
        assert "$FACTRES_PLANS" in done.stderr
    assert not (site / "plans").exists() and not (tmp_path / "r").exists()
    listed = factres("plans", "list", FACTRES_PLANS=str(root / "plans"))
    assert listed.returncode == 0 and "rules-6k" in listed.stdout
