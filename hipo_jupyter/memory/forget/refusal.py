"""The refusal: a forget is remembered, so no writer brings forgotten content back.

Content the user forgot (its keyed hash in the ledger, `ledger.ForgetLedger.content_key`), or a
checkpoint under a forgotten id (an imported turn keeps its source's id), is not written again
by any writer: a notebook run again, an import of the same file, a write-back, a teammate's
copy. `intake/writing` asks `kept_out` before each append and writes nothing when it answers;
the checkpoint it answers comes back `repeated` and `forgotten`, so the front end says so in one
line. The user saying it again on purpose (`disk/trust.says_again`: the CLI, the sidebar) is
their new word: it is written, and the content leaves the ledger (`ForgetLedger.said_again`).
"""

from __future__ import annotations

from dataclasses import replace

from ..disk.checkpoint import Checkpoint
from ..disk.trust import says_again
from .ledger import ForgetLedger


def kept_out(ledger: ForgetLedger, checkpoint: Checkpoint) -> Checkpoint | None:
    """The forgotten checkpoint whose content (or id) `checkpoint` is, marked `repeated`
    and `forgotten`, or None: a forget is remembered. Cheap when nothing was forgotten.
    The user saying it again on purpose (`trust.says_again`: the CLI, the sidebar) is
    written, and the content leaves the ledger."""
    forgotten = ledger.forgotten()
    if not forgotten:
        return None
    by_id = {event.id: event for event in forgotten}
    event = by_id.get(checkpoint.id or "") or ledger.forgotten_content().get(
        ledger.content_key(checkpoint))  # fmt: skip
    if event is None:
        return None
    if says_again(checkpoint.via):  # the user's own new word: written, no longer forgotten
        ledger.said_again(event)
        return None
    return replace(checkpoint, id=event.id, date=event.day or None, line=0, repeated=True,
                   forgotten=True)  # fmt: skip
