"""Seeded synthetic FactConsolidation-style question rows for a bundled context.

    python benchmarks/synthetic.py --size 32k|64k|262k|6k [--seed 0] [--out DIR]

writes DIR/synthetic_<size>.json = {"data": [sh_row, mh_row]} (Hugging Face row layout) and
DIR/synthetic_<size>.chains.jsonl (one line per question: the chain of (key, version) hops the gold
follows). Stdlib only; it reads the data files directly and imports nothing from the project
(see benchmarks/SYNTHETIC.md).

Parse: every fact line "N. <sentence>" is matched against the 44 MQuAKE cloze templates
(sentence = cloze.replace("[X]", subject).replace(" __", "") + " " + object + "."); the most
specific template wins (most literal characters), so the generic "The [X] is __" (P1308) and
"[X] is located in __" (P131/P276) only take lines that nothing more specific fits. P131 and P276
have the same cloze and the same question, so they are one relation here, reported as "P131".
A line that fits no template, or fits two different ways at the best specificity, is an error.

Versions: a key is (subject, relation); its versions are its facts, oldest serial first; the
latest one wins in the benchmark, and version_rank 0 is the latest, 1 the one before, ...
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "resolver" / "data"
FC_DIR = DATA / "fc"
MQUAKE_DIR = DATA / "mquake"
SIZES = ("6k", "32k", "64k", "262k")
HEADER = "Here is a list of facts:"

# Share of hops (single-hop questions and multi-hop hops together) whose gold follows an older
# version; the rest follow the latest.
TARGET_OLDER = 0.20
# Hop counts of the multi-hop row: 2, 3, 4 hops in these proportions.
HOP_MIX = ((2, 0.40), (3, 0.35), (4, 0.25))
# Share of multi-hop chains whose first hop reuses a key an earlier chain used, at another version.
P_ANCHOR = 0.25
# Share of single-hop questions that ask a key a multi-hop chain used, at another version.
SH_CONTEST_SHARE = 0.25
# Share of the other single-hop questions drawn from keys with several versions.
SH_MULTI_SHARE = 0.6

# Same cloze, same question: one relation.
CANONICAL = {"P276": "P131"}

# Inner hops of a multi-hop question: the object of (subject [X], relation) as a noun phrase,
# written from the cloze/question templates (one phrasing per relation).
NOUN_PHRASES = {
    "P17": "the country that [X] is located in",
    "P19": "the city where [X] was born",
    "P20": "the city where [X] died",
    "P26": "the spouse of [X]",
    "P30": "the continent that [X] is located in",
    "P36": "the capital of [X]",
    "P40": "the child of [X]",
    "P50": "the author of [X]",
    "P69": "the university where [X] was educated",
    "P106": "the field that [X] works in",
    "P112": "the founder of [X]",
    "P127": "the owner of [X]",
    "P131": "the place where [X] is located",
    "P136": "the type of music that [X] plays",
    "P159": "the city where the headquarters of [X] is located",
    "P170": "the creator of [X]",
    "P175": "the performer of [X]",
    "P176": "the company that produced [X]",
    "P264": "the music label that represents [X]",
    "P276": "the place where [X] is located",
    "P407": "the language that [X] was written in",
    "P413": "the position that [X] plays",
    "P495": "the country where [X] was created",
    "P740": "the city where [X] was founded",
    "P800": "the thing that [X] is famous for",
    "P364": "the original language of [X]",
    "P1412": "the language that [X] speaks",
    "P27": "the country of citizenship of [X]",
    "P937": "the city where [X] worked",
    "P37": "the official language of [X]",
    "P140": "the religion that [X] is affiliated with",
    "P178": "the developer of [X]",
    "P108": "the employer of [X]",
    "P641": "the sport that [X] is associated with",
    "P190": "the twinned administrative body of [X]",
    "P463": "the organization that [X] is a member of",
    "P449": "the original broadcaster of [X]",
    "P35": "the current head of state in [X]",
    "P286": "the head coach of [X]",
    "P1308": "the [X]",
    "P488": "the chairperson of [X]",
    "P169": "the chief executive officer of [X]",
    "P1037": "the director of [X]",
    "P6": "the current head of the government of [X]",
}
# Last hop of a multi-hop question: the MQuAKE question template with [X] = the inner noun
# phrase, except where that substitution reads badly ("Who is the X of Y's child?",
# "the current head of the the ... government").
MH_QUESTION_OVERRIDES = {
    "P40": "Who is the child of [X]?",
    "P6": "What is the name of the current head of the government of [X]?",
}
# "The [X] is __": its subject is an office ("President of Azerbaijan"), never an object, and
# "the the ..." would not read; it only ever starts a chain.
FIRST_HOP_ONLY = frozenset({"P1308"})


class ParseError(ValueError):
    pass


@dataclass
class Store:
    """The parsed context: facts by serial and versions by key."""

    facts: list  # serial -> (subject, relation, object)
    versions: dict  # (subject, relation) -> [serial, ...] oldest first
    by_subject: dict  # subject -> [(subject, relation), ...] in relation order
    stats: dict = field(default_factory=dict)

    def object_at(self, key, rank):
        serials = self.versions[key]
        return self.facts[serials[len(serials) - 1 - rank]][2]


def load_templates():
    cloze = json.loads((MQUAKE_DIR / "cloze_templates.json").read_text("utf-8"))
    questions = json.loads((MQUAKE_DIR / "question_templates.json").read_text("utf-8"))
    missing = set(cloze) ^ set(NOUN_PHRASES)
    if missing or set(cloze) != set(questions):
        raise RuntimeError(f"template relations disagree: {sorted(missing)}")
    return cloze, questions


def load_context(size):
    """The context text of a bundled size, byte-identical to the file's."""
    if size == "6k":
        return json.loads((FC_DIR / "factconsolidation_6k.json").read_text("utf-8"))["data"][0]["context"]
    return (FC_DIR / f"factconsolidation_{size}_context.txt").read_text("utf-8")


