"""The benchmark scripts (benchmarks/*.py are scripts, not a package), imported for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(script: str, module_name: str) -> ModuleType:
    """benchmarks/`script` as a module named `module_name` (one name per test file, so each
    gets its own copy)."""
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module
