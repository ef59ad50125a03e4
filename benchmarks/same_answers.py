"""Proof that a change meant to keep behaviour keeps every answer and every trace, byte for byte.

    python benchmarks/same_answers.py write OUT      # predictions and traces of every case
    python benchmarks/same_answers.py compare A B    # exit 1 unless A and B are equal

`write` resolves each case below with the `resolver` package Python finds first, so the code
before a change is measured by putting its checkout first on the path (the script itself is
the same for both):

    git archive <before> | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before python benchmarks/same_answers.py write /tmp/answers-before
    python benchmarks/same_answers.py write /tmp/answers-after
    python benchmarks/same_answers.py compare /tmp/answers-before /tmp/answers-after

Cases (each one `factres run`, search and plain mode, except the own questions, which
tests/test_own_questions.py resolves question by question, as here):
- synthetic: the 600 seeded synthetic questions over the 32K, 64K and 262K contexts
  (benchmarks/synthetic.py, seed 0);
- blind: tests/data/blind_mh/ (185 multi-hop questions over 64K and 262K);
- own: tests/data/own_questions/ (multi-hop and single-hop, 32K, 64K and 262K);
- deep: the 262K context repeated 16 times and renumbered (the same keys, 48 versions deep),
  with the 262K synthetic questions: where the walk over older versions has the most to do;
- dev: the bundled 6K dev rows (tests/test_committed_runs.py covers these too).
Only predictions.jsonl and traces.jsonl are compared: meta.json holds times and code hashes."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic  # noqa: E402  (benchmarks/ is not a package)

FILES = ("predictions.jsonl", "traces.jsonl")
DEEP_REPEATS = 16


def repeated_context(text: str, repeats: int) -> str:
    """The context's fact lines `repeats` times over, renumbered from 0: every key gains
    `repeats` times its versions, in the same order."""
    lines = text.split("\n")
    header, facts = lines[0], [line for line in lines[1:] if line]
    out = [header]
    serial = 0
    for _ in range(repeats):
        for line in facts:
            out.append(f"{serial}. {line.split('. ', 1)[1]}")
            serial += 1
    return "\n".join(out) + "\n"


def _rows(folder: Path) -> dict[str, list[Path]]:
    paths = {}
    synth = []
    for size in ("32k", "64k", "262k"):
        rows_path, _, _ = synthetic.write(size, folder)
        synth.append(rows_path)
    paths["synthetic"] = synth
    paths["blind"] = [ROOT / "tests" / "data" / "blind_mh" / f"blind_{s}.json"
                      for s in ("64k", "262k")]
    rows = json.loads((folder / "synthetic_262k.json").read_text("utf-8"))["data"]
    deep = repeated_context(rows[0]["context"], DEEP_REPEATS)
    for row in rows:
        row["context"] = deep
        row["metadata"]["source"] = row["metadata"]["source"].replace("262k", "deep")
        row["metadata"]["qa_pair_ids"] = [q.replace("262k", "deep")
                                          for q in row["metadata"]["qa_pair_ids"]]
    deep_path = folder / "deep.json"
    deep_path.write_text(json.dumps({"data": rows}, ensure_ascii=False), "utf-8")
    paths["deep"] = [deep_path]
    paths["dev"] = []          # the bundled 6K dev rows
    return paths


def _own(out: Path) -> None:
    from resolver.haystack import BUNDLED, Question, bundled_path, load
    from resolver.plan.compile_lexicon import compile_question as lexicon_plans
    from resolver.plan.compile_rules import compile_question as rule_plans
    from resolver.search.resolve import resolve_question

    stores = {}
    predictions, traces = [], []
    for kind in ("mh", "sh"):
        lines = (ROOT / "tests" / "data" / "own_questions" / f"{kind}.txt").read_text("utf-8")
        for number, line in enumerate(lines.splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            size, _, _, text = (part.strip() for part in line.split("|"))
            if size not in stores:
                dataset, _ = load([bundled_path(BUNDLED[size])])
                stores[size] = next(iter(dataset.haystacks.values())).store
            store = stores[size]
            qid = f"own_{kind}_{number}"
            question = Question(qid, f"own_{kind}_{size}", 0, text, kind, size, "")
            compiled = [("live:rules", rule_plans(text, store)),
                        ("live:lexicon", lexicon_plans(text, store))]
            pred = resolve_question(question, store, compiled)
            predictions.append(json.dumps({"qid": qid, "answer": pred.answer},
                                          ensure_ascii=False, sort_keys=True))
            traces.append(json.dumps(pred.to_json(), ensure_ascii=False, sort_keys=True))
    folder = out / "own"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FILES[0]).write_text("\n".join(predictions) + "\n", "utf-8")
    (folder / FILES[1]).write_text("\n".join(traces) + "\n", "utf-8")


def write(out: Path, jobs: str | None = None) -> None:
    import resolver
    from resolver.run.config import RunConfig
    from resolver.run.runs import execute

    print(f"resolver from {Path(resolver.__file__).parent}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for case, paths in _rows(scratch / "rows").items():
            for mode in ("search", "plain"):
                run_id = f"{case}-{mode}"
                config = RunConfig(data=tuple(str(p) for p in paths), mode=mode)
                # --jobs: the run's workers (a tree before `jobs` existed takes none)
                more = {} if jobs is None else {"jobs": jobs if jobs == "auto" else int(jobs)}
                run = execute(config, results=scratch / "results", run_id=run_id, **more)
                (out / run_id).mkdir(parents=True, exist_ok=True)
                for name in FILES:
                    (out / run_id / name).write_bytes((run.path / name).read_bytes())
                print(f"wrote {out / run_id}", file=sys.stderr)
    _own(out)
    print(f"wrote {out / 'own'}", file=sys.stderr)


def compare(a: Path, b: Path) -> int:
    cases = sorted(p.name for p in a.iterdir() if p.is_dir())
    if cases != sorted(p.name for p in b.iterdir() if p.is_dir()):
        print(f"different cases: {cases} vs {sorted(p.name for p in b.iterdir())}")
        return 1
    differ = 0
    for case in cases:
        for name in FILES:
            left, right = (a / case / name).read_bytes(), (b / case / name).read_bytes()
            lines = left.count(b"\n")
            verdict = "identical" if left == right else "DIFFERENT"
            differ += left != right
            print(f"{case:<16} {name:<18} {lines:>5} lines  {len(left):>10} bytes  {verdict}")
    print("all identical" if not differ else f"{differ} files differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    w = sub.add_parser("write", help="write predictions and traces of every case into OUT")
    w.add_argument("out", type=Path)
    w.add_argument("--jobs", help="the runs' worker processes (auto or a number; default: "
                   "execute's own)")
    c = sub.add_parser("compare", help="compare two folders written by `write`")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.verb == "write":
        write(args.out, args.jobs)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
