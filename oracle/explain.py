"""`factres explain RUN QID ...`: why a question of a run got its answer.

For each question: its confidence label and the reasons for it (runs made since issue 20), the
contested cells its winning path reads and what a history cue of the question read (issue 32:
in the trace only when there are some), how
the current reader reads it (base entities, cue spans with their
relations and weights, the asked type), the winning path hop by hop (subject, relation, object,
serial, fact line, version rank, ledger status, versions passed over), the best rival paths
with their score terms side by side, and, when the run has gold, whether the gold was among
the candidates and where, with the gold paths through the store (`oracle.paths`).

An imported run (`"kind": "imported"` in meta.json, written by `factres score`) has no
candidates: its prediction is set against the gold paths and the versions along them.

It reads gold, so it lives in oracle/. The reading is the current code's, not the run's (a run
made by older code may have been read otherwise); the paths and terms are the run's own. The EM
shown is recomputed from the prediction and the data's gold (the reader refuses a row whose own
em or gold disagrees), and a hop of the run's trace that is not a fact of the store is said to
be so: an edited file is never shown as the run's own. On the terminal every value is cut to
200 characters (`--json` has them whole)."""
from __future__ import annotations

from pathlib import Path

import resolver.escape as escape
from resolver.errors import InputError, clip
from resolver.haystack import Dataset, Gold
from resolver.mab.exact_match import harness_score, score_answer
from resolver.plan.question import read
from resolver.results.reader import candidate_of, read_run
from resolver.results.result_schema import IMPORTED_KIND, PREDICTIONS_FILE, RESOLVER_KIND
from resolver.search.path_search import fits_type
from resolver.store.fact_store import norm

from .gold import GoldMatcher, is_hit
from .paths import MAX_HOPS, find_paths

RIVALS = 5              # rival paths shown beside the winner
GOLD_PATHS = 3          # gold paths shown (the count is complete)
WIDTH = 100             # the plain text fits a terminal this wide


# ---- reading the run ----------------------------------------------------------------------
def explain(run_ref: str | Path, qids: list[str], results_dir: str | Path | None = None
            ) -> list[dict]:
    """One explanation per qid, in the order asked. Raises InputError for an unknown qid (with
    close ones), a resolver run whose traces.jsonl is missing or incomplete, or a run whose
    data cannot be read back as it was."""
    run = read_run(run_ref, results_dir, traces=True)
    by_qid = {r["qid"]: r for r in run.predictions}
    missing = [q for q in qids if q not in by_qid]
    if missing:
        import difflib
        close = difflib.get_close_matches(missing[0], sorted(by_qid), n=3)
        hint = f" (close: {', '.join(close)})" if close else ""
        raise InputError(f"question {missing[0]!r} is not in run {run.name}{hint}",
                         path=str(run.path / PREDICTIONS_FILE))
    dataset, gold = run.load_data()      # every question of the run is in it (checked)
    questions = {q.qid: q for q in dataset.questions}
    wanted = [questions[q] for q in qids]
    sub = Dataset(dataset.paths, dataset.files_sha256, wanted, dataset.haystacks)
    paths = {qp.question.qid: qp for qp in find_paths(sub, gold)}
    return [_explain_one(run.name, run.kind, run.meta, by_qid[q], run.traces.get(q),
                         questions[q], sub, gold, paths[q]) for q in qids]


def _recomputed_em(kind: str, prediction: str, golds: list[str]) -> int:
    """EM as the run's scoring rule gives it: the harness's for imported runs, the resolver
    run's (`score_answer`) otherwise."""
    score = harness_score if kind == IMPORTED_KIND else score_answer
    return score(prediction, tuple(golds))


