"""The readout: a store's state for one question as short text for a language model to read, one
line per cell, the cells that matter most first, cut to a budget of characters.

A question's cells are the facts its paths touch (a `Prediction`: the winning path, then the
rival candidates in rank order), each once; then, per disclosure asked, the same cells'
`history` (the key's other versions a reader may take, newest first, each with where the rest of
the path leads from it), `alternatives` (the other parties of a contested key) and `support`
(the evidence lines). With no prediction, the cells are
the whole frontier; a question no path answers gets the frontier lines sharing its words. The
line format, the ranking and the budget's rules are in docs/readout.md; every field of a line is
escaped with `escape.readout`. It reads a store and a prediction only, so a run writes its
readout.jsonl from its own store and predictions, and `Memory.readout` calls it after a query.
No gold here."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import chain
from typing import Iterable, Iterator

import resolver.escape as escape
from resolver.errors import InputError
from resolver.search.candidates import Hop
from resolver.search.hops import latest_hops
from resolver.search.resolve import Prediction
from resolver.store.fact_store import FactStore, name_tokens, norm
from resolver.store.provenance import ACTIVE, CONTESTED, SUPERSEDED

HISTORY, ALTERNATIVES, SUPPORT = "history", "alternatives", "support"
DISCLOSURES = (HISTORY, ALTERNATIVES, SUPPORT)
QUESTION_BUDGET = 600          # characters, when a question is read out and no budget is given
CUT = "…"                      # ends the one line cut to a budget shorter than it
SHARES_WORDS = "shares words"  # marks the frontier lines read out for a question no path answers


@dataclass(frozen=True, slots=True)
class Cell:
    """One version of a key, as a line shows it: the fact as stored (a reverse hop's fact is
    its object's)."""
    subject: str
    relation: str
    value: str
    serial: int
    line: int
    text: str
    mark: str = ""             # why the line is there, when not a path's cell ("shares words")
    rest: tuple[str, ...] = () # the relations the cell's path goes on with after it
    taken: int = -1            # the hop's version (0: the key's latest), -1 when not known
    status: str = ""           # the version's ledger status as the hop read it ("": not known)

    @property
    def key(self) -> tuple[str, str]:
        return norm(self.subject), self.relation


def check(disclose, budget) -> tuple[tuple[str, ...], int | None]:
    """The disclosure modes (a name stands for itself; each kept once, in the order given) and
    the budget, checked: InputError for an unknown mode (naming the three) or a budget that is
    not a whole number of characters of at least 1."""
    modes = (disclose,) if isinstance(disclose, str) else disclose
    try:
        modes = tuple(modes)
    except TypeError:
        raise InputError(f"disclose must be mode names, not {type(disclose).__name__}",
                         expected=f"some of {', '.join(DISCLOSURES)}") from None
    for mode in modes:
        if mode not in DISCLOSURES:
            raise InputError(f"unknown disclosure mode {mode!r}",
                             expected=f"some of {', '.join(DISCLOSURES)}")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, int):
            raise InputError(f"a budget must be a whole number of characters, not "
                             f"{type(budget).__name__}", expected="an integer of at least 1")
        if budget < 1:
            raise InputError(f"a budget of {budget} characters", expected="at least 1")
    return tuple(dict.fromkeys(modes)), budget


def render(store: FactStore, prediction: Prediction | None = None, *,
           disclose: Iterable[str] | str = (), budget: int | None = None) -> str:
    """The readout of `prediction` over `store` (the store it was resolved on): its paths'
    cells, then the disclosures asked, cut to `budget` characters (default QUESTION_BUDGET).
    With no prediction, the whole frontier, cut only when a budget is given. A prediction with
    no path gives the frontier lines that share its question's words, marked."""
    modes, budget = check(disclose, budget)
    if prediction is None:
        cells = _frontier(store)
    else:
        budget = QUESTION_BUDGET if budget is None else budget
        cells = _path_cells(prediction) if prediction.winner is not None \
            else _sharing_words(store, prediction.question)
    return fit(_lines(store, cells, modes), budget)


def fit(lines: Iterable[str], budget: int | None) -> str:
    """The lines joined by line breaks, as many as fit whole in `budget` characters, in order
    (a cut keeps a prefix); when not even the first fits, it is cut to the budget and ends with
    CUT."""
    out: list[str] = []
    used = 0
    for text in lines:
        size = len(text) + (1 if out else 0)
        if budget is not None and used + size > budget:
            if not out:
                return text[:budget - len(CUT)] + CUT
            break
        out.append(text)
        used += size
    return "\n".join(out)


