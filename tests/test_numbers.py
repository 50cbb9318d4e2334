"""One number parser for every way in (issue 23): ASCII digits only, and real-number settings
finite. `²`, `①` and `٣` read as digits to `str.isdigit` or `int`, which made `hipo recall
--context --budget ²` a traceback (and the server a 500; see test_server_workers.py); `nan`
passed every Float's min and max and made every score NaN and the JSON invalid.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from test_magics import RaisingShell, bare_shell, run, shell  # noqa: F401, F811

from hipo_jupyter.ipython import current
from hipo_jupyter.ipython.config import FINITE
from hipo_jupyter.memory import MemoryConfig, QueryError
from hipo_jupyter.memory.config import FLOAT_SETTINGS
from hipo_jupyter.memory.requests import parse_number

ODD = ["²", "①", "٣", "１２", "1\u200b2", "nan", "inf", "1e3", "", "0x10"]


def hipo(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update(HIPO_TODAY="2026-03-12", HIPO_SEMANTIC="0")
    command = [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("value", ["²", "①", "٣", "nan"])
def test_cli_numbers_are_ascii_digits_in_one_line(memory_root: Path, value: str) -> None:
    assert hipo(memory_root, "init").returncode == 0
    for args in (("--context", "--budget", value), ("-k", value)):
        done = hipo(memory_root, "recall", "pricing", *args)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ODD)
def test_the_parser_takes_ascii_digits_only(value: str) -> None:
    with pytest.raises(QueryError) as error:
        parse_number(value, "-k")
    assert "\n" not in str(error.value)
    assert parse_number(" 42 ", "-k") == 42 and parse_number("2.5", "x", whole=False) == 2.5


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "nan", "-inf", "Infinity"])
def test_reals_are_finite(value: object) -> None:
    with pytest.raises(QueryError, match="x must be"):
        parse_number(value, "x", whole=False)


@pytest.mark.parametrize("name", FLOAT_SETTINGS)
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_the_engine_config_refuses_nan_and_infinity(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=name):
        MemoryConfig(**{name: value})


@pytest.mark.parametrize("name", [*FINITE, "recency_half_life_days", "timeout"])
def test_config_refuses_nan_for_every_real_setting(shell: RaisingShell, name: str) -> None:  # noqa: F811
    before = getattr(current(shell).settings, name)
    run(shell, f"%config Hipo.{name} = float('nan')")  # %config logs the refusal
    run(shell, f"%config Hipo.{name} = float('inf')")
    after = getattr(current(shell).settings, name)
    assert after == before and not math.isnan(after)


def test_magic_counts_are_ascii_digits(shell: RaisingShell) -> None:  # noqa: F811
    for value in ("②", "٣"):
        with pytest.raises(UsageError) as error:
            run(shell, f"%recall pricing -k {value}")
        assert "\n" not in str(error.value)