def _explain_one(run_name, kind, meta, row, trace, question, dataset: Dataset, gold: Gold,
                 qp) -> dict:
    store = dataset.haystack_of(question).store
    reading = read(question.text, store)
    scored = row["em"] is not None and question.qid in gold
    golds = list(gold[question.qid]) if scored else None
    mode = (meta.get("config") or {}).get("mode") or "search"
    em = _recomputed_em(kind, row["prediction"], golds) if scored else None
    out = {"run": run_name, "kind": kind, "mode": mode, "system": meta.get("system"),
           "qid": question.qid,
           "source": question.source, "question": question.text,
           "prediction": row["prediction"],
           "resolver_answer": row.get("resolver_answer", row["prediction"]),
           "reason": row.get("reason", ""), "gold": golds, "em": em,
           "em_in_file": row["em"],
           "confidence": row.get("confidence") or (trace or {}).get("confidence"),
           "reading": _reading_json(reading)}
    if kind == RESOLVER_KIND:
        out.update(_candidates_json(trace, golds))
        out["not_in_store"] = _hops_not_in_store(trace, store)
        # what the ledger added (search.resolve's ledger_json): contested cells the winner
        # reads, and what a history cue of the question read; empty for most questions
        out["contests"] = (trace or {}).get("contests", [])
        out["history"] = (trace or {}).get("history")
    if scored:
        out["gold_paths"] = _gold_paths_json(qp, store)
        out["prediction_on_gold_paths"] = _prediction_on_paths(out["prediction"], qp, store)
    return out


def _in_store(hop: dict, store) -> bool:
    """Whether a trace hop is a fact of the store: the version it names (serial, line, text,
    and its place in the key's history), with its subject and object (a reverse hop runs from the fact's object to its subject)."""
    subject, obj = (hop["object"], hop["subject"]) if hop["reverse"] else \
        (hop["subject"], hop["object"])
    versions = store.versions(subject, hop["relation"])
    # version k is the k-th before the key's latest (audit V05: the store's history says which)
    return any(f.serial == hop["serial"] and f.line == hop["line"] and f.text == hop["text"]
               and norm(f.object) == norm(obj) and hop["version"] == len(versions) - 1 - i
               for i, f in enumerate(versions))


def _hops_not_in_store(trace: dict, store) -> list[str]:
    """The trace's hops (winner and candidates) that are no fact of the store, described."""
    out = []
    for c in ([trace["winner"]] if trace["winner"] else []) + trace["candidates"]:
        for h in c["hops"]:
            if not _in_store(h, store):
                out.append(f"{h['subject']} -{h['relation']}#{h['serial']}-> {h['object']} "
                           f"(line {h['line']}, version {h['version']})")
    return list(dict.fromkeys(out))


def _reading_json(reading) -> dict:
    return {"bases": list(reading.bases),
            "mentions": [{"names": list(m.names), "words": [m.start, m.end],
                          "subject": m.as_subject} for m in reading.mentions],
            "asked_type": reading.answer_type, "type_word": reading.type_word,
            "spans": [{"relation": s.relation, "cue": s.cue, "weight": s.weight,
                       "words": " ".join(reading.tokens[s.start:s.end]),
                       "start": s.start, "end": s.end}
                      for s in sorted(reading.spans, key=lambda s: (s.start, -s.weight,
                                                                   s.relation))]}


def _path_key(c) -> tuple:
    return tuple((h.relation, norm(h.object)) for h in c.hops) + (norm(c.answer),)


def _candidate_json(c, rank: int, golds) -> dict:
    return {"rank": rank, "plan_set": c.plan_set,
            "plan": c.plan.to_json() if c.plan else None,
            "relations": [h.relation for h in c.hops], "answer": c.answer,
            "score": round(c.score, 6), "fits_type": fits_type(c),
            "terms": [[k, round(v, 6)] for k, v in c.terms],
            "gold": is_hit(c.answer, golds) if golds is not None else None,
            "hops": [h.to_json() for h in c.hops]}


