"""`RunConfig`: everything that decides a run's predictions and scores, as the CLI and the
library pass it to `runs.execute` and `protocol.freeze`."""
from __future__ import annotations

from dataclasses import dataclass

from resolver.haystack import bundled_path


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's predictions and scores."""
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

    def data_paths(self) -> tuple[str, ...]:
        return self.data or (str(bundled_path()),)

    def plan_specs(self) -> tuple[str, ...]:
        return self.plans or ("live:rules", "live:lexicon")
