"""`RunConfig`: everything that decides a run's predictions and scores, as the CLI and the
library pass it to `runs.execute` and `protocol.freeze`. Checked when it is made: a field a user
got wrong (`mode="Search"`, `timeout=nan`, `data="rows.json"`) is an InputError naming it, never
a run that records what it did not do."""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass

from resolver.errors import InputError, several
from resolver.haystack import bundled_path

MODES = ("search", "plain")
SPLITS = ("dev", "test")
ABSTAIN_LEVELS = ("low", "medium", "high")    # search.confidence's levels above "none"


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's predictions and scores.

    Checked when made: `mode` ("search", "plain" or None), `split` ("dev" or "test"),
    `timeout` (finite seconds above 0), `abstain_below` ("low", "medium", "high" or None), the
    flags (bools), `reader`, `repair` and `host` (None or a name) and the paths; a field out of
    its range raises InputError naming it (`RunConfig.mode is 'Search'`). One file or spec
    given alone (`data="rows.json"`, `plans="live:rules"`) stands for itself; paths become
    strings."""
    data: tuple[str, ...] = ()        # haystack files; () = the bundled 6K dev rows
    plans: tuple[str, ...] = ()       # plan set specs; () = live:rules then live:lexicon
    split: str = "dev"                # "dev": gold read and scored; "test": gold never read
    reader: str | None = None         # e.g. "ollama:qwen2.5:3b"; None = the resolver's string
    repair: str | None = None         # e.g. "ollama:qwen2.5:3b"; None = no repair
    host: str | None = None           # Ollama host for reader and repair
    timeout: float = 30.0             # seconds per model call
    mode: str | None = "search"       # "search" (scored path search) or "plain" (latest-wins
                                      # execution of the plans in order, the baseline); None:
                                      # the frozen configuration's, else "search"
    frozen: str | None = None         # frozen configuration file (factres freeze) to check
    allow_dirty: bool = False         # run a test split from a dirty tree or unfrozen config,
                                      # marked so in meta.json (see resolver.run.protocol)
    strict: bool = False              # a fact line that fits no template is an error
    allow_partial_plans: bool = False  # run with an archived plan set that covers none of
                                      # the questions (partial coverage is only a warning)
    abstain_below: str | None = None  # empty every answer whose confidence label is below
                                      # this level ("low", "medium", "high"); None: never

    def __post_init__(self) -> None:
        # One file or one spec given alone stands for itself, not for its letters; paths
        # become strings, as meta.json records them.
        set_field = object.__setattr__
        set_field(self, "data", _names("data", self.data, paths=True))
        set_field(self, "plans", _names("plans", self.plans))
        if self.frozen is not None:
            set_field(self, "frozen", _path("frozen", self.frozen))
        _one_of("split", self.split, SPLITS)
        _one_of("mode", self.mode, MODES, none="None: the frozen configuration's, else search")
        _one_of("abstain_below", self.abstain_below, ABSTAIN_LEVELS, none="None: never")
        for name in ("reader", "repair", "host"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InputError(f"RunConfig.{name} is {value!r}",
                                 expected="None or a name (reader and repair: ollama:MODEL)")
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) \
                or not math.isfinite(timeout) or timeout <= 0:
            raise InputError(f"RunConfig.timeout is {timeout!r}",
                             expected="a finite number of seconds above 0")
        for name in ("allow_dirty", "strict", "allow_partial_plans"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"RunConfig.{name} is {getattr(self, name)!r}",
                                 expected="True or False")

    def data_paths(self) -> tuple[str, ...]:
        return self.data or (str(bundled_path()),)

    def plan_specs(self) -> tuple[str, ...]:
        return self.plans or ("live:rules", "live:lexicon")


def _one_of(name: str, value, allowed: tuple[str, ...], none: str | None = None) -> None:
    if (value is None and none is not None) or value in allowed:
        return
    words = ", ".join(allowed[:-1]) + " or " + allowed[-1]
    raise InputError(f"RunConfig.{name} is {value!r}",
                     expected=words + (f"; or {none}" if none else ""))


def _path(name: str, value) -> str:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return os.fspath(value)
    raise InputError(f"RunConfig.{name} holds {value!r}", expected="a file path (str or Path)")


def _names(name: str, value, paths: bool = False) -> tuple[str, ...]:
    """A field of several names (files, plan set specs): a tuple of them; one name given alone
    is that name."""
    items = several(value, f"RunConfig.{name}", "file paths" if paths else "plan set specs",
                    "a tuple of file paths" if paths else "a tuple of plan set specs",
                    kinds=(object,), alone=(str, os.PathLike))
    if paths:
        return tuple(_path(name, item) for item in items)
    for item in items:
        if not isinstance(item, str) or not item:
            raise InputError(f"RunConfig.{name} holds {item!r}",
                             expected="plan set specs (live:rules, live:lexicon or a set id)")
    return items
