"""factres: a deterministic resolver for MemoryAgentBench FactConsolidation.

Data flows one way: text -> facts -> store -> plans -> paths -> predictions -> metrics."""
from __future__ import annotations

__version__ = "0.1.0"
