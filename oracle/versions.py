"""Which versions the gold uses.

Single-hop: the gold fact is a one-hop gold path (from a plan entity when one reaches the gold,
else from any entity the question names); the question is classed by the version it takes:
`latest` (including keys with a single version), `first` (the oldest of a key with several
versions), `other` (in between) or `none` (no one-hop gold path). When several one-hop facts
match the gold, the most recent class wins (latest, then other, then first).

Multi-hop: over every gold path (from a plan entity when one reaches the gold, else from any
start), `latest` = some path takes the latest version at every hop, `first` = none does, but
some path takes the first version at every hop, `mix` = only paths mixing versions reach the
gold, `none` = no gold path. `latest_and_first` counts questions whose path is both (every key on
it has a single version)."""
from __future__ import annotations

from .paths import GoldPath, QuestionPaths

SH_CLASSES = ("latest", "other", "first", "none")
MH_CLASSES = ("latest", "first", "mix", "none")


def _pool(qp: QuestionPaths, hops: int | None = None) -> list[GoldPath]:
    pool = qp.from_plan() or qp.paths
    return [p for p in pool if hops is None or len(p.hops) == hops]


def single_hop_class(qp: QuestionPaths) -> tuple[str, GoldPath | None]:
    pool = _pool(qp, 1) or [p for p in qp.paths if len(p.hops) == 1]
    if not pool:
        return "none", None
    ranked = sorted(pool, key=lambda p: (SH_CLASSES.index(_sh_class(p)), p.sort_key()))
    return _sh_class(ranked[0]), ranked[0]


def _sh_class(path: GoldPath) -> str:
    hop = path.hops[0]
    if hop.version == 0:
        return "latest"
    return "first" if hop.is_first else "other"


def multi_hop_class(qp: QuestionPaths) -> tuple[str, bool]:
    """(class, latest_and_first)."""
    pool = _pool(qp)
    if not pool:
        return "none", False
    if any(p.all_latest for p in pool):
        return "latest", any(p.all_latest and p.all_first for p in pool)
    if any(p.all_first for p in pool):
        return "first", False
    return "mix", False


def versions_report(question_paths: list[QuestionPaths]) -> tuple[dict, list[dict]]:
    """(counts per source and class, one row per question)."""
    rows = []
    for qp in question_paths:
        q = qp.question
        row = {"qid": q.qid, "source": q.source, "kind": q.kind, "question": q.text,
               "gold": list(qp.golds)}
        if q.kind == "mh":
            cls, both = multi_hop_class(qp)
            row.update({"class": cls, "latest_and_first": both,
                        "paths": [p.to_json() for p in _pool(qp)[:10]]})
        else:
            cls, path = single_hop_class(qp)
            hop = path.hops[0] if path else None
            row.update({"class": cls, "versions": hop.versions if hop else None,
                        "version": hop.version if hop else None,
                        "fact": hop.to_json() if hop else None})
        rows.append(row)
    summary: dict[str, dict] = {}
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        kind = mine[0]["kind"]
        classes = MH_CLASSES if kind == "mh" else SH_CLASSES
        entry = {"kind": kind, "questions": len(mine),
                 "classes": {c: sum(1 for r in mine if r["class"] == c) for c in classes}}
        if kind == "mh":
            entry["latest_and_first"] = sum(1 for r in mine if r["latest_and_first"])
        else:
            entry["several_versions"] = sum(1 for r in mine if (r["versions"] or 0) > 1)
        summary[source] = entry
    return summary, rows


def versions_markdown(summary: dict, rows: list[dict]) -> str:
    from .report import md_table
    out = ["# Versions the gold uses\n",
           "Single-hop: the gold fact is the latest version of its key, the first (of several), "
           "another one, or there is no one-hop gold fact. Multi-hop: the gold is reachable "
           "with the latest version at every hop, else with the first at every hop, else only "
           "with a mix.\n"]
    sh = {s: v for s, v in summary.items() if v["kind"] != "mh"}
    mh = {s: v for s, v in summary.items() if v["kind"] == "mh"}
    if sh:
        out.append("## Single-hop\n")
        out.append(md_table(["source", "questions", "latest", "first", "other", "none",
                             "key has several versions"],
                            [[s, v["questions"], v["classes"]["latest"], v["classes"]["first"],
                              v["classes"]["other"], v["classes"]["none"],
                              v["several_versions"]] for s, v in sh.items()]))
    if mh:
        out.append("\n## Multi-hop\n")
        out.append(md_table(["source", "questions", "latest at every hop",
                             "(of which also first: single-version keys)", "first at every hop",
                             "only a mix", "no gold path"],
                            [[s, v["questions"], v["classes"]["latest"], v["latest_and_first"],
                              v["classes"]["first"], v["classes"]["mix"], v["classes"]["none"]]
                             for s, v in mh.items()]))
    odd = [r for r in rows if r["class"] != "latest"]
    if odd:
        out.append("\n## Questions whose gold is not the latest\n")
        out.append(md_table(["qid", "class", "question", "gold"],
                            [[r["qid"], r["class"], r["question"], "; ".join(r["gold"])]
                             for r in odd]))
    return "\n".join(out)


def analyse(data=()):
    """`factres oracle versions`."""
    from .paths import read_input
    from .report import Analysis, data_block, dataset_tag
    inp = read_input(data)
    summary, rows = versions_report(inp.question_paths)
    payload = {"command": "versions", "data": data_block(inp.dataset),
               "plan_sets": [ps.set_id for ps in inp.plan_sets], "summary": summary,
               "questions": rows}
    return Analysis("versions", dataset_tag(inp.dataset), payload,
                    versions_markdown(summary, rows))
