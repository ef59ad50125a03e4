"""`factres memory ...`: a memory kept in a file (`Memory.open`): ingest text into it, ask it,
read it out for a language model, read its history, frontier, operation log and counts, back it
up, erase an entity. The read-only
commands open the file read-only: they never wait for a writer and never change it."""
from __future__ import annotations

import sys
from contextlib import nullcontext

import click
import orjson

import resolver.escape as escape
from resolver.cli.options import library_errors
from resolver.errors import InputError
from resolver.cli.provenance import echo_frontier, echo_history, relation_option
from resolver.cli.readout import budget_option, disclose_option

_JSON = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
_DB = click.Path(dir_okay=False)
PROGRESS_AT = 2                  # chunks from which a progress bar is worth showing


def _json_option(what: str):
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


def _open(db: str, **kwargs):
    from resolver.memory.memory import Memory  # the memory stack loads with the command

    return Memory.open(db, **kwargs)


@click.group("memory")
def memory_group() -> None:
    """Keep a memory in a file: ingest text into it, ask it, read its history, log and counts.

    DB is a memory file (SQLite, made by the first ingest). It is the same memory each time it
    is opened: it reads on from where the text stopped and answers as a memory never closed.
    One process writes at a time (ingest, forget); the other commands open it read-only, so
    they run while a writer works and see every ingest it committed.

    Example: factres memory ingest memory.db resolver/data/fc/factconsolidation_6k.json
    """


@memory_group.command("ingest")
@click.argument("db", type=_DB)
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--harness-chunks", is_flag=True,
              help="Cut each text as MemoryAgentBench does (whole sentences, at most --tokens "
                   "tokens per chunk) and put each chunk in its memorize frame. Default: the "
                   "text as it is, in blocks of 1 Mi characters.")
@click.option("--tokens", type=click.IntRange(1), default=4096, show_default=True,
              help="Tokens per chunk with --harness-chunks.")
@click.option("--flush", "end", is_flag=True,
              help="The text ends here: commit its last fact for good. Without it the last "
                   "fact may go on in a later ingest (queries read it meanwhile).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal and the input "
                   "takes several chunks).")
@click.option("--timeout", type=click.FloatRange(0), default=5.0, show_default=True,
              metavar="S", help="Seconds to wait for another process writing DB.")
@library_errors
def ingest_command(db: str, files: tuple[str, ...], harness_chunks: bool, tokens: int,
                   end: bool, progress: bool | None, timeout: float) -> None:
    """Ingest each FILE into the memory DB (made when it does not exist), one transaction per
    chunk.

    FILE is a text file, a row file (.json, .jsonl, .parquet: its context), or - for standard
    input. Each chunk is committed when it is read: a run stopped midway keeps every chunk
    before it. Prints what was committed, passed over and reported (the first few reports
    with their lines, in factres parse's words).

    Example: factres memory ingest memory.db resolver/data/fc/factconsolidation_6k.json --harness-chunks
    """
    from resolver.memory.sources import read_source

    stdin = click.open_file("-", "rb") if "-" in files else None
    sources = [read_source(name, harness_chunks=harness_chunks, tokens=tokens, stdin=stdin)
               for name in files]
    chunks = [chunk for source in sources for chunk in source.chunks]
    if progress is None:
        progress = sys.stderr.isatty() and len(chunks) >= PROGRESS_AT
    committed, passed, reports, corrected = 0, {}, [], 0
    with _open(db, timeout=timeout) as memory:
        with click.progressbar(length=len(chunks), label=f"ingesting into {db}",
                               file=sys.stderr) if progress else nullcontext() as bar:
            for chunk in chunks:
                result = memory.ingest(chunk)
                committed += result.committed
                corrected += len(result.corrections)
                for kind, count in result.passed_over.items():
                    passed[kind] = passed.get(kind, 0) + count
                reports.extend(result.reports)
                if progress:
                    bar.update(1)
        if end:
            result = memory.flush()
            committed += result.committed
            corrected += len(result.corrections)
            reports.extend(result.reports)
        info = memory.info()
    click.echo(f"{escape.terminal(db)}: {committed} fact(s) committed from {len(chunks)} "
               f"chunk(s) of {len(sources)} input(s); the memory holds {info['facts']} fact(s), "
               f"{info['pending']} character(s) pending")
    if corrected:
        click.echo(f"correction lines applied: {corrected} (docs/memory.md, \"Corrections and "
                   "operations\")")
    shown = ", ".join(f"{kind} {count}" for kind, count in sorted(passed.items()) if count)
    click.echo(f"passed over: {shown or 'nothing'}")
    click.echo(f"reported: {len(reports)}")
    for report in reports[:REPORTS_SHOWN]:
        click.echo(f"  line {report.line}: {escape.terminal(report.text)}  "
                   f"({escape.terminal(report.reason)})")
    if len(reports) > REPORTS_SHOWN:
        click.echo(f"  ... and {len(reports) - REPORTS_SHOWN} more")