def _candidates_json(trace: dict, golds) -> dict:
    """The winner, the best RIVALS other paths (each path once, at its best rank), and where
    the gold is among all candidates."""
    cands = [candidate_of(c) for c in trace["candidates"]]
    winner_json = trace["winner"]
    winner = candidate_of(winner_json) if winner_json else None
    seen, ranked = set(), []
    again: dict[tuple, list] = {}     # a path found again (by another plan set): its ranks
    for rank, c in enumerate(cands, 1):
        if _path_key(c) not in seen:
            seen.add(_path_key(c))
            ranked.append((rank, c))
        else:
            again.setdefault(_path_key(c), []).append([rank, c.plan_set])
    out: dict = {"candidates": len(cands),
                 "winner": _candidate_json(winner, 1, golds) if winner else None}
    if winner is not None:
        out["winner"]["same_path"] = again.get(_path_key(winner), [])
    rivals = [(r, c) for r, c in ranked if winner is None or _path_key(c) != _path_key(winner)]
    out["rivals"] = [_candidate_json(c, r, golds) | {"same_path": again.get(_path_key(c), [])}
                     for r, c in rivals[:RIVALS]]
    if golds is not None:
        hits = [r for r, c in enumerate(cands, 1) if is_hit(c.answer, golds)]
        out["gold_among_candidates"] = bool(hits)
        out["gold_ranks"] = hits
    return out


def _gold_paths_json(qp, store) -> dict:
    shown = qp.shortest[:GOLD_PATHS] if qp.paths else []
    return {"count": len(qp.paths), "max_hops": MAX_HOPS,
            "all_latest": any(p.all_latest for p in qp.paths),
            "shortest": [dict(p.to_json(), statuses=[_status(store, h) for h in p.hops])
                         for p in shown]}


def _status(store, hop) -> str:
    return store.status(hop.fact) or ""


def _prediction_on_paths(prediction: str, qp, store) -> list[str]:
    """Where a wrong prediction sits on the gold paths: an entity the path passes through, or
    another version of a key the path reads (an older or a newer value)."""
    if not prediction:
        return []
    hit = GoldMatcher((prediction,))
    notes: list[str] = []
    for path in qp.shortest[:GOLD_PATHS]:
        for i, hop in enumerate(path.hops, 1):
            if i < len(path.hops) and hit(hop.target):
                short = len(path.hops) - i
                notes.append(f"where hop {i} of a gold path lands ({hop.fact.relation}): "
                             f"{short} hop{'s' if short > 1 else ''} short")
            for version in store.versions(hop.fact.subject, hop.fact.relation):
                if version is not hop.fact and hit(version.object):
                    notes.append(f"another version (serial {version.serial}) of the key hop "
                                 f"{i} of a gold path reads ({hop.fact.subject}, "
                                 f"{hop.fact.relation})")
    return sorted(set(notes))


# ---- plain text -----------------------------------------------------------------------------
def _fit(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    import textwrap
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent) or [indent]


def _for_terminal(value):
    """Every string of an explanation cut to CLIP characters (saying how many more there are:
    `--json` has them all) and escaped for the terminal (names, questions, fact lines and
    answers come from the data and the run): before any wrapping, so widths hold."""
    if isinstance(value, str):
        return escape.terminal(clip(value))
    if isinstance(value, dict):
        return {k: _for_terminal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_for_terminal(v) for v in value]
    return value


def render(explanations: list[dict]) -> str:
    """The explanations as plain text for a terminal, every line at most WIDTH columns (an
    escaped control character counts as the characters it is shown with)."""
    blocks = [_render_one(_for_terminal(e)) for e in explanations]
    return ("\n" + "=" * WIDTH + "\n\n").join(blocks)


