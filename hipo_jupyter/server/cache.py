"""One `Memory` per folder for the life of the server, so each request does not reopen the index."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from hipo_jupyter.memory import Memory, MemoryConfig, resolve_team_url
from hipo_jupyter.team.link import team_backend


class MemoryCache:
    """Memory objects by resolved folder, least recently used dropped first beyond `size`;
    safe to share between the server's worker threads."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._memories: OrderedDict[Path, Memory] = OrderedDict()
        self._lock = threading.Lock()  # the server's workers share the cache

    def get(self, folder: Path) -> Memory:
        folder = folder.resolve()
        with self._lock:
            memory = self._memories.pop(folder, None)
        if memory is None:  # opened outside the cache's lock: another folder need not wait
            config = MemoryConfig(team_url=resolve_team_url())
            memory = Memory(folder, config=config, team=team_backend(config))
        with self._lock:
            self._memories[folder] = memory
            while len(self._memories) > self.size:
                # dropped, not closed: another worker may be answering with it; its files
                # close when the last reference goes
                self._memories.popitem(last=False)
        return memory

    def close(self) -> None:
        while self._memories:
            _, memory = self._memories.popitem()
            memory.close()

    def __len__(self) -> int:
        return len(self._memories)
