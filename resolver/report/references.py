"""Published reference points (`resolver/data/references.json`), read and validated.

The file is the only place a number not produced by a run folder may enter a table, so every
entry names its source (paper or vendor page, arXiv id or URL, and the table or figure) and its
protocol, and says whether someone checked its cells against that source. A cell is a
percentage in [0, 100] or null ("not transcribed"); nothing is ever filled in from memory.

    {"schema": "factres.references/1", "comment": "...", "references": [
      {"system": str, "reader": str, "protocol": str,
       "source": {"title": str, "arxiv": str|null, "url": str|null, "table": str|null},
       "sizes": {"6k"|"32k"|"64k"|"262k": {"sh": num|null, "mh": num|null}, ...},
       "pooled": {"sh": num|null, "mh": num|null},
       "checked": bool, "note": str}, ...]}
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from resolver.errors import InputError

SCHEMA = "factres.references/1"
SIZES = ("6k", "32k", "64k", "262k")
KINDS = ("sh", "mh")
_ENTRY_KEYS = {"system", "reader", "protocol", "source", "sizes", "pooled", "checked", "note"}
_SOURCE_KEYS = {"title", "arxiv", "url", "table"}


def default_path() -> Path:
    """The packaged references file."""
    return Path(str(resources.files("resolver").joinpath("data", "references.json")))


def _cells(value: Any, where: str) -> dict[str, float | None]:
    if not isinstance(value, dict) or set(value) != set(KINDS):
        raise ValueError(f'{where} must be {{"sh": number or null, "mh": number or null}}')
    for kind in KINDS:
        x = value[kind]
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))
                              or not 0 <= x <= 100):
            raise ValueError(f"{where}.{kind} must be a percentage in [0, 100] or null, "
                             f"not {x!r}")
    return value


def _text(entry: dict, key: str, where: str, required: bool = True) -> None:
    value = entry.get(key)
    if value is None and not required:
        return
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}{key} must be a non-empty string")


def validate_entry(entry: Any) -> None:
    """Raise ValueError saying what is wrong with one entry."""
    if not isinstance(entry, dict):
        raise ValueError("an entry must be an object")
    missing = sorted(_ENTRY_KEYS - set(entry))
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if missing:
        raise ValueError(f"missing key(s): {', '.join(missing)}")
    if unknown:
        raise ValueError(f"unknown key(s): {', '.join(unknown)}")
    for key in ("system", "reader", "protocol"):
        _text(entry, key, "")
    source = entry["source"]
    if not isinstance(source, dict) or set(source) - _SOURCE_KEYS or "title" not in source:
        raise ValueError('source must be {"title", "arxiv", "url", "table"}')
    _text(source, "title", "source.")
    for key in ("arxiv", "url", "table"):
        _text(source, key, "source.", required=False)
    if not source.get("arxiv") and not source.get("url"):
        raise ValueError("source names neither an arxiv id nor a url")
    sizes = entry["sizes"]
    if not isinstance(sizes, dict) or not sizes or set(sizes) - set(SIZES):
        raise ValueError(f"sizes must map some of {', '.join(SIZES)} to cells")
    for size, value in sizes.items():
        _cells(value, f"sizes.{size}")
    _cells(entry["pooled"], "pooled")
    if not isinstance(entry["checked"], bool):
        raise ValueError("checked must be true or false")
    if entry["checked"] and not source.get("table"):
        raise ValueError("a checked entry must name the table or figure it was checked "
                         "against (source.table)")
    if not isinstance(entry["note"], str):
        raise ValueError("note must be a string")


def load_references(path: str | Path | None = None) -> tuple[str, list[dict]]:
    """(name to cite, entries) of a references file (default: the packaged one), validated.
    A malformed file or entry is an InputError naming the file and the entry's index."""
    file = Path(path) if path is not None else default_path()
    shown = str(path) if path is not None else "resolver/data/references.json"
    try:
        doc = orjson.loads(file.read_bytes())
    except FileNotFoundError:
        raise InputError("no such references file", path=str(file)) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", path=shown) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA \
            or not isinstance(doc.get("references"), list):
        raise InputError("not a references file", path=shown,
                         expected=f'{{"schema": "{SCHEMA}", "references": [...]}}')
    for i, entry in enumerate(doc["references"]):
        try:
            validate_entry(entry)
        except ValueError as exc:
            raise InputError(f"reference entry {i}: {exc}", path=shown) from None
    # The name tables cite: the packaged file by its repo path, another file by its name
    # (paths differ between machines; the tables must not).
    return (shown if path is None else file.name), doc["references"]
