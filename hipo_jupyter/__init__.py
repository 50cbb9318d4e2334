"""hipo-jupyter: persistent agent memory for notebooks, after the Hipocampus protocol."""

from .memory import Memory, MemoryConfig

__version__ = "0.1.0"

__all__ = ["Memory", "MemoryConfig", "__version__"]
