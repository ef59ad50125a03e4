"""The blind question sets' own reading of the FactConsolidation contexts (tests/data/blind_mh,
tests/data/blind_conf), shared by their checks.

Independent of the project on purpose: regexes built from the MQuAKE cloze templates, stdlib
only; it imports neither `resolver` nor `oracle` (it only reads their bundled data files), so a
blind set is checked against the contexts, never against the parser it is meant to test."""
from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FC = ROOT / "resolver" / "data" / "fc"
TEMPLATES = ROOT / "resolver" / "data" / "mquake" / "cloze_templates.json"
HEADER = "Here is a list of facts:"
LINE_RE = re.compile(r"^(\d+)\. (.+)$")
OFFICE_PREFIX = "P1308:"  # officeholder line "The <role> <entity> is X." as a hop from <entity>
HOP_KEYS = {"subject", "relation", "relation_sentence", "serial", "object",
            "several_versions", "version_serials"}


@functools.lru_cache(maxsize=None)
def patterns():
    """(relation id, compiled regex), the most specific template (most literal text) first."""
    templates = json.loads(TEMPLATES.read_text(encoding="utf-8"))
    pats = []
    for order, (rid, cloze) in enumerate(templates.items()):
        before, after = cloze.split("[X]")
        assert after.endswith(" __"), cloze
        middle = after[: -len(" __")]
        rx = re.compile("^" + re.escape(before) + "(.+?)" + re.escape(middle) + r" (.+)\.$")
        rid = "P131" if rid == "P276" else rid  # same template text
        pats.append((-(len(before) + len(middle)), order, rid, rx))
    pats.sort(key=lambda p: (p[0], p[1]))
    return [(rid, rx) for _, _, rid, rx in pats]


def parse_fact(body: str):
    """(relation id, subject, object) of a fact's text after its serial, or None."""
    for rid, rx in patterns():
        m = rx.match(body)
        if m:
            return rid, m.group(1), m.group(2)
    return None


def context_path(size: str) -> Path:
    return FC / f"factconsolidation_{size}_context.txt"


@functools.lru_cache(maxsize=None)
def context(size: str):
    """(text, {serial: line}, {serial: (rel, subj, obj)}, {(subj, rel): [serials, oldest first]})."""
    text = context_path(size).read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[0] == HEADER
    by_serial, facts, versions = {}, {}, defaultdict(list)
    for line in lines[1:]:
        if not line:
            continue
        m = LINE_RE.match(line)
        assert m, line
        serial = int(m.group(1))
        parsed = parse_fact(m.group(2))
        assert parsed is not None, f"no template fits: {line}"
        by_serial[serial] = line
        facts[serial] = parsed
        versions[(parsed[1], parsed[0])].append(serial)
    assert sorted(by_serial) == list(range(len(by_serial))), "fact numbers must run without gaps"
    return text, by_serial, facts, {k: sorted(v) for k, v in versions.items()}


def check_hops(qid: str, size: str, hops: list) -> str | None:
    """Re-derives a chain's hops from the context (each hop's line exists, is the latest version
    of its key, and its object is the next hop's subject); returns the last object."""
    _, by_serial, facts, versions = context(size)
    prev_obj = None
    for i, h in enumerate(hops):
        where = f"{qid} hop {i}"
        assert set(h) == HOP_KEYS, where
        serial = h["serial"]
        assert by_serial.get(serial) == h["relation_sentence"], \
            f"{where}: sentence is not line {serial}"
        rel, subj, obj = facts[serial]
        if h["relation"].startswith(OFFICE_PREFIX):
            role = h["relation"][len(OFFICE_PREFIX):]
            assert rel == "P1308", where
            assert subj == f"{role} {h['subject']}", where
        else:
            assert rel == h["relation"], f"{where}: relation {rel} != {h['relation']}"
            assert subj == h["subject"], where
        assert obj == h["object"], where
        if i:
            assert h["subject"] == prev_obj, f"{where}: does not chain"
        all_serials = versions[(subj, rel)]
        assert h["version_serials"] == all_serials, where
        assert h["several_versions"] == (len(all_serials) > 1), where
        assert serial == all_serials[-1], f"{where}: not the latest version of its key"
        prev_obj = obj
    return prev_obj
