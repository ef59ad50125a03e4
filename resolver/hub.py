"""MemoryAgentBench's rows from the Hugging Face hub: `--data hf:ai-hyz/MemoryAgentBench`.

The bundled data has the 6K rows only (the dev split); the 32K, 64K and 262K rows with their
questions and answers (the test split) are on the hub, dataset `ai-hyz/MemoryAgentBench`,
split `Conflict_Resolution`. `hub_rows` loads that split through the `datasets` library (the
optional `hf` extra) and keeps the FactConsolidation rows (`metadata.source` starting with
"factconsolidation_"): the same row layout as a row file's, so they go through `haystack.load`
and the dev/test protocol as a file's rows do (a test run never reads their answers). NAME may
also be a local folder in the hub's layout (its `data/Conflict_Resolution-*.parquet`).

The download is kept in a cache of factres's own: $FACTRES_HF_CACHE, else
$XDG_CACHE_HOME/factres/hf, else ~/.cache/factres/hf. Offline (HF_DATASETS_OFFLINE=1) only a
copy in that cache loads; a dataset that cannot be reached or is not cached is one error naming
the dataset and that variable. The rows' sha256 (of their JSON, sorted keys) stands for a
file's in meta.json: the same rows give the same run id."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from resolver.errors import InputError, MissingExtraError

PREFIX = "hf:"
DATASET = "ai-hyz/MemoryAgentBench"
SPLIT = "Conflict_Resolution"
SOURCES = "factconsolidation_"
CACHE_ENV = "FACTRES_HF_CACHE"
OFFLINE_ENV = "HF_DATASETS_OFFLINE"
ROUTE = f"{PREFIX}{DATASET}"
# What an error about missing rows says: where the test split's rows come from.
HINT = (f"the 32K, 64K and 262K rows with questions (the test split) load with --data {ROUTE} "
        "(pip install 'factres[hf]'), or from row files saved from it")


def is_hub(spec: str | Path) -> bool:
    """Whether a --data value names hub rows ("hf:NAME") rather than a file."""
    return str(spec).startswith(PREFIX)


def cache_dir() -> Path:
    """Where the downloaded dataset is kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "factres" / "hf"


def datasets_library():
    """The `datasets` library, imported here only (it is the `hf` extra, and loads slowly);
    a test replaces this function to load its small local copy without the library."""
    try:
        import datasets
    except ImportError:
        raise MissingExtraError(f"--data {ROUTE} needs the datasets library, which is not "
                                "installed: pip install 'factres[hf]'") from None
    return datasets


def hub_rows(spec: str) -> tuple[list[dict], str, tuple[str, ...]]:
    """(the FactConsolidation rows of `spec`'s Conflict_Resolution split, their sha256, notes),
    as `haystack.read_rows` gives a file's. InputError when the dataset cannot be loaded (no
    network and no cached copy: the message names the dataset and HF_DATASETS_OFFLINE), or has
    no FactConsolidation row."""
    name = spec[len(PREFIX):].strip()
    if not name:
        raise InputError(f"--data {spec!r} names no dataset", expected=f"{ROUTE}, or hf:FOLDER "
                         "for a local copy in the hub's layout")
    library = datasets_library()
    offline = os.environ.get(OFFLINE_ENV, "") not in ("", "0")
    try:
        table = library.load_dataset(name, split=SPLIT, cache_dir=str(cache_dir()))
        rows = [dict(row) for row in table]
    except Exception as exc:       # the library's own errors, of many types: said in one line
        where = "no copy in the cache" if offline else "the hub could not be reached and " \
            "no copy is in the cache"
        raise InputError(f"cannot load the Hugging Face dataset {name!r}, split {SPLIT} "
                         f"({where}; {OFFLINE_ENV}={'1' if offline else 'unset'}): "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                         expected=f"network access to the hub once (the copy is kept in "
                                  f"{cache_dir()}, ${CACHE_ENV}), then {OFFLINE_ENV}=1 works "
                                  "offline; or row files saved from the dataset") from None
    kept = [row for row in rows
            if str((row.get("metadata") or {}).get("source", "")).startswith(SOURCES)]
    if not kept:
        raise InputError(f"the Hugging Face dataset {name!r}, split {SPLIT}, has no "
                         f"FactConsolidation row (metadata.source {SOURCES}*) among its "
                         f"{len(rows)} rows", expected=f"the dataset {DATASET}")
    digest = hashlib.sha256(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)).hexdigest()
    notes = (f"{len(kept)} FactConsolidation rows of {len(rows)} in split {SPLIT}",)
    return kept, digest, notes


__all__ = ["DATASET", "HINT", "PREFIX", "ROUTE", "SPLIT", "cache_dir", "datasets_library",
           "hub_rows", "is_hub"]
