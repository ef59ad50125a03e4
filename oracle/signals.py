"""Signals a store could read to tell when the gold wants an older version.

Hops: every hop of each question's best gold path (oracle.paths: from a plan entity when one
reaches the gold, shortest, fewest older versions). Group `older`: the hop takes an older version
of its key; control `latest`: the hop takes the latest (`latest_updated` narrows the control to
keys with several versions, where "latest" was a choice). For the fact f a hop takes:

- `object_degree`: facts naming f's object, as subject or object (any version);
- `object_has_facts`: f's object is the subject of some fact (1/0);
- `tied_back`: another fact links f's subject and object, either way round (1/0);
- `other_question_key`: another question of the same haystack may need this key, judged from
  question text only: the live rule and lexicon plans of the other questions, expanded over every
  version, touch it (1/0). Their gold is never read;
- `serial_distance`: the smallest serial distance from f to the path's other facts (none on
  one-hop paths);
- `fact_decile`: position of f in the fact list, by decile (0 = first tenth). It separates by
  construction (an older version always precedes its key's latest), so it is a sanity check,
  not a usable signal; `update_decile` is the real question;
- `update_decile`: position of the key's latest version (the update) by decile, keys with
  several versions only.

Separation per signal: AUC (probability that an older hop's value exceeds a control hop's, ties
count half) and a two-sided permutation test on the difference of means (PERMUTATIONS draws,
fixed SEED). A signal "separates" when p < ALPHA and |AUC - 0.5| >= 0.2."""
from __future__ import annotations

import numpy as np

from resolver.plan.plans import step_relations
from resolver.store.fact_store import FactStore, norm

from .paths import PathHop, QuestionPaths

SIGNALS = ("object_degree", "object_has_facts", "tied_back", "other_question_key",
           "serial_distance", "fact_decile", "update_decile")
PERMUTATIONS = 10000
SEED = 0
ALPHA = 0.05


def plan_keys(plan, store: FactStore) -> set[tuple[str, str]]:
    """Keys a plan may touch when followed over every version of every hop."""
    keys, frontier = set(), {norm(plan.entity)}
    for step in plan.chain:
        nxt = set()
        for entity in frontier:
            for rel in step_relations(step):
                versions = store.versions(entity, rel)
                if versions:
                    keys.add((entity, rel))
                    nxt.update(norm(v.object) for v in versions)
        frontier = nxt
    return keys


class OthersKeys:
    """The keys some other question of the same haystack may need: `key in others` holds when
    a question other than this one touches the key (counted once per question)."""

    def __init__(self, counts: dict[tuple[str, str], int], mine: set[tuple[str, str]]) -> None:
        self.counts, self.mine = counts, mine

    def __contains__(self, key: tuple[str, str]) -> bool:
        return self.counts.get(key, 0) - (key in self.mine) > 0


def hop_signals(hop: PathHop, path_serials: list[int], store: FactStore,
                position: dict[int, int], others_keys) -> dict:
    """`others_keys` answers `key in others_keys`: a set, or an `OthersKeys`."""
    f = hop.fact
    subj = norm(f.subject)
    n = len(store)
    degree = len(store.by_object(f.object)) + sum(len(v) for v in
                                                   store.relations_of(f.object).values())
    tied = any(g is not f and norm(g.subject) == subj for g in store.by_object(f.object)) or \
        any(norm(g.object) == subj for vs in store.relations_of(f.object).values() for g in vs)
    versions = store.versions(f.subject, f.relation)
    others = [abs(f.serial - s) for s in path_serials if s != f.serial]
    return {"object_degree": degree,
            "object_has_facts": int(store.is_subject(f.object)),
            "tied_back": int(tied),
            "other_question_key": int((subj, f.relation) in others_keys),
            "serial_distance": min(others) if others else None,
            "fact_decile": 10 * position[f.serial] // n,
            "update_decile": 10 * position[versions[-1].serial] // n if len(versions) > 1
            else None}


