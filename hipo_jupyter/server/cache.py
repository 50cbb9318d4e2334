"""One `Memory` per folder for the life of the server, so each request does not reopen the index."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.config import resolve_team_url


class MemoryCache:
    """Memory objects by resolved folder, least recently used closed first beyond `size`."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._memories: OrderedDict[Path, Memory] = OrderedDict()

    def get(self, folder: Path) -> Memory:
        folder = folder.resolve()
        memory = self._memories.pop(folder, None) or Memory(
            folder, config=MemoryConfig(team_url=resolve_team_url())  # $HIPO_TEAM: team=1
        )
        self._memories[folder] = memory
        while len(self._memories) > self.size:
            _, oldest = self._memories.popitem(last=False)
            oldest.close()
        return memory

    def close(self) -> None:
        while self._memories:
            _, memory = self._memories.popitem()
            memory.close()

    def __len__(self) -> int:
        return len(self._memories)
