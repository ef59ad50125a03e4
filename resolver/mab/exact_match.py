"""MemoryAgentBench's exact match, as its harness computes it: the answer normalisation, the
substring test the benchmark scores FactConsolidation with, and the harness's parsing of a raw
model output. Pure functions over strings: no gold file, no run folder.

`substring_exact_match`: the SQuAD normalisation (lowercase; delete every `string.punctuation`
character; the whole words a/an/the become a space; collapse whitespace), then 1 when some
normalised gold answer is a substring of the normalised prediction. Being a *substring* test, it
has two quirks reproduced rather than fixed: "Asian" scores 1 against gold "Asia", and a gold
that normalises to "" (say "The") is a substring of everything, so it scores 1 against any
prediction.

Every run's identity hashes this module (`run.identity.RESOLVER_FILES`): it decides the EM a run
records. The harness's other per-record metrics (`exact_match`, `f1`), which decide nothing a run
records, live in `result_records`."""
from __future__ import annotations

import re
import string
from typing import Iterable, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """MemoryAgentBench's (SQuAD's) normalisation, steps in its order: lower, remove punctuation
    (deleted, not replaced: "D.C." -> "dc"), articles -> " ", whitespace collapsed. Non-ASCII
    letters are kept as they are ("Zürich" -> "zürich")."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def substring_exact_match(prediction: str, gold_answers: Iterable[str]) -> int:
    """1 if some normalised gold answer is a substring of the normalised prediction, else 0.

    As in MemoryAgentBench, a gold that normalises to "" matches every prediction (score 1)."""
    pred = normalize_answer(prediction)
    return int(any(normalize_answer(g) in pred for g in gold_answers))


def score_answer(prediction: str, gold_answers: Sequence[str]) -> int:
    """EM of one run row: `substring_exact_match`, except that an unanswered question ("")
    scores 0 whatever its gold (the issue's rule; MemoryAgentBench never sees an empty answer
    from a model that always answers, so this only matters for an empty-normalising gold)."""
    if prediction == "":
        return 0
    return substring_exact_match(prediction, gold_answers)


# ---- the harness's answer parsing ------------------------------------------------------------
ANSWER_PREFIX = "Answer:"
# MemoryAgentBench's `parse_output` (from HELMET): the rest of the line after the first
# "Answer:" (any case), else the first line. `.` stops at "\n" only, so a CRLF output keeps its
# "\r" until the strip, as there.
_AFTER_PREFIX = re.compile(f"(?:{re.escape(ANSWER_PREFIX)})(.*)(?:\n|$)", re.IGNORECASE)
_FIRST_LINE = re.compile(r"(?:^)(.*)(?:\n|$)")
_LEADING_PREFIX = re.compile(f"^{re.escape(ANSWER_PREFIX)}", re.IGNORECASE)


def parse_output(output: str) -> str:
    """The harness's parsed answer of a raw model output: the text after "Answer:" to the end of
    that line, else the first line; stripped, and a repeated leading "Answer:" dropped (chat
    models echo it)."""
    for pattern in (_AFTER_PREFIX, _FIRST_LINE):
        match = pattern.search(output)
        if match is not None:
            return _LEADING_PREFIX.sub("", match[1].strip()).strip()
    return ""          # unreachable: the first-line pattern matches every string


def harness_score(output: str, gold_answers: Sequence[str]) -> int:
    """EM of an imported output as the MemoryAgentBench harness scores it: the better of the raw
    output and `parse_output(output)` (its `substring_exact_match` is a max over the two).

    Through `score_answer`, so an empty string scores 0 whatever its gold; the harness would
    score 1 there only for a gold that normalises to "" (no bundled row has one)."""
    return max(score_answer(output, gold_answers),
               score_answer(parse_output(output), gold_answers))