def _matchers(cloze):
    """(specificity, relation, prefix, middle) per template, most specific first."""
    out = []
    for rel, tpl in cloze.items():
        prefix, rest = tpl.split("[X]")
        if not rest.endswith(" __"):
            raise RuntimeError(f"{rel}: cloze {tpl!r} does not end with ' __'")
        middle = rest[: -len(" __")] + " "
        out.append((len(prefix) + len(middle), rel, prefix, middle))
    out.sort(key=lambda m: (-m[0], m[1]))
    return out


def parse_sentence(sentence, matchers):
    """All (relation, subject, object) readings of one fact sentence at the best specificity."""
    if not sentence.endswith("."):
        return []
    found, best = [], None
    for spec, rel, prefix, middle in matchers:
        if best is not None and spec < best:
            break
        if not sentence.startswith(prefix):
            continue
        body = sentence[len(prefix):-1]
        i = body.find(middle, 1)
        while i != -1:
            subj, obj = body[:i], body[i + len(middle):]
            if obj:
                found.append((CANONICAL.get(rel, rel), subj, obj))
                best = spec
            i = body.find(middle, i + 1)
    return sorted(set(found))


def parse_context(text, cloze=None):
    """Parse a context into a Store; raise ParseError listing every line it cannot place."""
    if cloze is None:
        cloze, _ = load_templates()
    matchers = _matchers(cloze)
    lines = text.split("\n")
    if lines[0] != HEADER:
        raise ParseError(f"context does not start with {HEADER!r}")
    if lines[-1] == "":
        lines.pop()
    facts, bad, ambiguous = [], [], []
    versions = defaultdict(list)
    for serial, line in enumerate(lines[1:]):
        num, sep, sentence = line.partition(". ")
        if not sep or num != str(serial):
            bad.append((serial + 1, line, "numbering"))
            facts.append(None)
            continue
        readings = parse_sentence(sentence, matchers)
        if not readings:
            bad.append((serial + 1, line, "no template"))
            facts.append(None)
            continue
        if len(readings) > 1:
            ambiguous.append((serial + 1, line, readings))
            facts.append(None)
            continue
        rel, subj, obj = readings[0]
        facts.append((subj, rel, obj))
        versions[(subj, rel)].append(serial)
    if bad or ambiguous:
        msg = [f"{len(bad)} unparsed and {len(ambiguous)} ambiguous fact lines:"]
        msg += [f"  line {n} ({why}): {line!r}" for n, line, why in bad[:50]]
        msg += [f"  line {n} (ambiguous {r}): {line!r}" for n, line, r in ambiguous[:50]]
        raise ParseError("\n".join(msg))
    by_subject = defaultdict(list)
    for key in sorted(versions):
        by_subject[key[0]].append(key)
    n_versions = defaultdict(int)
    for serials in versions.values():
        n_versions[len(serials)] += 1
    stats = {
        "fact_lines": len(facts),
        "unparsed": 0,
        "keys": len(versions),
        "keys_by_versions": dict(sorted(n_versions.items())),
        "relations": len({r for _, r in versions}),
    }
    return Store(facts, dict(versions), dict(by_subject), stats)


