"""MemoryAgentBench's result files as the harness writes them, record by record: the record's
fields and their order, the per-record metrics the harness computes (`exact_match`, `f1`,
`substring_exact_match`), the averaged metrics, and the file's name. Pure functions over rows
and configs; `exchange.export` joins them to a run folder (`factres export`), and
`result_files` reads the same format back.

Each record holds, in the harness's order: `output` (the prediction), `parsed_output` (the
harness's `parse_output`), `exact_match`, `f1`, `substring_exact_match` (`harness_metrics`: the
harness's definitions, checked against every record of the real files), `answer` (the gold),
`query` (the harness's instruction prompt around the question, `harness.prompt`,
knowledge-pool style, as its long-context and RAG agents ask), `query_id` (the question's index
in its row), `qa_pair_id`. Left out: `input_len`, `output_len` (a model tokenizer's counts),
`memory_construction_time`, `query_time_len` (timings factres does not record) and the ROUGE
scores (`harness_metrics` says why). `metrics` holds the same per-record values as parallel
lists; `averaged_metrics` their means in percent, as the harness computes them (numpy's mean
times 100).

A file is named as the harness names it:
`<sub_dataset>_<tag>_in<context_max_length>_size<generation_max_length>_shots<shots>_
max_samples<max_test_samples>_results.json`, each value from the file's `dataset_config` and a
value the config leaves out or null written "unknown", as the harness writes a null (the
pattern and the rendering of null read off the two real files in tests/data/mab-outputs/), and
laid out under `<DIR>/Conflict_Resolution/`."""
from __future__ import annotations

import json
import re
from collections import Counter
from typing import Iterable, Sequence

import resolver.escape as escape
from resolver.mab.exact_match import harness_score, normalize_answer, parse_output
from resolver.mab.harness import prompt

DATASET = "Conflict_Resolution"       # the harness's dataset (and folder) of FactConsolidation
FC_SOURCE = re.compile(r"factconsolidation_(sh|mh)_(\d+k)\Z")
METRICS = ("exact_match", "f1", "substring_exact_match")
UNKNOWN = "unknown"                   # how the harness's file names write a null


# ---- the harness's per-record metrics --------------------------------------------------------
# Here, not in exact_match.py: exact_match.py is part of every run's identity
# (identity.RESOLVER_FILES), and these metrics decide nothing a run records.
def exact_match(prediction: str, gold_answers: Iterable[str]) -> bool:
    """MemoryAgentBench's (HELMET's) `exact_match` of one output: some gold answer normalises to
    the normalised prediction. A bool, as the harness writes it."""
    pred = normalize_answer(prediction)
    return max((normalize_answer(g) == pred for g in gold_answers), default=False)


def token_f1(prediction: str, gold_answers: Iterable[str]) -> int | float:
    """MemoryAgentBench's (SQuAD's) `f1` of one output: the best over the gold answers of the F1
    of the normalised words in common. The integer 0 when no word is in common (as the harness
    writes it), else a float."""
    pred = normalize_answer(prediction).split()
    best: int | float = 0
    for gold in gold_answers:
        truth = normalize_answer(gold).split()
        same = sum((Counter(pred) & Counter(truth)).values())
        if same == 0:
            continue
        # SQuAD's arithmetic, step by step: another order can differ in the last bit
        precision = 1.0 * same / len(pred)
        recall = 1.0 * same / len(truth)
        best = max(best, (2 * precision * recall) / (precision + recall))
    return best


def harness_metrics(output: str, gold_answers: Sequence[str]) -> dict[str, bool | int | float]:
    """The per-record metrics a MemoryAgentBench result file holds that factres can compute as
    the harness does, in the harness's order and types: `exact_match`, `f1` and
    `substring_exact_match`, each the better of the raw output and `parse_output(output)`
    (tests/test_export.py checks every record of the two real result files, values and types).
    `substring_exact_match` is `harness_score`, the rule `factres score` reads them with. The
    ROUGE scores are not computed: the files' few non-trivial values cannot pin down the
    tokenizer and stemmer the harness uses."""
    parsed = parse_output(output)
    sub = bool(harness_score(output, gold_answers))
    em = exact_match(output, gold_answers)
    f1 = token_f1(output, gold_answers)
    # max(parsed, raw) in the harness's order: on a tie the parsed output's value (and type)
    em = max(exact_match(parsed, gold_answers), em)
    f1 = max(token_f1(parsed, gold_answers), f1)
    return {"exact_match": em, "f1": f1, "substring_exact_match": sub}


NAME_KEYS = ("sub_dataset", "tag", "context_max_length", "generation_max_length", "shots",
             "max_test_samples")
# What a value may not bring into a file name: a path separator (a folder, or a way out of
# --out), a run of dots ("..": the folder above), a control, line-separator or bidirectional
# character (escape.HIDDEN: a newline in a file name). Each is replaced, never kept.
_SEPARATORS = re.compile(r"[/\\]")
_DOTS = re.compile(r"\.{2,}")


def safe_part(text: str) -> str:
    """`text` as part of one file name: separators and hidden characters become "-", a run of
    dots one dot. The harness's own values ("factconsolidation_mh_6k", "unknown", "0",
    "100") come out unchanged."""
    text = escape.HIDDEN.sub("-", _SEPARATORS.sub("-", text))
    return _DOTS.sub(".", text)


def file_name(dataset_config: dict, changed: list[str] | None = None) -> str:
    """The harness's name of a result file, from its dataset config. A value that cannot be
    part of a file name is made safe (`safe_part`); each one changed is said in `changed`."""
    def value(key: str) -> str:
        v = dataset_config.get(key)
        raw = UNKNOWN if v is None else str(v)
        safe = safe_part(raw)
        if safe != raw and changed is not None:
            changed.append(f"dataset_config.{key} {json.dumps(v, ensure_ascii=False)} "
                           f"written as {json.dumps(safe, ensure_ascii=False)}")
        return safe
    return (f"{value('sub_dataset')}_{value('tag')}_in{value('context_max_length')}"
            f"_size{value('generation_max_length')}_shots{value('shots')}"
            f"_max_samples{value('max_test_samples')}_results.json")


def record(output: str, gold: Sequence[str], question: str, query_id: int, qid: str) -> dict:
    """One harness record, keys in the harness's order (less what factres cannot know)."""
    metrics = harness_metrics(output, gold)
    return {"output": output, "parsed_output": parse_output(output), **metrics,
            "answer": list(gold), "query": prompt(question), "query_id": query_id,
            "qa_pair_id": qid}


def averages(records: list[dict]) -> dict:
    """The averaged metrics of a file's records: numpy's mean times 100, as the harness computes
    them (None for a file with no records)."""
    import numpy as np  # lazily, as everywhere: the harness averages with numpy's mean
    return {m: (float(np.mean([r[m] for r in records]) * 100) if records else None)
            for m in METRICS}


def result_file(agent_config: dict, dataset_config: dict, records: list[dict],
                extra: dict | None = None) -> dict:
    """A whole result file: its config blocks, records, metric lists and averages, and `extra`
    top-level keys after them (factres's own provenance block)."""
    out = {"agent_config": agent_config, "dataset_config": dataset_config, "data": records,
           "metrics": {m: [r[m] for r in records] for m in METRICS},
           "averaged_metrics": averages(records)}
    out.update(extra or {})
    return out