def auc(a: list[float], b: list[float]) -> float | None:
    """P(a value of `a` exceeds one of `b`), ties counting half. Counted here rather than
    taken from scipy.stats.mannwhitneyu (U over the number of pairs), which gives the same
    figure on every committed signal (tests/test_stats_agreement.py), because loading
    scipy.stats would add about a second to every `oracle signals`."""
    if not a or not b:
        return None
    x, y = np.asarray(a, float)[:, None], np.asarray(b, float)[None, :]
    return float(((x > y).sum() + 0.5 * (x == y).sum()) / (x.size * y.size))


def permutation_p(a: list[float], b: list[float]) -> float | None:
    """Two-sided permutation p of |mean(a) - mean(b)|: PERMUTATIONS shuffles from SEED,
    (hits + 1) / (PERMUTATIONS + 1). Kept by hand: the committed oracle-signals folders hold
    its p values, which scipy.stats.permutation_test (other draws) matches within Monte Carlo
    error (tests/test_stats_agreement.py)."""
    if not a or not b:
        return None
    rng = np.random.default_rng(SEED)
    pooled = np.asarray(a + b, float)
    observed = abs(np.mean(a) - np.mean(b))
    k = len(a)
    hits = 0
    for _ in range(PERMUTATIONS):
        rng.shuffle(pooled)
        if abs(pooled[:k].mean() - pooled[k:].mean()) >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (PERMUTATIONS + 1)


def _describe(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "mean": None, "median": None, "histogram": {}}
    hist: dict[str, int] = {}
    for v in values:
        hist[str(v)] = hist.get(str(v), 0) + 1
    return {"n": len(values), "mean": round(float(np.mean(values)), 6),
            "median": float(np.median(values)),
            "histogram": dict(sorted(hist.items(), key=lambda kv: float(kv[0])))}


def signals_report(question_paths: list[QuestionPaths], plan_sets, dataset) -> dict:
    """Per hop signals, their distributions per group and the separation of each signal."""
    keys_of: dict[str, set] = {}
    # A key belongs to one store: questions are counted per haystack, never across haystacks.
    askers: dict[str, dict[tuple[str, str], int]] = {}
    for qp in question_paths:
        store = dataset.haystack_of(qp.question).store
        keys = set()
        for ps in plan_sets:
            compiled = ps.plans.get(qp.question.qid)
            for plan in (compiled.plans if compiled else ()):
                keys |= plan_keys(plan, store)
        keys_of[qp.question.qid] = keys
        counts = askers.setdefault(qp.question.context_sha256, {})
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    hops = []
    contexts = {qp.question.qid: qp.question.context_sha256 for qp in question_paths}
    positions: dict[str, dict[int, int]] = {}
    for qp in question_paths:
        best = qp.best()
        if best is None:
            continue
        q = qp.question
        store = dataset.haystack_of(q).store
        if q.context_sha256 not in positions:
            positions[q.context_sha256] = {f.serial: i for i, f in enumerate(store)}
        position = positions[q.context_sha256]
        others = OthersKeys(askers[q.context_sha256], keys_of[q.qid])
        serials = [h.fact.serial for h in best.hops]
        for i, hop in enumerate(best.hops):
            group = "older" if hop.version > 0 else "latest"
            hops.append({"qid": q.qid, "hop": i, "group": group, "versions": hop.versions,
                         "version": hop.version, "fact": hop.to_json(),
                         "signals": hop_signals(hop, serials, store, position, others)})
    pooled = _separation(hops)
    # Each haystack on its own as well: a store reads only its own signals, and a file's figures
    # must not depend on which other files share the call.
    per_haystack = {}
    for sha in dict.fromkeys(qp.question.context_sha256 for qp in question_paths):
        mine_q = [qp.question for qp in question_paths if qp.question.context_sha256 == sha]
        qids = {q.qid for q in mine_q}
        mine = [h for h in hops if h["qid"] in qids]
        per_haystack[sha] = dict(_separation(mine), size=mine_q[0].size,
                                 sources=sorted({q.source for q in mine_q}))
    for h in hops:
        h["haystack"] = contexts[h["qid"]]
    return dict(pooled, permutations=PERMUTATIONS, seed=SEED, alpha=ALPHA,
                haystacks=len(per_haystack), per_haystack=per_haystack, hop_rows=hops)