# --------------------------------------------------------------------------- generation


class _Gen:
    def __init__(self, store, rng, templates):
        self.s = store
        self.rng = rng
        self.templates = templates
        self.hops = 0
        self.older = 0
        self.used = {}  # key -> set of ranks used by multi-hop chains
        self.used_order = []  # (key, rank) in first-use order, multi-version keys only
        # reach[k]: subjects from which a k-hop chain exists that may stand after a first hop
        # (no FIRST_HOP_ONLY relation; cycles ignored, the walk rejects them).
        later = [(k, s) for k, s in store.versions.items() if k[1] not in FIRST_HOP_ONLY]
        reach = [None, {k[0] for k, _ in later}]
        for k in range(2, 5):
            reach.append({key[0] for key, serials in later
                          if any(store.facts[x][2] in reach[k - 1] for x in serials)})
        self.reach = reach
        # starts[k]: subjects from which a k-hop chain can begin (any relation first).
        self.starts = {1: sorted(store.by_subject)}
        for k in range(2, 5):
            self.starts[k] = sorted({key[0] for key, serials in store.versions.items()
                                     if any(store.facts[x][2] in reach[k - 1] for x in serials)})

    def _prefer_older(self):
        deficit = TARGET_OLDER * (self.hops + 1) - self.older
        return self.rng.random() < (0.6 if deficit > 0 else 0.03)

    def _rank_order(self, key):
        n = len(self.s.versions[key])
        if n == 1:
            return [0]
        older = list(range(1, n))
        self.rng.shuffle(older)
        return older + [0] if self._prefer_older() else [0] + older

    def _hop(self, key, rank):
        serials = self.s.versions[key]
        serial = serials[len(serials) - 1 - rank]
        subj, rel, obj = self.s.facts[serial]
        return {
            "subject": subj,
            "relation": rel,
            "serial": serial,
            "object": obj,
            "version_rank": rank,
            "version_serials": list(serials),
        }

    def _walk(self, subject, remaining, visited, first, budget):
        """A random chain of `remaining` hops from `subject` (no subject visited twice)."""
        keys = [k for k in self.s.by_subject.get(subject, ()) if first or k[1] not in FIRST_HOP_ONLY]
        self.rng.shuffle(keys)
        for key in keys:
            for rank in self._rank_order(key):
                if budget[0] <= 0:
                    return None
                budget[0] -= 1
                obj = self.s.object_at(key, rank)
                if obj in visited:
                    continue
                if remaining == 1:
                    return [(key, rank)]
                if obj not in self.reach[remaining - 1]:
                    continue
                rest = self._walk(obj, remaining - 1, visited | {obj}, False, budget)
                if rest is not None:
                    return [(key, rank)] + rest
        return None

    def _commit(self, path, record_use):
        for key, rank in path:
            self.hops += 1
            self.older += rank > 0
            if record_use and len(self.s.versions[key]) > 1:
                ranks = self.used.setdefault(key, set())
                if rank not in ranks:
                    ranks.add(rank)
                    self.used_order.append((key, rank))
        return [self._hop(k, r) for k, r in path]

    def chain(self, n, taken):
        """One n-hop chain whose question text is not in `taken`."""
        for attempt in range(200):
            path = None
            if self.used_order and self.rng.random() < P_ANCHOR:
                key, used_rank = self.rng.choice(self.used_order)
                others = [r for r in range(len(self.s.versions[key])) if r != used_rank]
                rank = self.rng.choice(others)
                obj = self.s.object_at(key, rank)
                if (n == 1 or obj in self.reach[n - 1]) and obj != key[0]:
                    rest = [] if n == 1 else self._walk(obj, n - 1, {key[0], obj}, False, [400])
                    if rest is not None:
                        path = [(key, rank)] + rest
            if path is None:
                start = self.rng.choice(self.starts[n])
                path = self._walk(start, n, {start}, True, [400])
            if path is None:
                continue
            question = mh_question([(k[0], k[1]) for k, _ in path], self.templates)
            if question in taken:
                continue
            return question, self._commit(path, True)
        raise RuntimeError(f"could not build a {n}-hop chain in 200 attempts")


