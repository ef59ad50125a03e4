"""`Frozen`: the behaviour `Fact` and the search's `Hop` share, an immutable slotted value that
compares, hashes, prints and pickles by its fields, as a frozen dataclass would. They are
hand-written slotted classes rather than dataclasses because a store holds a million facts and a
field may be computed (a fact's serial and text come from the context's shared `Lines`)."""
from __future__ import annotations


class Frozen:
    """Subclasses set `_FIELDS` (the field names, in order) and may override `_fields()` when a
    field is a property; they set their slots with `object.__setattr__`."""
    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is "
                             "immutable")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is "
                             "immutable")

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (type(self).__name__ + "(" +
                ", ".join(f"{n}={v!r}" for n, v in zip(self._FIELDS, self._fields())) + ")")

    def __reduce__(self):
        # Pickled (and copied) with its fields, in __init__'s order.
        return (type(self), self._fields())
