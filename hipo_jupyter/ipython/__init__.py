"""The IPython front end: `%load_ext hipo`, the magics, and the session other front ends share.

`current()` is the loaded session of this kernel (its `memory`, `settings` and `log`).

- `extension.py` `%load_ext hipo` and its unload; `session.py` the kernel's session (the open
  `Memory`, the settings, what happened); `startup.py` what the session found at start;
  `config.py` the settings as traitlets (`c.Hipo...`).
- `magics.py` `%%remember`, `%recall`, `%%sparql` and `%hipo`; `ask.py` `%%ask`;
  `questions.py` `%recall ...?` read as a question; `completer.py` TAB completion.
- `writeback.py` the notebook's LLM calls written back, and the protocol checked.
- `display.py` rich display (Markdown replies never live HTML); `widgets.py` the Topics Index
  and the context budget as ipywidgets, loaded only where a kernel can draw them;
  `progress.py` progress bars.

May import: the engine's faces (`hipo_jupyter.memory` and its rooms' `__init__`), `llm/`
(prompts, Layer 1 injection, conversations), `team/` (the team link), `terminal`, IPython and
ipywidgets. Not `cli/`, `mcp/` or `server/`: the front ends stand side by side.
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
