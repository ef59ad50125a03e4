"""Where oracle results go and how they are written: `<results>/oracle-<command>-<tag>/` holding
`<command>.json` (sorted keys) and `<command>.md`, rendered from the same rows. `<results>` is
the one results folder every command uses: --results-dir, else $FACTRES_RESULTS, else ./results
(`resolver.run.result_schema.results_root`).

A folder is never overwritten: the next free suffix (-2, -3, ...) is taken, or `--out` names the
folder, which must not exist. Files are written into a hidden temporary folder (`.tmp-*`, which
every reader refuses) renamed into place at the end, so a folder that exists is complete."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from resolver.errors import RunExistsError
from resolver.haystack import Dataset
from resolver.run.result_schema import TMP_PREFIX, dumps, results_root

RESULTS = Path("results")      # the default of results_root() when nothing else is set


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


def output_dir(command: str, tag: str, out: str | Path | None = None,
               root: str | Path | None = None) -> Path:
    """The folder to write: `out` if given (it must not exist), else the first free
    `<root>/oracle-<command>-<tag>[-N]`."""
    if out is not None:
        path = Path(out)
        if path.exists():
            raise RunExistsError(f"{path} already exists: oracle results are never overwritten; "
                                 "choose another --out")
        return path
    base = results_root(root) / f"oracle-{command}-{tag}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def write(analysis: Analysis, out: str | Path | None = None,
          root: str | Path | None = None) -> Path:
    """Write `<command>.json` and `<command>.md` into a fresh folder (renamed into place last);
    return the folder."""
    command, payload, markdown = analysis.command, analysis.payload, analysis.markdown
    folder = output_dir(command, analysis.tag, out, root)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f"{TMP_PREFIX}{folder.name}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    (tmp / f"{command}.json").write_bytes(dumps(payload))
    (tmp / f"{command}.md").write_text(markdown, encoding="utf-8")
    os.rename(tmp, folder)
    return folder


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table; None prints as "-", floats with three decimals."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def data_block(dataset: Dataset) -> dict[str, Any]:
    """What every oracle JSON records about its input."""
    return {"paths": list(dataset.paths), "files_sha256": dict(dataset.files_sha256),
            "questions": len(dataset.questions), "sources": dataset.sources}
