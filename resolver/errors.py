"""The one error type for bad input, and the library's other failures.

The library raises these; only the CLI turns them into messages and exit codes."""
from __future__ import annotations


class FactresError(Exception):
    """Base class of every error factres raises on purpose."""


class InputError(FactresError):
    """Bad input: names the file, the line (1-based), what was found and what was expected."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, context: str | None = None,
                 expected: str | None = None):
        self.path, self.line, self.column = path, line, column
        self.context, self.expected, self.detail = context, expected, message
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: {self.detail}"
        if self.expected:
            text += f" (expected {self.expected})"
        if self.context:
            text += f"\n    {self.context}"
        return text


class UnparsedLinesError(InputError):
    """Raised under --strict when some lines fit no fact template."""

    def __init__(self, path: str | None, unparsed: list) -> None:
        first = unparsed[0]
        more = f" (and {len(unparsed) - 1} more)" if len(unparsed) > 1 else ""
        super().__init__(f"{len(unparsed)} line(s) fit no fact template{more}",
                         path=path, line=first.line, context=first.text,
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


class ProvenanceError(FactresError):
    """A ledger operation that does not apply to the key's state (resolve on a key that is not
    contested, revoke on an empty key, ...), or a lookup of a key the store does not hold.
    Raised before anything changes: the ledger is left as it was."""
