"""Forget: the user's power to remove a checkpoint for good, and every holder's duty to obey it.

One job in one room (issue 54): what a forget records, the steps that carry it out, and the
refusal that keeps forgotten content from coming back. Modules:

- `ledger.py` the forget ledger, `memory/.forgotten.json`: what the user forgot or a
  correction superseded, as keyed hashes (no text), published to every holder of memory (a
  kernel's conversation and pinned Layer 1, the server, recall, the write path).
- `forgetting.py` the forget itself (`Memory.forget`): the checkpoint found by its id, the
  ledger's pending event, the raw log rewritten to a tombstone, the nodes over its day dropped
  to be rebuilt, the scan of every file under the root, the `ForgetReport`.
- `scrubbing.py` its later steps: the derived copies of the text (conversations, last-sent
  records, the index's SQLite files, derived stores) found and removed.
- `refusal.py` the refusal (`kept_out`): a write of forgotten content, by any writer but the
  user saying it again on purpose, is not written.

Where it sits: above `tree` and below `recall`, because every holder of memory obeys a forget
and so reads this room, while the forget itself needs no holder: recall hides a pending
forget's text and a teammate's copy of forgotten content (the ledger), `views` checks forgets
(`hipo check`) and rebuilds nodes as a forget does (corrections), `intake` asks the refusal
before each write. The steps reach the index, the tree's compaction and the team only through
the `Memory` handed in (`forgetting.ForgettingMemory`, a Protocol), never by importing a room
above.

May import: `disk`, `tree`, `search` (types only), `errors`, `config` (types only), and itself.
Must not import `recall`, `views`, `intake` or `memory`.
"""

from .forgetting import (
    ForgetReport,
    checkpoint_id_at,
    drop_nodes,
    find_checkpoint,
    forget,
    without_checkpoint,
)
from .ledger import (
    FORGOTTEN_MARK,
    LEDGER_FILE,
    RESTORE,
    ForgetEvent,
    ForgetLedger,
    LedgerDamaged,
)
from .refusal import kept_out
from .scrubbing import holds, regular_files, without_lineage

__all__ = [
    "FORGOTTEN_MARK",
    "LEDGER_FILE",
    "RESTORE",
    "ForgetEvent",
    "ForgetLedger",
    "ForgetReport",
    "LedgerDamaged",
    "checkpoint_id_at",
    "drop_nodes",
    "find_checkpoint",
    "forget",
    "holds",
    "kept_out",
    "regular_files",
    "without_checkpoint",
    "without_lineage",
]