# ---- the cells ------------------------------------------------------------------------------
def _cell_of(hop: Hop, rest: tuple[str, ...] = ()) -> Cell:
    if hop.reverse:          # followed from the object: the fact is the object's
        return Cell(hop.object, hop.relation, hop.subject, hop.serial, hop.line, hop.text,
                    "", rest, hop.version, hop.status)
    return Cell(hop.subject, hop.relation, hop.object, hop.serial, hop.line, hop.text, "",
                rest, hop.version, hop.status)


def _path_cells(prediction: Prediction) -> list[Cell]:
    """The winner's cells in hop order, then each rival's new cells in rank order."""
    paths = (prediction.winner, *prediction.candidates)
    seen: set[tuple[int, int, str]] = set()      # a fact: its serial, line and relation
    out = []
    for path in paths:
        hops = path.hops
        for at, hop in enumerate(hops):
            mine = (hop.serial, hop.line, hop.relation)
            if mine not in seen:
                seen.add(mine)
                out.append(_cell_of(hop, tuple(h.relation for h in hops[at + 1:])))
    return out


def _frontier(store: FactStore) -> Iterator[Cell]:
    for subject, head in store.frontier():
        yield Cell(subject, head.key[1], head.value, head.serial, head.line, head.text,
                   taken=0, status=head.status)


def _sharing_words(store: FactStore, question: str) -> list[Cell]:
    """The frontier cells whose subject, relation or value share a word with the question, the
    rarer the words shared the earlier (each word weighs log(cells / cells holding it), so a
    word every line holds weighs nothing); ties in frontier order."""
    asked = set(name_tokens(question))
    if not asked:
        return []
    index = _word_index(store)
    total = len(index["cells"])
    weights = {w: math.log(total / len(index["holding"][w])) for w in asked
               if w in index["holding"]}
    scores: dict[int, float] = {}
    for word, weight in weights.items():
        if weight <= 0:
            continue
        for at in index["holding"][word]:
            scores[at] = scores.get(at, 0.0) + weight
    ranked = sorted(scores, key=lambda at: (-round(scores[at], 9), at))
    cells = index["cells"]
    return [replace(cells[at], mark=SHARES_WORDS) for at in ranked]


def _word_index(store: FactStore) -> dict:
    """The frontier's cells and, per word, the cells holding it: kept in the store's read
    cache (emptied when the store changes), since it reads every key."""
    cache = store.read_cache("readout-words")
    if "cells" not in cache:
        cells = list(_frontier(store))
        holding: dict[str, list[int]] = {}
        for at, cell in enumerate(cells):
            words = set(name_tokens(cell.subject)) | set(cell.relation.split("_")) \
                | set(name_tokens(cell.value))
            for word in words:
                holding.setdefault(word, []).append(at)
        cache["holding"], cache["cells"] = holding, cells
    return cache


# ---- the lines ------------------------------------------------------------------------------
def _lines(store: FactStore, cells: Iterable[Cell], modes: tuple[str, ...]) -> Iterator[str]:
    """Each cell's line, then per mode each cell's disclosed lines. Made as they are read: a cut
    stops the making (a key thousands of versions deep costs the lines that fit)."""
    lines = _Lines(store)
    if not modes:
        return (lines.cell(cell) for cell in cells)
    cells = list(cells)
    return chain((lines.cell(cell) for cell in cells),
                 *(lines.disclosed(cells, mode) for mode in modes))


def line(prefix: str, subject: str, relation: str, value: str) -> str:
    """One readout line: `[prefix] subject | relation = value`, the fields escaped."""
    return f"[{prefix}] {escape.readout(subject)} | {relation} = {escape.readout(value)}"