def _render_one(e: dict) -> str:
    lines = _wrap(f"{e['qid']}  ({e['source']}, run {e['run']}"
                  + (f", imported from {e['system']}" if e["kind"] == IMPORTED_KIND else "")
                  + ")", "")
    lines += _wrap(f"Q: {e['question']}", "")
    answer = f"answer: {e['prediction'] or '(none)'}"
    if e.get("resolver_answer") and e["resolver_answer"] != e["prediction"]:
        answer += f"   (resolver said: {e['resolver_answer']})"
    if e["gold"] is not None:
        answer += f"   gold: {' | '.join(e['gold'])}   EM {e['em']}"
        if e["em_in_file"] != e["em"]:
            answer += f" (recomputed; predictions.jsonl says {e['em_in_file']}: edited?)"
    lines += _wrap(answer, "")
    if e.get("reason"):
        lines += _wrap(f"why unanswered: {e['reason']}", "")
    if e.get("confidence"):
        c = e["confidence"]
        lines += _wrap(f"confidence: {c['label']}"
                       + (f" ({'; '.join(c['reasons'])})" if c["reasons"] else ""), "")
    for c in e.get("contests") or []:
        lines += _wrap(f"contested: hop {c['hop']} reads {c['subject']} / {c['relation']}, "
                       f"{c['taken']!r} taken against " + ", ".join(
                           repr(v) for v in c["alternatives"])
                       + " (the ledger holds them open until a check or a resolve)", "")
    if e.get("history"):
        h = e["history"]
        lines += _wrap(f"history cue {h['cue']!r} ({h['kind']}): {h['note']}", "")
    lines += ["", "Reading (the current reader)"]
    lines += _render_reading(e["reading"])
    if e["kind"] == RESOLVER_KIND and e.get("mode") == "plain":
        lines += [""] + _render_winner(e.get("winner"), plain=True)
    elif e["kind"] == RESOLVER_KIND:
        lines += [""] + _render_winner(e.get("winner"))
        lines += [""] + _render_rivals(e.get("winner"), e.get("rivals", []))
    if e.get("not_in_store"):
        lines += [""] + _wrap(f"warning: {len(e['not_in_store'])} hop(s) of the run's trace are "
                              "no fact of the store (an edited traces.jsonl?): "
                              + "; ".join(e["not_in_store"]), "")
    if e["gold"] is not None:
        lines += [""] + _render_gold(e)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _render_reading(r: dict) -> list[str]:
    out = _wrap("base entities: " + (", ".join(r["bases"]) or "(none: no name in the question "
                                     "is the subject of a fact)"), "  ")
    out += _wrap(f"asked type: {r['asked_type']}"
                 + (f" (from \"{r['type_word']}\")" if r["type_word"] else ""), "  ")
    if not r["spans"]:
        return out + ["  cue spans: (none)"]
    out.append(f"  {'words':<30} {'relation':<22} {'weight':>6}  cue")
    for s in r["spans"]:
        out.append(f"  {_fit(s['words'], 30):<30} {s['relation']:<22} {s['weight']:>6.2f}  "
                   f"{_fit(s['cue'], 34)}")
    return out


def _chain(c: dict) -> str:
    return " > ".join(c["relations"])


def _render_winner(w: dict | None, plain: bool = False) -> list[str]:
    if w is None:
        return ["Winning path: none (no candidate completed)"]
    if plain:
        out = _wrap(f"Winning path (plain execution of the plans in order, latest versions, "
                    f"no score; plan set {w['plan_set']}): {_chain(w)}", "")
    else:
        out = _wrap(f"Winning path: {w['plan_set']}, score {w['score']:.3f}, "
                    f"{'of the asked type' if w['fits_type'] else 'NOT of the asked type'}: "
                    f"{_chain(w)}", "")
    out.append(f"  {'#':>2} {'subject':<20} {'relation':<19} {'object':<20} {'serial':>6} "
               f"{'line':>6} {'ver':>3} {'status':<11}")
    for i, h in enumerate(w["hops"], 1):
        out.append(f"  {i:>2} {_fit(h['subject'], 20):<20} {_fit(h['relation'], 19):<19} "
                   f"{_fit(h['object'], 20):<20} {h['serial']:>6} {h['line']:>6} "
                   f"{h['version']:>3} {_fit(h['status'], 11):<11}")
        out += _wrap(f"fact: {h['text']}" + ("  (followed object to subject)"
                                            if h["reverse"] else ""), "       ")
        if h["passed_over"]:
            passed = ", ".join(f"serial {s} (line {n})" for s, n in h["passed_over"])
            out += _wrap(f"versions passed over: {passed}", "       ")
    out += _wrap("ver: the version of its key the hop took (0 the latest, 1 the one before it, "
                 "...); status: that fact's status in the ledger (active: the key's current value; "
                 "superseded: a later serial replaced it).", "  ")
    return out


