"""The one error type for bad input, and the library's other failures.

The library raises these; only the CLI turns them into messages and exit codes."""
from __future__ import annotations


class FactresError(Exception):
    """Base class of every error factres raises on purpose."""


class InputError(FactresError):
    """Bad input: names the file, the row of a row file (0-based, as the JSON list counts), the
    line (1-based; in a row file, a line of that row's context), what was found and what was
    expected."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, context: str | None = None,
                 expected: str | None = None, row: int | None = None):
        self.path, self.line, self.column, self.row = path, line, column, row
        self.context, self.expected, self.detail = context, expected, message
        super().__init__(self._render())

    def at_row(self, row: int) -> "InputError":
        """Place the error in row `row` of its file (its line is then a context line)."""
        self.row = row
        self.args = (self._render(),)
        return self

    def _render(self) -> str:
        return self.render()

    def render(self, escape=None) -> str:
        """The message: "file:line: detail (expected ...)", then the context on a line of its
        own. `escape` (a writer's, e.g. `resolver.escape.terminal`) is applied to each part on
        its own, which may all quote user text: the only line break left is the message's own
        before the context, never one of a name it quotes."""
        esc = escape or (lambda text: text)
        where = place(self.path, self.line, row=self.row, column=self.column)
        text = f"{esc(where)}: {esc(self.detail)}" if where else esc(self.detail)
        if self.expected:
            text += f" (expected {esc(self.expected)})"
        if self.context:
            text += "\n    " + esc(clip(self.context))
        return text


def place(path: str | None, line: int | None, *, row: int | None = None,
          column: int | None = None) -> str:
    """Where something is, as messages name it: "file:line[:column]", or in a row file
    "file: row R, context line N" (the line is a line of that row's context)."""
    if row is not None:
        parts = [f"row {row}"]
        if line is not None:
            parts.append(f"context line {line}")
        where = ", ".join(parts)
        return f"{path}: {where}" if path else where
    if line is None:
        return path or ""
    where = f"{line}" if column is None else f"{line}:{column}"
    return f"{path}:{where}" if path else f"line {where}"


# How much of an offending line an error shows: a 1 MB line would bury the message.
CLIP = 200


def clip(text: str, limit: int = CLIP) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


# How many items of a list a message names: a file of 10^6 unknown ids must not become one
# 15 MB line.
FEW = 5


def first_few(items, limit: int = FEW, sep: str = ", ") -> str:
    """The first `limit` items joined, then how many more there are: "a, b, c and 7 more"."""
    items = [str(i) for i in items]
    shown = sep.join(items[:limit])
    return f"{shown} and {len(items) - limit} more" if len(items) > limit else shown


def several(value, argument: str, what: str, expected: str, *,
            kinds: tuple[type, ...] = (str,), alone: tuple[type, ...] = (str,)) -> tuple:
    """The items of an argument that takes several (files, plan set specs, plan sets, runs),
    as a tuple: one of a type in `alone` given alone stands for itself, not for its letters.
    InputError "{argument} must be {what}, not ..." (with `expected`) for bytes (read item by
    item, they were numbers: verify-e F19), for a value that holds no items (an int, None) or a
    string where a string is no item, and for an item of none of `kinds`. One check shared by
    `load`, `plan_sets`, `resolve`, `compare_runs`, `RunConfig` and `Memory`."""
    if isinstance(value, alone):
        return (value,)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise InputError(f"{argument} must be {what}, not bytes ({clip(repr(bytes(value)), 60)})",
                         expected=f"{expected}; text (str), not bytes")
    if isinstance(value, str):
        raise InputError(f"{argument} must be {what}, not str {clip(repr(value), 60)}",
                         expected=expected)
    try:
        items = tuple(value)
    except TypeError:
        raise InputError(f"{argument} must be {what}, not {type(value).__name__} "
                         f"{clip(repr(value), 60)}", expected=expected) from None
    for at, item in enumerate(items):
        if not isinstance(item, kinds):
            raise InputError(f"{argument} must be {what}: item {at} is "
                             f"{type(item).__name__} {clip(repr(item), 60)}", expected=expected)
    return items


class UnparsedLinesError(InputError):
    """Raised under --strict when some lines fit no fact template; names the first."""

    def __init__(self, path: str | None, unparsed: list, row: int | None = None) -> None:
        first = unparsed[0]
        count = (f"{len(unparsed)} lines fit no fact template; the first is shown"
                 if len(unparsed) > 1 else "1 line fits no fact template")
        super().__init__(count, path=path, line=first.line, context=first.text, row=row,
                         expected='"<serial>. <fact sentence>." in one of the MQuAKE templates')
        self.unparsed = unparsed


class MissingExtraError(FactresError):
    """An optional dependency is needed for what was asked."""


class ArchiveError(FactresError):
    """A plan set archive is missing, incomplete, or does not match its checksums."""


class RunExistsError(FactresError):
    """Results are never overwritten: the run id is taken."""


class ProtocolError(FactresError):
    """The dev/test protocol refuses a run: a test run from a dirty tree, without a frozen
    configuration, or with code, plans or weights that differ from the one it names."""


class ModelHostError(FactresError):
    """An Ollama host that cannot serve a lane: it refuses connections, does not answer within
    the timeout, does not have the model, or stopped answering partway (several calls in a row
    failed to connect or timed out). Raised before the first question when the host check
    fails, so no work is spent on a dead host."""


class LaneFailedError(FactresError):
    """Every call of a model lane (reader, repair) failed: the run would score the lane's
    silence, so it is not recorded."""


class ProvenanceError(FactresError):
    """A ledger operation that does not apply to the key's state (resolve on a key that is not
    contested, revoke on an empty key, ...), or a lookup of a key the store does not hold.
    Raised before anything changes: the ledger is left as it was."""


class MemoryFileError(InputError):
    """A memory file that cannot be opened, read or written as asked (a missing folder, a file
    that is not a factres memory, a newer schema, a damaged file, a full disk): the message
    names the path and what to do, and nothing was written."""


class MemoryLockedError(MemoryFileError):
    """A memory file another process holds open for writing (`pid`, when it could be read)."""

    def __init__(self, message: str, *, pid: int | None = None, **kwargs) -> None:
        self.pid = pid
        super().__init__(message, **kwargs)


class ForeignFolderError(InputError):
    """A folder that looks like a run folder (it has a meta.json) but was written by another
    tool: `factres tables` skips it with a note instead of a warning."""


class WorkerError(FactresError):
    """A run's worker process ended without sending its results (killed, out of memory): the
    run is not recorded."""


class FactresNote(UserWarning):
    """Something a user should know that stops nothing (a run id found in two places: which
    one was read). Issued with `warnings.warn`; the CLI prints each once as a `note:` line on
    stderr (`cli.options.library_errors`), the library leaves it to the caller."""
