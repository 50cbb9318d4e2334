"""Every engine file operation holds while another process swaps a folder for a symlink.

A separate process exchanges `knowledge/d` (a real folder) with a symlink to a folder outside
the root, as fast as it can (renameat2 RENAME_EXCHANGE, or two renames where that is missing),
while Claude's memory tool deletes and creates `knowledge/d/x.md` in a loop for a few seconds.
Checking a name and then acting on it by name loses this race thousands of times; walking from
the root with directory fds never does: the outside file is never deleted or rewritten, and no
temporary file is left anywhere.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory_tool import HipoMemoryTool

SECONDS = 4.0

SWAPPER = r"""
import ctypes, os, sys, time
folder, link, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
exchange = getattr(libc, "renameat2", None)
def swap():
    if exchange is not None and exchange(AT_FDCWD, folder.encode(), AT_FDCWD, link.encode(),
                                         RENAME_EXCHANGE) == 0:
        return
    os.rename(folder, folder + ".moving"); os.rename(link, folder)
    os.rename(folder + ".moving", link)
end = time.monotonic() + seconds
swaps = 0
while time.monotonic() < end:
    swap(); swaps += 1
if os.path.islink(folder):
    swap()
print(swaps)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_a_folder_swapped_for_a_symlink_never_lets_a_write_out(
    memory_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("precious\n")
    memory = Memory(memory_root)
    memory.init()
    knowledge = memory_root / "knowledge"
    (knowledge / "d").mkdir()
    (knowledge / "swap").symlink_to(outside)
    tool = HipoMemoryTool(memory)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(knowledge / "d"), str(knowledge / "swap"), "6"],
        stdout=subprocess.PIPE,
        text=True,
    )
    path = "/memories/knowledge/d/x.md"
    done = refused = 0
    try:
        time.sleep(0.3)  # the swapper is running
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            for command in (
                {"command": "create", "path": path, "file_text": "written by the tool\n"},
                {"command": "str_replace", "path": path, "old_str": "tool", "new_str": "agent"},
                {"command": "delete", "path": path},
            ):
                try:
                    tool.call(command)
                    done += 1
                except ToolError:
                    refused += 1
    finally:
        swapper.wait(timeout=30)
        memory.close()
    assert int(swapper.stdout.read()) > 100, "the swapper did not run"
    assert done and refused, (done, refused)  # both sides of the race were really met
    assert (outside / "x.md").read_text() == "precious\n"
    assert sorted(p.name for p in outside.iterdir()) == ["x.md"]
    left = [p for p in memory_root.rglob("*") if p.name.endswith(".tmp")]
    assert not left, left
