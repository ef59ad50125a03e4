"""factres's version, in a module of its own at the bottom of the stages: every stage may read it
(`from resolver._version import __version__`) without importing the package's `__init__`, which
resolves the public API lazily (`resolver.api`). `resolver.__version__` reads it from here."""
from __future__ import annotations

__version__ = "0.1.0"
