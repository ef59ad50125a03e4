"""Where oracle results go and how they are written: `<results>/oracle-<command>-<tag>/` holding
`<command>.json` (sorted keys) and `<command>.md`, rendered from the same rows. `<results>` is
the one results folder every command uses: --results-dir, else $FACTRES_RESULTS, else
./factres-results (`resolver.results.result_schema.results_root`).

A folder is never overwritten: the next free suffix (-2, -3, ...) is taken, or `--out` names the
folder, which must not exist. The name is claimed as `factres run` claims a run id (its hidden
temporary folder `.tmp-<name>/` made atomically, with the `.incomplete` marker naming the
process: `resolver.run.run_folder.reserve`), so oracle commands started together never write
the same folder; files are written into it and it is renamed into place at the end, so a
folder that exists is complete. A write that fails (a full disk) leaves nothing behind and
names the file."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import resolver.escape as escape
from resolver.haystack import Dataset
from resolver.results.result_schema import dumps, results_root
from resolver.run.run_folder import (
    claim_new,
    clean_stale,
    finish,
    reserve,
    taken,
    write_file,
)


@dataclass(frozen=True)
class Analysis:
    """One oracle command's result: what `write` puts on disk."""
    command: str
    tag: str            # dataset tag ("6k") or run id
    payload: dict[str, Any]
    markdown: str


def dataset_tag(dataset: Dataset) -> str:
    """"6k" for the bundled rows; the sizes of the questions joined by "+", or the file stems
    when the sizes are unknown."""
    sizes = sorted({q.size for q in dataset.questions} - {"unknown"})
    if sizes:
        return "+".join(sizes)
    return "+".join(Path(p).stem for p in dataset.paths) or "data"


def claim_dir(command: str, tag: str, out: str | Path | None = None,
              root: str | Path | None = None) -> tuple[Path, Path]:
    """(the folder to write, its claimed temporary folder): `out` if given (it must not exist
    and must not be claimed), else the first free `<root>/oracle-<command>-<tag>[-N]`."""
    if out is not None:
        path = Path(out)
        return path, claim_new(path, f"factres oracle {command}")
    base = results_root(root) / f"oracle-{command}-{tag}"
    base.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(base.parent)
    path, n = base, 1
    while True:
        # a committed folder's name is taken too: the new one would hide it from lookups
        if not taken(path.parent, path.name):
            tmp = reserve(path.parent, path.name)
            if tmp is not None:
                return path, tmp
        n += 1
        path = base.with_name(f"{base.name}-{n}")


# The sections of an analysis's Markdown that list every question (or every component): what
# the command prints stops before the first of them; the files hold everything.
DETAIL_SECTIONS = ("## Questions", "## Misses", "## Components")
EXPLAIN_LINE = "Why each got its answer: "      # misses: the explain command for them


def summary(analysis: Analysis) -> str:
    """What an oracle command prints: its Markdown up to the per-question detail (the title,
    what the figures mean, the summary tables), and the `factres explain` line that follows the
    detail when there is one, ending with one newline."""
    lines, detail = [], False
    for line in analysis.markdown.splitlines():
        detail = detail or line.startswith(DETAIL_SECTIONS)
        if not detail or line.startswith(EXPLAIN_LINE):
            lines.append(line)
    return "\n".join(lines).rstrip("\n") + "\n"


def write(analysis: Analysis, out: str | Path | None = None,
          root: str | Path | None = None) -> Path:
    """Write `<command>.json` and `<command>.md` into a freshly claimed folder (renamed into
    place last); return the folder. On any failure nothing is left behind."""
    command, payload, markdown = analysis.command, analysis.payload, analysis.markdown
    folder, tmp = claim_dir(command, analysis.tag, out, root)
    try:
        write_file(tmp / f"{command}.json", dumps(payload))
        write_file(tmp / f"{command}.md", markdown)
        finish(tmp, folder, f"oracle folder {folder.name!r}")
    except BaseException:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return escape.markdown(str(value))


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table; None prints as "-", floats with three decimals."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def data_block(dataset: Dataset) -> dict[str, Any]:
    """What every oracle JSON records about its input."""
    return {"paths": list(dataset.paths), "files_sha256": dict(dataset.files_sha256),
            "questions": len(dataset.questions), "sources": dataset.sources}