class _Lines:
    """The lines of one readout. A version is shown once: a disclosure passes over a version
    an earlier line showed (another cell of its key, another path's history), though history
    still follows the path on from it."""

    def __init__(self, store: FactStore) -> None:
        self.store, self.ledger = store, store.ledger
        self.shown: set[tuple] = set()
        self.supported: set[tuple] = set()

    def _new(self, key: tuple[str, str], serial: int, value: str) -> bool:
        """Whether the version is not shown yet (and from now on it is)."""
        mine = (key, serial, value)
        if mine in self.shown:
            return False
        self.shown.add(mine)
        return True

    def cell(self, cell: Cell) -> str:
        self._new(cell.key, cell.serial, cell.value)
        prefix = f"#{cell.serial}"
        if cell.mark:
            prefix += f" {cell.mark}"
        elif cell.taken == 0 and cell.status in (ACTIVE, CONTESTED):
            # the key's head, as the hop read it (from the same ledger)
            prefix += f" {CONTESTED}" if cell.status == CONTESTED else ""
        else:
            ledger = self.ledger
            ids = ledger.lineage_ids(cell.key)
            head = ids[0] if len(ids) else None
            vid = self._vid(cell, ids)
            if vid is not None and head is not None and vid != head:
                status = ledger.status(vid)
                prefix += f" {status}; current #{ledger.evidence(head).serial}" \
                    if status == SUPERSEDED else f" {status}"
            elif head is not None and ledger.status(head) == CONTESTED:
                prefix += f" {CONTESTED}"
        return line(prefix, cell.subject, cell.relation, cell.value)

    def disclosed(self, cells: list[Cell], mode: str) -> Iterator[str]:
        lines_of = {HISTORY: self.history, ALTERNATIVES: self.alternatives,
                    SUPPORT: self.support}[mode]
        for cell in cells:
            yield from lines_of(cell)

    def _vid(self, cell: Cell, ids) -> int | None:
        """The id among `ids` of the version the cell is (by its evidence), None if none."""
        evidence = self.ledger.evidence
        for vid in ids:
            ev = evidence(vid)
            if ev.line == cell.line and ev.serial == cell.serial:
                return vid
        return None

    def history(self, cell: Cell) -> Iterator[str]:
        """The key's versions a reader may take other than the cell's, newest first (open
        alternatives left to `alternatives`), each followed by where the rest of the cell's
        path leads from it (`onwards`)."""
        ledger = self.ledger
        ids = ledger.lineage_ids(cell.key)
        if len(ids) < 2:
            return
        open_ = {v.id for v in ledger.alternatives(cell.key)}
        head = ids[0]
        for vid in ids:
            if vid in open_:
                continue
            ev = ledger.evidence(vid)
            if ev.line == cell.line and ev.serial == cell.serial:
                continue
            value = ledger.value(vid)
            if self._new(cell.key, ev.serial, value):
                kind = "current" if vid == head else HISTORY
                yield line(f"#{ev.serial} {kind}", cell.subject, cell.relation, value)
            yield from self.onwards(value, cell.rest, ev.serial)

    def onwards(self, entity: str, relations: tuple[str, ...], serial: int) -> Iterator[str]:
        """Where the path's remaining `relations` lead from `entity` (an older value of one of
        its hops), as the search steps (the latest version first): each cell, marked with the
        serial it comes from, then its own history and where that leads. What the question
        asks of that value."""
        if not relations:
            return
        hops = latest_hops(self.store, entity, relations[0])
        if not hops:
            return
        cell = _cell_of(hops[0], relations[1:])
        if self._new(cell.key, cell.serial, cell.value):
            yield line(f"#{cell.serial} via #{serial}", cell.subject, cell.relation, cell.value)
        yield from self.history(cell)
        yield from self.onwards(cell.value, cell.rest, cell.serial)

    def alternatives(self, cell: Cell) -> Iterator[str]:
        """The other parties of the cell's contest: the head and the open alternatives."""
        ledger = self.ledger
        alternatives = ledger.alternatives(cell.key)
        if not alternatives:
            return
        head = ledger.head(cell.key)
        for version in ((head,) if head is not None else ()) + alternatives:
            if self._new(cell.key, version.serial, version.value):
                kind = "contested head" if head is not None and version.id == head.id \
                    else "alternative"
                yield line(f"#{version.serial} {kind}", cell.subject, cell.relation,
                           version.value)

    def support(self, cell: Cell) -> Iterator[str]:
        """The cell's evidence line, then the observations that support its version."""
        mine = (cell.key, cell.serial, cell.line)
        if mine in self.supported:
            return
        self.supported.add(mine)
        yield f"[#{cell.serial} support, line {cell.line}] {escape.readout(cell.text)}"
        vid = self._vid(cell, self.ledger.lineage_ids(cell.key))
        if vid is not None and self.ledger.version(vid).support > 1:
            for ev in self.ledger.observations(vid):
                yield f"[#{cell.serial} support, line {ev.line}] {escape.readout(ev.text)}"
