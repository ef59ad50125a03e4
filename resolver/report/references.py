"""Published reference points (`resolver/data/references.json`), read and validated.

The file is the only place a number not produced by a run folder may enter a table, so every
figure names where it comes from: its source (a paper or a vendor page, with its arXiv id or
URL, or a word that the transcription gives none), its place there (a table, a section, the
running text, with the passage quoted for a figure read from text), who measured it (published
by the source itself, quoted second-hand from another source, or a vendor's own claim), its
reader and protocol, and whether someone compared it with the transcription it was copied from
(`checked`). Nothing is ever filled in from memory.

A figure is a percentage as the source prints it (an integer stays an integer: "100" is not
"100.0"), "not reported" (the source prints a dash or leaves the cell empty), or null (not
transcribed). A size missing from an entry's `sizes` (a kind missing from a size, a missing
`pooled` or `stale`) is one the source does not cover at all, as source B has no 32K: it is
"not covered", never 0.

    {"schema": "factres.references/2", "comment": str,
     "transcription": {"file": str, "test_copy": str, "sha256": hex},
     "sources": {id: {"name", "kind": "paper"|"vendor", "title", "authors", "arxiv", "url",
                      "unlocated"}},              # unlocated: why there is no arxiv id or url
     "protocols": {id: str},
     "stale_denominators": {id: {"definition", "n": {size: int}, "source": id, "quote"}},
     "untranscribed": [{"source": id, "what": str, "why": str}],
     "references": [{"id", "system", "row", "reader", "protocol": id,
                     "provenance": "published"|"quoted"|"vendor", "quoted_from": id|null,
                     "source": id, "place", "quote", "sizes": {size: {"sh"?, "mh"?}},
                     "pooled": {"sh"?, "mh"?}|null,
                     "stale": {"denominator": id, "sizes": {size: figure}}|null,
                     "checked": bool, "note": str}, ...],
     "probes": [{"id", "probe": "revision"|"retraction"|"conflict"|"two-step", "arm",
                 "source": id, "protocol": id, "place", "table": str|null,
                 "axis": "column"|"row"|null, "quote": str|null, "figures": {measure: figure},
                 "checked": bool, "note": str}, ...]}

`probes` (optional) is a table kind of its own: P-Mem's ALFWorld-Revision probe figures
(`benchmarks/revision.py` prints them beside factres's), not FactConsolidation EM. A probe
entry is one arm: a column of a transcription table whose rows are the measures (`axis`
"column": Table 6, its measures "L=1", ...), a row whose columns are (`axis` "row": Table 8,
its measures the column headers), or figures read from a quoted passage (`table` null).

The shape is checked by pydantic models (unknown keys refused, types strict), then the links
between the parts (every id named exists, ids unique, a quoted or vendor figure says whom it is
quoted from, a checked entry has no untranscribed cell)."""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationError,
    model_validator,
)

from resolver.errors import InputError

SCHEMA = "factres.references/2"
SIZES = ("6k", "32k", "64k", "262k")
KINDS = ("sh", "mh")
NOT_REPORTED = "not reported"

Size = Literal["6k", "32k", "64k", "262k"]
Text = Annotated[str, StringConstraints(pattern=r"\S")]         # not empty, not blank
Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


def _figure(value: object) -> object:
    """A figure: a percentage, "not reported" (a dash or an empty cell in the source), or None
    (not transcribed). One check rather than a union of types, so an error names the field
    once and says what a figure may be."""
    if value is None or value == NOT_REPORTED:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise ValueError(f'a figure is a percentage in [0, 100], "{NOT_REPORTED}" or null, '
                         f"not {value!r}")
    return value