REPORTS_SHOWN = 10


@memory_group.command("ask")
@click.argument("db", type=_DB)
@click.argument("question")
@click.option("--plans", "plans", multiple=True, metavar="SET",
              help="Live plan set (live:rules, live:lexicon); repeat for several. Default: "
                   "live:rules then live:lexicon, as factres run.")
@click.option("--mode", type=click.Choice(["search", "plain"]), default="search",
              show_default=True, help="search: the scored path search; plain: the latest "
              "version at every hop.")
@click.option("--abstain-below", type=click.Choice(["low", "medium", "high"]), default=None,
              help="Answer empty below this confidence.")
@_json_option("the answer, its confidence, path and score terms")
@library_errors
def ask_command(db: str, question: str, plans: tuple[str, ...], mode: str,
                abstain_below: str | None, as_json: bool) -> None:
    """Answer QUESTION from the memory DB: the answer, its confidence and the path that gives
    it (each hop's fact, serial, line and ledger status).

    QUESTION is a bare question or a whole MemoryAgentBench prompt. An empty answer says why.

    Example: factres memory ask memory.db "Who is the chairperson of Fatah?"
    """
    kwargs = {"plan_sets": tuple(plans)} if plans else {}
    with _open(db, readonly=True, mode=mode, **kwargs) as memory:
        answer = memory.query(question, abstain_below=abstain_below)
    if as_json:
        click.echo(orjson.dumps(answer.to_json(), option=_JSON).decode())
        return
    click.echo(escape.terminal(answer.text) if answer.text
               else f"(no answer: {escape.terminal(answer.reason)})")
    reasons = "; ".join(answer.confidence.reasons)
    click.echo(f"confidence: {answer.confidence.label}" + (f" ({reasons})" if reasons else ""))
    if answer.contested:                 # issue 32: the values the ledger holds open beside it
        click.echo("contested, against: " + ", ".join(escape.terminal(v)
                                                      for v in answer.alternatives))
    if answer.history is not None:       # which versions a history cue read
        click.echo(f"history ({escape.terminal(answer.history.cue)}): "
                   f"{escape.terminal(answer.history.note)}")
    for hop in answer.path:
        click.echo(f"  {escape.terminal(hop.subject)} / {hop.relation} -> "
                   f"{escape.terminal(hop.object)}  (serial {hop.serial}, line {hop.line}, "
                   f"{hop.status})")


@memory_group.command("readout")
@click.argument("db", type=_DB)
@click.argument("question", required=False)
@disclose_option
@budget_option("default 600 with a QUESTION; none without")
@click.option("--mode", type=click.Choice(["search", "plain"]), default="search",
              show_default=True, help="search: the scored path search's cells; plain: the "
              "plain path's.")
@library_errors
def readout_command(db: str, question: str | None, disclose: tuple[str, ...],
                    budget: int | None, mode: str) -> None:
    """Print the memory DB's state for QUESTION as short text for a language model to read
    (`Memory.readout`): one line per cell, `[#serial] subject | relation = value`, the winning
    path's cells first, then the rival paths' in rank order, then each --disclose section,
    cut to the budget (see the docs: A readout for an LLM reader).

    QUESTION is a bare question or a whole MemoryAgentBench prompt; without one, the whole
    frontier, one line per key.

    Example: factres memory readout memory.db "Who is the chairperson of Fatah?" --disclose history
    """
    with _open(db, readonly=True, mode=mode) as memory:
        text = memory.readout(question, disclose=disclose, budget=budget)
    # the readout's fields are escaped by its renderer: one line is one line
    click.echo(text)


