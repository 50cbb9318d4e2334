"""Forget is one room (issue 54, item 2): the ledger, the steps after the log, the scrubbing of
derived copies and the refusal of forgotten content live in `hipo_jupyter/memory/forget/`, and
the rest of the engine reaches them through the room's face only."""

from __future__ import annotations

from test_layout import ENGINE, engine_imports, face_exports, imported_names, module_files

ROOM = f"{ENGINE}.forget"


def test_the_rest_of_the_engine_reaches_forget_through_its_face() -> None:
    """recall, views, intake and Memory import `forget`'s face, never a module inside it (so
    the room's modules can change without touching them), and only names its `__all__` lists.
    Imports inside functions and under TYPE_CHECKING count."""
    exported = face_exports(ROOM)
    breaks = []
    for module, path in module_files().items():
        if not module.startswith(ENGINE) or module.startswith(ROOM):
            continue
        for name in imported_names(module, path, lazy=True):
            if name.startswith(ROOM + ".") and name[len(ROOM) + 1 :] not in exported:
                breaks.append(f"{module} imports {name}")
    assert breaks == []
    assert all(
        ROOM in engine_imports()[user]
        for user in (f"{ENGINE}.memory", f"{ENGINE}.recall.recall_run")
    )


def test_each_part_of_forget_lives_in_the_room() -> None:
    """The parts once spread over recall/, views/ and intake/ by a module cap."""
    import hipo_jupyter.memory.forget as forget
    from hipo_jupyter.memory.intake import writing

    for part in ("ForgetLedger", "forget", "without_lineage", "kept_out"):
        assert getattr(forget, part).__module__.startswith(ROOM + "."), part
    assert not hasattr(writing.Writer, "kept_out")  # the refusal is the room's decision
    leftovers = [m for m in module_files() if m.rsplit(".", 1)[-1] in
                 ("forgotten", "forgetting", "scrubbing") and not m.startswith(ROOM)]  # fmt: skip
    assert leftovers == []