Figure = Annotated[Union[int, float, str, None], PlainValidator(_figure)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Transcription(_Strict):
    """The transcription the figures were copied from and checked against."""
    file: Text                    # where it lives (outside the repository)
    test_copy: Text               # the committed copy the tests read
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Source(_Strict):
    name: Text                    # how the tables name it
    kind: Literal["paper", "vendor"]
    title: Text | None = None     # None when the transcription gives no title
    authors: Text | None = None
    arxiv: Annotated[str, StringConstraints(pattern=r"^\d{4}\.\d{4,5}$")] | None = None
    url: Text | None = None
    unlocated: Text | None = None     # why neither arxiv nor url: what the transcription says

    @model_validator(mode="after")
    def _located(self) -> "Source":
        if not (self.arxiv or self.url or self.unlocated):
            raise ValueError("a source names an arxiv id or a url, or says in `unlocated` "
                             "that the transcription gives none")
        if (self.arxiv or self.url) and self.unlocated:
            raise ValueError("`unlocated` is only for a source with neither arxiv id nor url")
        return self


class Pair(_Strict):
    """Single-hop and multi-hop figures of one size (or pooled). A kind left out is one the
    source does not give at all (a figure from text that names one kind); a table's empty
    cell is "not reported" instead."""
    sh: Figure = None
    mh: Figure = None

    @model_validator(mode="after")
    def _some_kind(self) -> "Pair":
        if not self.model_fields_set:
            raise ValueError('give "sh", "mh" or both')
        return self

    def covers(self, kind: str) -> bool:
        return kind in self.model_fields_set



class StaleDenominator(_Strict):
    definition: Text              # which questions the source counts
    n: dict[Size, Annotated[int, Field(gt=0, strict=True)]]
    source: Id
    quote: Text                   # the passage that defines it, verbatim


class Stale(_Strict):
    denominator: Id               # a key of stale_denominators
    sizes: dict[Size, Figure] = Field(min_length=1)


class Untranscribed(_Strict):
    source: Id
    what: Text
    why: Text


class Reference(_Strict):
    id: Id
    system: Text
    row: Text | None              # the row's label in the transcription's table, verbatim;
    #                               None for figures read from running text
    reader: Text
    protocol: Id
    provenance: Literal["published", "quoted", "vendor"]
    quoted_from: Id | None        # whose figure a quoted or vendor entry repeats
    source: Id                    # where the figure was read (for a quoted one: the quoting)
    place: Text                   # the table, section or text, as the transcription says
    quote: Text | None            # the passage a figure from text is read from, verbatim
    sizes: dict[Size, Pair]
    pooled: Pair | None
    stale: Stale | None
    checked: bool                 # every figure compared with the transcription
    note: str

    @model_validator(mode="after")
    def _consistent(self) -> "Reference":
        if (self.provenance == "published") != (self.quoted_from is None):
            raise ValueError("quoted_from names whose figure a quoted or vendor entry repeats, "
                             "and only then")
        if self.row is None and self.quote is None:
            raise ValueError("a figure comes from a table row (`row`) or a quoted passage "
                             "(`quote`)")
        if not (self.sizes or self.pooled or self.stale):
            raise ValueError("an entry has at least one figure (sizes, pooled or stale)")
        if self.checked and None in self.figures().values():
            raise ValueError("a checked entry has no untranscribed (null) figure")
        return self

    def figures(self) -> dict[str, Figure]:
        """Every figure of the entry: "6k.sh", "pooled.mh", "stale.64k", ... -> value."""
        out: dict[str, Figure] = {}
        pairs = list(self.sizes.items()) + ([("pooled", self.pooled)] if self.pooled else [])
        for where, pair in pairs:
            out.update({f"{where}.{kind}": getattr(pair, kind) for kind in KINDS
                        if pair.covers(kind)})
        if self.stale is not None:
            out.update({f"stale.{size}": v for size, v in self.stale.sizes.items()})
        return out


PROBES = ("revision", "retraction", "conflict", "two-step")


class Probe(_Strict):
    """One arm of one probe set, as the transcription gives it."""
    id: Id
    probe: Literal["revision", "retraction", "conflict", "two-step"]
    arm: Text                     # Table 6's column header, Table 8's row label, or a name
    source: Id
    protocol: Id
    place: Text                   # where the transcription puts it
    table: Text | None            # the table's title as the transcription opens it ("Table 6")
    axis: Literal["column", "row"] | None     # which line of the table the arm is
    quote: Text | None            # the passage a figure from text is read from, verbatim
    figures: dict[Text, Figure] = Field(min_length=1)
    checked: bool
    note: str

    @model_validator(mode="after")
    def _located(self) -> "Probe":
        if (self.table is None) != (self.axis is None):
            raise ValueError("a figure of a table names its `table` and `axis`, a figure of "
                             "text neither")
        if (self.table is None) == (self.quote is None):
            raise ValueError("a probe figure comes from a table (`table`) or a quoted passage "
                             "(`quote`), one of the two")
        if self.checked and None in self.figures.values():
            raise ValueError("a checked entry has no untranscribed (null) figure")
        return self


class References(_Strict):
    schema_: Literal["factres.references/2"] = Field(alias="schema")
    comment: str
    transcription: Transcription
    sources: dict[Id, Source]
    protocols: dict[Id, Text]
    stale_denominators: dict[Id, StaleDenominator]
    untranscribed: list[Untranscribed]
    references: list[Reference]
    probes: list[Probe] = Field(default_factory=list)

    @model_validator(mode="after")
    def _linked(self) -> "References":
        seen: set[str] = set()
        for i, e in enumerate(self.references):
            if e.id in seen:
                raise ValueError(f"references.{i}: id {e.id!r} is used twice")
            seen.add(e.id)
            for field, name, table in (("source", e.source, self.sources),
                                       ("quoted_from", e.quoted_from, self.sources),
                                       ("protocol", e.protocol, self.protocols),
                                       ("stale.denominator",
                                        e.stale.denominator if e.stale else None,
                                        self.stale_denominators)):
                if name is not None and name not in table:
                    raise ValueError(f"references.{i} ({e.id}): {field} {name!r} is not "
                                     f"defined (known: {', '.join(sorted(table))})")
        for key, d in self.stale_denominators.items():
            if d.source not in self.sources:
                raise ValueError(f"stale_denominators.{key}: source {d.source!r} is not defined")
        for i, u in enumerate(self.untranscribed):
            if u.source not in self.sources:
                raise ValueError(f"untranscribed.{i}: source {u.source!r} is not defined")
        for i, p in enumerate(self.probes):
            if p.id in seen:
                raise ValueError(f"probes.{i}: id {p.id!r} is used twice")
            seen.add(p.id)
            for field, name, table in (("source", p.source, self.sources),
                                       ("protocol", p.protocol, self.protocols)):
                if name not in table:
                    raise ValueError(f"probes.{i} ({p.id}): {field} {name!r} is not defined "
                                     f"(known: {', '.join(sorted(table))})")
        return self

    def probe(self, probe: str) -> list[Probe]:
        """The entries of one probe set, in the file's order."""
        return [p for p in self.probes if p.probe == probe]


def default_path() -> Path:
    """The packaged references file."""
    return Path(str(resources.files("resolver").joinpath("data", "references.json")))


def _error_text(err: ValidationError) -> str:
    """The first error of a validation, as "<field path>: <what is wrong>"."""
    first = err.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"] if p != "[key]")
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def load_references(path: str | Path | None = None) -> tuple[str, References]:
    """(name to cite, the validated file) of a references file (default: the packaged one).
    A file of the wrong shape is one InputError naming the file and the field."""
    file = Path(path) if path is not None else default_path()
    shown = str(path) if path is not None else "resolver/data/references.json"
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise InputError("no such references file", path=str(file)) from None
    try:
        refs = References.model_validate_json(data)
    except ValidationError as err:
        if any(e["type"] == "json_invalid" for e in err.errors()):
            raise InputError(f"not JSON: {err.errors()[0]['msg']}", path=shown) from None
        raise InputError(_error_text(err), path=shown,
                         expected=f"a {SCHEMA} file (resolver/report/references.py)") from None
    transcription = find_transcription(refs, file)
    check_figures(refs, shown, transcription)
    check_probes(refs, shown, transcription)
    # The name tables cite: the packaged file by its repo path, another file by its name
    # (paths differ between machines; the tables must not).
    return (shown if path is None else file.name), refs


# ---- `checked`, checked: the figures against their quotes and the transcription -------------
DASHES = ("", "—", "–")           # a transcription's cell with no figure: "not reported"
# Figures written in a passage: numbers standing alone, not a size or a model ("6K", "35B",
# "gpt-4o"), not a count's whole ("94 of 100").
_NUMBER = re.compile(r"(?<![\w.\-])(?<!of )\d+(?:\.\d+)?(?![\w.\-]|\.\d)")


def find_transcription(refs: References, file: Path) -> Path | None:
    """The transcription the file names, where it is here: its `test_copy` or its `file`, from
    the references file's folder or one above it, or from the checkout factres runs from; only
    a file with the recorded sha256 counts. None when there is none."""
    import hashlib
    roots = list(file.resolve().parents) + [default_path().resolve().parents[2]]
    for name in (refs.transcription.test_copy, refs.transcription.file):
        for root in ([Path("/")] if Path(name).is_absolute() else roots):
            candidate = root / name
            try:
                data = candidate.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == refs.transcription.sha256:
                return candidate
    return None


def compared_with_transcription(refs: References, path: str | Path | None = None) -> bool:
    """Whether `load_references(path)` compared the checked entries with their transcription
    (found here), or only the figures read from text with their quotes."""
    return find_transcription(refs, Path(path) if path is not None else default_path()) \
        is not None


def _tables(text: str) -> dict[str, dict[str, str]]:
    """Every row of the transcription's Markdown tables: its first cell (the row label) -> the
    figure columns ("6k.sh", "pooled.mh", "stale.64k") -> the cell as printed."""
    rows: dict[str, dict[str, str]] = {}
    block: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(block) > 2:
            keys = [_figure_key(h) for h in block[0]]
            for cells in block[2:]:
                rows[cells[0]] = {k: c for k, c in zip(keys, cells) if k is not None}
        block = []
    return rows


def _figure_key(header: str) -> str | None:
    """"6K SH" -> "6k.sh", "pooled MH" -> "pooled.mh", "stale 64K" -> "stale.64k"; None for a
    column of text."""
    words = header.lower().split()
    if len(words) == 2 and words[0] in SIZES + ("pooled",) and words[1] in KINDS:
        return f"{words[0]}.{words[1]}"
    if len(words) == 2 and words[0] == "stale" and words[1] in SIZES:
        return f"stale.{words[1]}"
    return None


def check_figures(refs: References, shown: str, transcription: Path | None) -> None:
    """Every entry marked `checked`, checked: each figure of an entry read from text is a number
    of its quoted passage, and, when the transcription is here (`find_transcription`), each
    figure of an entry read from a table row is that row's cell (a dash or an empty cell:
    "not reported"), no cell more or less. An InputError names the entry, the figure and both
    values."""
    def refuse(e: Reference, message: str) -> InputError:
        return _refusal(f"entry {e.id!r}", message, shown)
    table = _tables(transcription.read_text("utf-8")) if transcription is not None else None
    for e in refs.references:
        if not e.checked:
            continue
        figures = e.figures()
        if e.quote is not None:
            _check_quote(e.quote, figures, lambda m: refuse(e, m), quoted=str)
        if e.row is None or table is None:
            continue
        cells = table.get(e.row)
        if cells is None:
            raise refuse(e, f"its row {e.row!r} is in no table of the transcription "
                         f"{transcription.name}")
        for key in sorted(set(cells) | set(figures)):
            if key not in cells or key not in figures:
                raise refuse(e, f"it has figure {key}" + (" and the transcription's row has no "
                             "such column" if key not in cells else ", which the transcription's "
                             "row has, and it does not"))
            cell, value = cells[key], figures[key]
            if not _same_cell(value, cell):
                raise refuse(e, f"its figure {key} is {figure_text(value) or value}, and the "
                             f"transcription's row {e.row!r} has "
                             + (cell if cell else "an empty cell"))


def _refusal(entry: str, message: str, shown: str) -> InputError:
    return InputError(f"{entry} is marked checked, but {message}", path=shown,
                      expected="a checked entry's figures as its quote and the transcription "
                      "give them (or checked: false)")


def _check_quote(quote: str, figures: dict, refuse, quoted) -> None:
    """Each figure is a number the quoted passage gives; `refuse(message)` makes the error,
    `quoted` shows a figure's key in it."""
    numbers = set(_NUMBER.findall(quote))
    for key, value in figures.items():
        text = figure_text(value)
        if text is not None and text not in numbers:
            raise refuse(f"its figure {quoted(key)} is {text}, which its quote does not give "
                         f"(numbers there: {', '.join(sorted(numbers)) or 'none'})")


def _same_cell(value, cell: str) -> bool:
    """Whether a figure is the transcription's cell as printed (a dash or an empty cell: "not
    reported")."""
    return value == NOT_REPORTED if cell in DASHES else figure_text(value) == cell


def _titled_tables(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """The transcription's Markdown tables that the paragraph before them opens with "Table
    N": "Table N" -> (header, rows), cells stripped."""
    out: dict[str, tuple[list[str], list[list[str]]]] = {}
    paragraph: list[str] = []          # the paragraph being read
    before = ""                        # the last paragraph read whole
    block: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not block and paragraph:
                before, paragraph = " ".join(paragraph), []
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if block:
            title = re.match(r"(Table \d+)\b", before)
            if title and len(block) > 2:
                out[title.group(1)] = (block[0], block[2:])
            block, before = [], ""
        if line.strip():
            paragraph.append(line.strip())
        elif paragraph:
            before, paragraph = " ".join(paragraph), []
    return out


def probe_cells(text: str) -> dict[tuple[str, str, str], str]:
    """Every figure cell of the transcription's titled tables: (table, axis, arm) -> {measure:
    cell} flattened as (table, arm-axis key, measure) -> cell, for both readings of a table
    (an arm a column, its measures "<first header>=<row label>"; an arm a row, its measures
    the column headers). Cells that hold no single number (e.g. "30 / 591") are not
    figures."""
    cells: dict[tuple[str, str, str], str] = {}
    for title, (header, rows) in _titled_tables(text).items():
        for row in rows:
            for head, cell in zip(header[1:], row[1:]):
                if not _FIGURE_CELL.fullmatch(cell):
                    continue
                cells[(title, f"column:{head}", f"{header[0]}={row[0]}")] = cell
                cells[(title, f"row:{row[0]}", head)] = cell
    return cells


_FIGURE_CELL = re.compile(r"\d+(?:\.\d+)?|[—–]?")


def check_probes(refs: References, shown: str, transcription: Path | None) -> None:
    """Every probe entry marked `checked`, checked as `check_figures` checks the
    FactConsolidation ones: a figure read from text is a number of its quote, and, when the
    transcription is here, a table's arm has exactly the figure cells of its column or row
    there, each as printed."""
    def refuse(p: Probe, message: str) -> InputError:
        return _refusal(f"probe entry {p.id!r}", message, shown)
    cells = probe_cells(transcription.read_text("utf-8")) if transcription is not None else None
    for p in refs.probes:
        if not p.checked:
            continue
        if p.quote is not None:
            _check_quote(p.quote, p.figures, lambda m: refuse(p, m), quoted=repr)
            continue
        if cells is None:
            continue
        where = f"{p.axis}:{p.arm}"
        theirs = {m: c for (t, a, m), c in cells.items() if t == p.table and a == where}
        if not theirs:
            raise refuse(p, f"the transcription has no {p.axis} {p.arm!r} in {p.table}")
        for key in sorted(set(theirs) | set(p.figures)):
            if key not in theirs or key not in p.figures:
                raise refuse(p, f"it has figure {key!r}" + (
                    f" and {p.table}'s {p.axis} has no such cell" if key not in theirs else
                    f", which {p.table}'s {p.axis} has, and it does not"))
            cell, value = theirs[key], p.figures[key]
            if not _same_cell(value, cell):
                raise refuse(p, f"its figure {key!r} is {figure_text(value) or value}, and "
                             f"{p.table} has " + (cell if cell else "an empty cell"))


def figure_text(value: Figure) -> str | None:
    """A figure as the source prints it ("100", "98.3", "68.0"); None for "not reported" and
    for an untranscribed (null) figure, which the tables mark each their own way."""
    if value is None or value == NOT_REPORTED:
        return None
    return str(value) if isinstance(value, int) else repr(value)
