"""Who a memory folder is to the team database (issue 34): a stable random id kept in the folder.

A teammate is an identity, never a name and a path. Team rows belong to (database role, folder
id): the role is the server's `current_user`, the folder id is made here, 128 random bits, on the
first team sync of a folder, and kept in `memory/.team-folder-id`, beside the raw logs. Not in
`memory/.index/`: that folder is derived and deletable, and deleting it must not make the folder
somebody else. Two containers that are both `jovyan` at `/home/jovyan/work` are two folders with
two ids, and `HIPO_AUTHOR` set to a colleague's name changes the name shown, not whose rows a
sync may touch. Copying the folder (its memory/ with it) is the one way to share its identity.

The file is read like every file of the memory (`Store.read_file`: reached from the root by
directory descriptors, a regular file only, a bounded read) and written like every derived file
(`Store.write_atomic`), under the sync's lock, so two processes making it at once agree. A file
that is there but holds no id (edited, truncated, a folder or a FIFO in its place) is an error,
never replaced: a new id would make the folder a stranger to its own rows.

The id never leaves the folder (issue 51): rows hold its key (`folder_key`, a hash of it), so
an id cannot be read from the database, and a key read there and written into another folder's
id file is the key of nothing. The id is the folder's secret: keep it like the logs.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from hipo_jupyter.memory import HipoError
from hipo_jupyter.memory.disk import Store

from .schema import FOLDER_KEY_PREFIX

FOLDER_ID_FILE = ".team-folder-id"  # in memory/
_READ_LIMIT = 256  # bytes: an id is 33
_FOLDER_ID = re.compile(r"[0-9a-f]{32}")


class FolderIdError(HipoError):
    """The folder's id file is there but unusable: one line saying what to do."""


def folder_id_path(store: Store):
    return store.memory_dir / FOLDER_ID_FILE


def read_folder_id(store: Store) -> str | None:
    """The folder's id, None when it has none yet; FolderIdError when the file is damaged."""
    path = folder_id_path(store)
    shown = store.relative(path)
    try:
        data = store.read_file(path, _READ_LIMIT)
    except FileNotFoundError:
        return None
    except (OSError, HipoError) as error:  # not a regular file, too large, a link out
        raise FolderIdError(f"{shown} cannot be read ({error}); {_KEEP}") from None
    text = data.decode("ascii", "replace").strip()
    if not _FOLDER_ID.fullmatch(text):
        raise FolderIdError(f"{shown} holds no folder id; {_KEEP}")
    return text


_KEEP = (
    "restore it from a copy of this folder, or delete it to sync as a new teammate (the rows "
    "this folder sent stay in the team database, no longer its own)"
)


def folder_id(store: Store) -> str:
    """The folder's id, made and kept on first use. Call it holding the sync's lock."""
    found = read_folder_id(store)
    if found is not None:
        return found
    made = secrets.token_hex(16)
    # A first sync may run before the first write has made the folder and memory/ (a background
    # push beside `hipo remember` on a new folder): the id's folder is made here, not assumed.
    store.ensure_layout()
    store.write_atomic(folder_id_path(store), made + "\n")
    return made


def folder_key(folder_id: str) -> str:
    """What the team rows of the folder `folder_id` hold in their `folder_id` column: SHA-256
    of a fixed prefix and the id, 64 hex digits (`schema.FOLDER_KEY_SQL`, the same in SQL).
    The id is 128 random bits, so the key reveals nothing that can be copied."""
    data = (FOLDER_KEY_PREFIX + folder_id).encode("utf-8")
    return hashlib.sha256(data).hexdigest()
