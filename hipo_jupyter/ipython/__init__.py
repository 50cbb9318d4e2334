"""The IPython front end: `%load_ext hipo`, the magics, and the session other front ends share.

`current()` is the loaded session of this kernel (its `memory`, `settings` and `log`).
"""

from .ask import AskMagics
from .config import Hipo
from .display import RecallView
from .extension import load_ipython_extension, unload_ipython_extension
from .magics import HipoMagics
from .session import HipoSession, NotLoadedError, current

__all__ = [
    "AskMagics",
    "Hipo",
    "HipoMagics",
    "HipoSession",
    "NotLoadedError",
    "RecallView",
    "current",
    "load_ipython_extension",
    "unload_ipython_extension",
]