def _separation(hops: list[dict]) -> dict:
    """Counts, each signal's distributions per group, AUC and p against each control group, and
    the signals that separate, over the given hops."""
    controls = {"latest": lambda h: h["group"] == "latest",
                "latest_updated": lambda h: h["group"] == "latest" and h["versions"] > 1}
    older = [h for h in hops if h["group"] == "older"]
    table = {}
    for name in SIGNALS:
        a = [h["signals"][name] for h in older if h["signals"][name] is not None]
        entry = {"older": _describe(a)}
        for cname, pick in controls.items():
            b = [h["signals"][name] for h in hops if pick(h) and h["signals"][name] is not None]
            area, p = auc(a, b), permutation_p(a, b)
            entry[cname] = _describe(b)
            entry[f"vs_{cname}"] = {
                "auc": None if area is None else round(area, 6),
                "p": None if p is None else round(p, 6),
                "separates": bool(area is not None and p is not None and p < ALPHA
                                  and abs(area - 0.5) >= 0.2)}
        table[name] = entry
    return {"hops": len(hops), "older_hops": len(older),
            "latest_hops": sum(1 for h in hops if h["group"] == "latest"),
            "latest_updated_hops": sum(1 for h in hops if controls["latest_updated"](h)),
            "signals": table,
            "separating": [n for n in SIGNALS if table[n]["vs_latest"]["separates"]
                           or table[n]["vs_latest_updated"]["separates"]]}


def signals_markdown(report: dict) -> str:
    from .report import md_table
    out = ["# Signals: hops whose gold takes an older version against hops taking the latest\n",
           f'{report["hops"]} hops on best gold paths: {report["older_hops"]} older, '
           f'{report["latest_hops"]} latest ({report["latest_updated_hops"]} of them on keys with '
           f'several versions). AUC = P(older > control), ties half; p = two-sided permutation '
           f'test on the difference of means ({report["permutations"]} draws, seed '
           f'{report["seed"]}). Separates: p < {report["alpha"]} and |AUC - 0.5| >= 0.2.\n']
    rows = []
    for name, e in report["signals"].items():
        rows.append([name, e["older"]["n"], e["older"]["mean"], e["latest"]["n"],
                     e["latest"]["mean"], e["vs_latest"]["auc"], e["vs_latest"]["p"],
                     e["latest_updated"]["mean"], e["vs_latest_updated"]["auc"],
                     e["vs_latest_updated"]["p"],
                     "yes" if e["vs_latest"]["separates"] or e["vs_latest_updated"]["separates"]
                     else "no"])
    out.append(md_table(["signal", "older n", "older mean", "latest n", "latest mean",
                         "AUC", "p", "latest-updated mean", "AUC (updated)", "p (updated)",
                         "separates"], rows))
    sep = report["separating"]
    several = len(report.get("per_haystack") or {}) > 1
    out.append("\n" + ("Separating signals" + (" (pooled over the haystacks)" if several else "")
                       + ": " + ", ".join(sep) if sep else
                       "No signal separates the groups at this sample size.") + "\n")
    if several:
        out.append("\n## Per haystack (each store on its own)\n")
        out.append(md_table(
            ["haystack", "size", "hops", "older", "signal", "AUC", "p", "AUC (updated)",
             "p (updated)", "separates"],
            [[sha[:12], h["size"], h["hops"], h["older_hops"], name,
              e["vs_latest"]["auc"], e["vs_latest"]["p"], e["vs_latest_updated"]["auc"],
              e["vs_latest_updated"]["p"], "yes" if name in h["separating"] else "no"]
             for sha, h in report["per_haystack"].items() for name, e in h["signals"].items()]))
    out.append("fact_decile separates by construction (an older version always comes before "
               "its key's latest), so it is a sanity check, not a signal a store could use. "
               f'With {report["older_hops"]} older hops, a signal that does not separate here '
               "may still separate on larger samples.\n")
    return "\n".join(out)


def analyse(data=()):
    """`factres oracle signals`."""
    from .paths import read_input
    from .report import Analysis, data_block, dataset_tag
    inp = read_input(data)
    report = signals_report(inp.question_paths, inp.plan_sets, inp.dataset)
    payload = dict(report, command="signals", data=data_block(inp.dataset),
                   plan_sets=[ps.set_id for ps in inp.plan_sets])
    return Analysis("signals", dataset_tag(inp.dataset), payload, signals_markdown(report))