def sh_question(subject, rel, templates):
    return templates[rel].replace("[X]", subject)


def mh_question(keys, templates):
    """keys: [(subject, relation), ...] along the chain; the first subject is a name."""
    phrase = keys[0][0]
    for _, rel in keys[:-1]:
        phrase = NOUN_PHRASES[rel].replace("[X]", phrase)
    last = keys[-1][1]
    return MH_QUESTION_OVERRIDES.get(last, templates[last]).replace("[X]", phrase)


def hop_counts(n_mh):
    counts = [round(share * n_mh) for _, share in HOP_MIX[:-1]]
    counts.append(n_mh - sum(counts))
    return [n for (n, _), c in zip(HOP_MIX, counts) for _ in range(c)]


def generate_with_chains(context_text, size_tag, seed=0, n_sh=100, n_mh=100):
    """(rows, chains): rows = [sh_row, mh_row]; chains = one record per question (SH first)."""
    cloze, templates = load_templates()
    store = parse_context(context_text, cloze)
    rng = random.Random(seed)
    gen = _Gen(store, rng, templates)

    # Multi-hop first, so single-hop questions can contest the keys the chains use.
    plan = hop_counts(n_mh)
    rng.shuffle(plan)
    mh, taken = [], set()
    for n in plan:
        question, hops = gen.chain(n, taken)
        taken.add(question)
        mh.append((question, hops))

    # Single-hop: some ask a chain's key at another version, the rest are drawn at random.
    sh, asked = [], set()
    contest = []
    for key, rank in gen.used_order:
        unused = [r for r in range(len(store.versions[key])) if r not in gen.used[key]]
        if unused and key not in {k for k, _ in contest}:
            contest.append((key, unused))
    n_contest = min(len(contest), round(SH_CONTEST_SHARE * n_sh))
    for key, unused in rng.sample(contest, n_contest):
        sh.append(gen._commit([(key, rng.choice(unused))], False))
        asked.add(key)
    all_keys = sorted(store.versions)
    multi_keys = [k for k in all_keys if len(store.versions[k]) > 1]
    while len(sh) < n_sh:
        pool = multi_keys if multi_keys and rng.random() < SH_MULTI_SHARE else all_keys
        key = rng.choice(pool)
        if key in asked:
            if len(asked) >= len(all_keys):
                raise RuntimeError("not enough keys for the single-hop questions")
            continue
        asked.add(key)
        sh.append(gen._commit([(key, gen._rank_order(key)[0])], False))
    rng.shuffle(sh)

    rows, chains = [], []
    for kind, items in (("sh", [(sh_question(h[0]["subject"], h[0]["relation"], templates), h) for h in sh]),
                        ("mh", mh)):
        source = f"synthetic_{kind}_{size_tag}"
        qids = [f"{source}_no{i}" for i in range(len(items))]
        rows.append({
            "context": context_text,
            "questions": [q for q, _ in items],
            "answers": [[hops[-1]["object"]] for _, hops in items],
            "metadata": {"source": source, "qa_pair_ids": qids},
        })
        for qid, (question, hops) in zip(qids, items):
            chains.append({
                "qid": qid,
                "question": question,
                "gold": hops[-1]["object"],
                "n_hops": len(hops),
                "hops": hops,
            })
    return rows, chains