@memory_group.command("history")
@click.argument("db", type=_DB)
@click.argument("entity")
@relation_option
@_json_option("versions and edges")
@library_errors
def history_command(db: str, entity: str, relation: str | None, as_json: bool) -> None:
    """Print every version of an entity's keys in the memory DB: serial, line, status, value
    and the evidence line, oldest first (as factres history prints a haystack's).

    Example: factres memory history memory.db australia --relation capital
    """
    with _open(db, readonly=True) as memory:
        echo_history(memory.store, entity, relation, as_json)


@memory_group.command("frontier")
@click.argument("db", type=_DB)
@relation_option
@_json_option("the frontier")
@library_errors
def frontier_command(db: str, relation: str | None, as_json: bool) -> None:
    """Print the current value of every key of the memory DB, one per line, tab-separated:
    subject, relation, value, status, serial, line (as factres frontier prints a haystack's).

    Example: factres memory frontier memory.db --relation capital
    """
    with _open(db, readonly=True) as memory:
        echo_frontier(memory.store, relation, as_json)


@memory_group.command("log")
@click.argument("db", type=_DB)
@_json_option("one object per operation (JSON Lines)")
@library_errors
def log_command(db: str, as_json: bool) -> None:
    """Print the operation log of the memory DB in arrival order, one operation per line,
    tab-separated: its place, the commit that wrote it (arrival index), the operation (accept,
    reject, contest, revoke, resolve, noop), the key, the value and the evidence's serial, line
    and text. An erasure (factres memory forget) is a line of its own, with counts only.

    Example: factres memory log memory.db
    """
    with _open(db, readonly=True) as memory:
        entries = memory.log()
    if as_json:
        for entry in entries:
            click.echo(orjson.dumps(entry.to_json(), option=orjson.OPT_SORT_KEYS).decode())
        return
    click.echo("seq\tcommit\top\tkey\tvalue\tserial\tline\ttext")
    for entry in entries:
        row = entry.to_json()
        if row["op"] == "erasure":
            click.echo(f"-\t{row['chunk']}\terasure\t-\t-\t-\t-\t{entry.erased_text()}")
            continue
        key = ", ".join(row["key"])
        value = "" if row["value"] is None else row["value"]
        click.echo("\t".join([str(row["seq"]), str(row["chunk"]), row["op"],
                              escape.terminal(key), escape.terminal(value),
                              _shown(row["serial"]), _shown(row["line"]),
                              escape.terminal(row["text"] or "")]))


def _shown(number: int | None) -> str:
    return "" if number is None else str(number)


@memory_group.command("info")
@click.argument("db", type=_DB)
@_json_option("the counts")
@library_errors
def info_command(db: str, as_json: bool) -> None:
    """Print what the memory DB holds: facts (committed, and provisional: the last fact a
    query reads while more text may extend it), keys, versions, operations by kind (counting
    what a query reads), characters pending, commits, the text ingested and the file's size
    (with its -wal and -shm files) and schema version.

    Example: factres memory info memory.db
    """
    with _open(db, readonly=True) as memory:
        info = memory.info()
    if as_json:
        click.echo(orjson.dumps(info, option=_JSON).decode())
        return
    kinds = ", ".join(f"{k} {v}" for k, v in info["operations_by_kind"].items()) or "none"
    click.echo("\n".join([
        f"path: {escape.terminal(info['path'])}",
        f"schema version: {info['schema_version']} (made by {info['created_by']}, "
        f"{info['created']})",
        f"size: {info['bytes']:,} bytes (file {info['files']['file']:,}, -wal "
        f"{info['files']['-wal']:,}, -shm {info['files']['-shm']:,})",
        f"commits: {info['commits']} ({', '.join(f'{k} {v}' for k, v in info['commits_by_kind'].items())})",
        f"text ingested: {info['text_bytes']:,} bytes",
        f"facts: {info['facts']} (and {info['provisional']} provisional)",
        f"keys: {info['keys']}",
        f"versions: {info['versions']}",
        f"operations: {info['operations']} ({kinds})",
        f"pending: {info['pending']} characters"]))