TERM_WIDTH = 40         # score term names, then one column per candidate (six fit)
COLUMN = 9


def _render_rivals(winner: dict | None, rivals: list[dict]) -> list[str]:
    if winner is None and not rivals:
        return ["Candidates: none"]
    shown = ([winner] if winner else []) + rivals
    others = f"the best {len(rivals)} other path" + ("s" if len(rivals) != 1 else "")
    out = [f"Candidates: {'the winner and ' if winner else ''}{others} (rank among all "
           "candidates)"]
    out.append(f"  {'col':>3} {'rank':>4} {'plan set':<14} {'answer':<20} {'score':>7} "
               f"{'type':<5} path")
    for col, c in enumerate(shown, 1):
        head = (f"  {'c' + str(col):>3} {c['rank']:>4} {_fit(c['plan_set'], 14):<14} "
                f"{_fit(c['answer'], 20):<20} {c['score']:>7.3f} "
                f"{'fits' if c['fits_type'] else 'no':<5} ")
        out.append(head + _fit(_chain(c), WIDTH - len(head)))
    names: list[str] = []
    for c in shown:
        for k, _ in c["terms"]:
            if k not in names:
                names.append(k)
    out.append("")
    out.append(f"  {'score term':<{TERM_WIDTH}}"
               + "".join(f"{'c' + str(i):>{COLUMN}}" for i in range(1, len(shown) + 1)))
    for name in names:
        cells = []
        for c in shown:
            values = [v for k, v in c["terms"] if k == name]
            cells.append(f"{sum(values):>{COLUMN}.2f}" if values else f"{'·':>{COLUMN}}")
        out.append(f"  {_fit(name, TERM_WIDTH):<{TERM_WIDTH}}" + "".join(cells))
    out.append(f"  {'total':<{TERM_WIDTH}}"
               + "".join(f"{c['score']:>{COLUMN}.2f}" for c in shown))
    # a rank not in the table: the same path found again (by another plan set), shown once
    for col, c in enumerate(shown, 1):
        for rank, plan_set in c.get("same_path", []):
            out += _wrap(f"rank {rank}: the same path as c{col}, found again by plan set "
                         f"{plan_set} (each path is shown once, at its best rank)", "  ")
    return out


def _render_gold(e: dict) -> list[str]:
    out = ["Gold"]
    if e["kind"] == RESOLVER_KIND:
        ranks = e.get("gold_ranks", [])
        if e.get("winner") and e["winner"]["gold"]:
            out.append("  the winner reaches the gold")
        elif ranks:
            out += _wrap(f"gold reached by {len(ranks)} of {e['candidates']} candidates "
                         f"(ranks {', '.join(map(str, ranks[:10]))}): a selection error", "  ")
        else:
            out += _wrap(f"no candidate of the {e['candidates']} reaches the gold", "  ")
    gp = e["gold_paths"]
    if not gp["count"]:
        out += _wrap(f"no gold path (any version, up to {gp['max_hops']} hops) from the "
                     "entities the question names", "  ")
    else:
        out += _wrap(f"{gp['count']} gold path(s); "
                     + ("one takes the latest version at every hop"
                        if gp["all_latest"] else "every one needs an older version somewhere")
                     + "; the shortest:", "  ")
        for p in gp["shortest"]:
            steps = [p["start"]]
            for h, status in zip(p["hops"], p["statuses"]):
                target = h["subject"] if h["reverse"] else h["object"]
                steps.append(f"-{h['relation']}#{h['serial']}"
                             f"{'' if h['version'] == 0 else ' v-' + str(h['version'])}"
                             f" ({status})-> {target}")
            out += _wrap(" ".join(steps) + f"   [{p['pattern']}]", "    ")
        out += _wrap("#N: the fact's serial; [ ]: per hop, L the latest version of its key, "
                     "On an older one (O1 the version before the latest, ...); v-N after a "
                     "serial: that older version.", "  ")
    for note in e.get("prediction_on_gold_paths", []):
        out += _wrap(f"the prediction is {note}", "  ")
    return out