def generate(context_text, size_tag, seed=0, n_sh=100, n_mh=100):
    """[sh_row, mh_row] in the Hugging Face layout, sharing the byte-identical context."""
    return generate_with_chains(context_text, size_tag, seed, n_sh, n_mh)[0]


# --------------------------------------------------------------------------- output & stats


def dumps_rows(rows):
    return json.dumps({"data": rows}, ensure_ascii=False) + "\n"


def dumps_chains(chains):
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chains)


def summarize(chains):
    """Older-version share, keys taken at several versions, and their components."""
    hops = [h for c in chains for h in c["hops"]]
    mh_hops = [h for c in chains if c["qid"].startswith("synthetic_mh") for h in c["hops"]]
    ranks = defaultdict(set)
    for h in hops:
        ranks[(h["subject"], h["relation"])].add(h["version_rank"])
    contested = {k for k, r in ranks.items() if len(r) > 1}
    # Keys linked by co-occurring in one question; components that hold a contested key.
    parent = {k: k for k in ranks}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for c in chains:
        keys = [(h["subject"], h["relation"]) for h in c["hops"]]
        for k in keys[1:]:
            parent[find(k)] = find(keys[0])
    comps = defaultdict(set)
    for k in ranks:
        comps[find(k)].add(k)
    hot = [len(v) for v in comps.values() if v & contested]
    return {
        "questions": len(chains),
        "hops": len(hops),
        "older_hops": sum(h["version_rank"] > 0 for h in hops),
        "older_share": round(sum(h["version_rank"] > 0 for h in hops) / max(1, len(hops)), 3),
        "mh_older_share": round(sum(h["version_rank"] > 0 for h in mh_hops) / max(1, len(mh_hops)), 3),
        "hop_mix": dict(sorted(_count(c["n_hops"] for c in chains).items())),
        "keys_used": len(ranks),
        "keys_at_several_versions": len(contested),
        "components_with_contest": len(hot),
        "components_with_contest_multi_key": sum(n > 1 for n in hot),
        "largest_component_with_contest": max(hot, default=0),
    }


def _count(items):
    out = defaultdict(int)
    for x in items:
        out[x] += 1
    return out


def write(size, out, seed=0, n_sh=100, n_mh=100):
    """Generate the rows of a bundled size and write synthetic_<size>.json and its
    .chains.jsonl into `out`; return (rows path, chains path, chains)."""
    rows, chains = generate_with_chains(load_context(size), size, seed, n_sh, n_mh)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / f"synthetic_{size}.json"
    chains_path = out / f"synthetic_{size}.chains.jsonl"
    rows_path.write_text(dumps_rows(rows), encoding="utf-8")
    chains_path.write_text(dumps_chains(chains), encoding="utf-8")
    return rows_path, chains_path, chains


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", required=True, choices=SIZES)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-sh", type=int, default=100)
    ap.add_argument("--n-mh", type=int, default=100)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows_path, chains_path, chains = write(args.size, args.out, args.seed, args.n_sh, args.n_mh)
    elapsed = time.perf_counter() - t0
    summary = {"size": args.size, "seed": args.seed, "generate_s": round(elapsed, 3), **summarize(chains)}
    print(json.dumps(summary, ensure_ascii=False))
    print(f"wrote {rows_path} and {chains_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