@memory_group.command("backup")
@click.argument("db", type=_DB)
@click.argument("dest", type=_DB)
@library_errors
def backup_command(db: str, dest: str) -> None:
    """Copy the memory DB to DEST (a new file) as one consistent snapshot, even while a writer
    is ingesting into it: the way to copy a live memory (copying the file alone may miss what
    its -wal file holds).

    Example: factres memory backup memory.db memory-copy.db
    """
    with _open(db, readonly=True) as memory:
        memory.backup(dest)
    click.echo(f"{escape.terminal(db)} -> {escape.terminal(dest)}")


@memory_group.command("apply")
@click.argument("db", type=_DB)
@click.argument("patches", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--timeout", type=click.FloatRange(0), default=5.0, show_default=True,
              metavar="S", help="Seconds to wait for another process writing DB.")
@_json_option("what each patch did")
@library_errors
def apply_command(db: str, patches: str, timeout: float, as_json: bool) -> None:
    """Apply the patches of PATCHES (JSON Lines, - for standard input) to the memory DB, in
    order, each one operation in the memory's log (Memory.apply; docs/memory.md, "Corrections
    and operations").

    A patch is P-Mem's form: {"op": accept, reject, contest, revoke, resolve or noop, "key":
    {"subject": ..., "relation": ...} or a fact sentence, "old_value", "new_value",
    "evidence", "hard_commit"}. Every line is checked before any is applied (a bad one is named
    by file, line and field); a patch that breaks a rule stops the command, naming its line,
    with the patches before it applied.

    Example: factres memory apply memory.db tests/data/patches.jsonl
    """
    from resolver.errors import ProvenanceError
    from resolver.store.operations import read_patch
    from resolver.strict_json import loads

    name = "<stdin>" if patches == "-" else patches
    with click.open_file(patches, "rb") as handle:
        data = handle.read()
    checked = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if raw.strip():
            checked.append((number, read_patch(loads(raw, path=name, line=number), path=name,
                                               line=number)))
    if not checked:
        raise InputError("holds no patch", path=name, expected="one JSON object per line")
    done = []
    with _open(db, timeout=timeout) as memory:
        for number, patch in checked:
            try:
                done.append(memory.apply(patch))
            except ProvenanceError as exc:
                raise InputError(f"{exc} ({len(done)} patch(es) before it applied)",
                                 path=name, line=number) from None
    if as_json:
        click.echo(orjson.dumps([a.to_json() for a in done], option=_JSON).decode())
        return
    click.echo(f"{escape.terminal(db)}: {len(done)} patch(es) applied")
    for (number, _), applied in zip(checked, done):
        head = applied.head
        now = "empty" if head is None else f"{head.value} ({head.status})"
        note = f"  [{applied.note}]" if applied.note else ""
        click.echo(escape.terminal(
            f"  line {number}: {'+'.join(applied.operations)} ({applied.subject}, "
            f"{applied.relation}) serial {applied.serial}: now {now}{note}"))


@memory_group.command("forget")
@click.argument("db", type=_DB)
@click.argument("entity")
@click.option("--timeout", type=click.FloatRange(0), default=5.0, show_default=True,
              metavar="S", help="Seconds to wait for another process writing DB.")
@library_errors
def forget_command(db: str, entity: str, timeout: float) -> None:
    """Erase ENTITY from the memory DB, for privacy: every version of its keys and every fact
    whose text names it, and its name in every chunk of text kept; the log keeps a tombstone
    that says an erasure happened (counts only), and the file is rewritten so that the bytes
    are gone (VACUUM, the -wal file emptied).

    Example: factres memory forget memory.db Fatah
    """
    with _open(db, timeout=timeout) as memory:
        erased = memory.forget(entity)
    click.echo(f"{escape.terminal(db)}: {erased.describe()}")
