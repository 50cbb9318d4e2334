"""Rules with triggers: `- trigger:`/`- rule:` on feedback checkpoints, set by `--trigger` and
`--rule` in the magic and the CLI, a sparse index in Layer 1 within its own budget, ordered by
trigger, and a newer rule superseding an older one with the same trigger (kept in the log)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from claude_helpers import (  # noqa: F401
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.error import UsageError

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk.checkpoint import Checkpoint
from hipo_jupyter.memory.requests import CheckpointDraft, RequestError, pop_quoted_option
from hipo_jupyter.memory.views.rules import collect_rules, rules_index_text


def feedback(title: str, trigger: str, rule: str, line: int, day: str = "2026-03-12"):
    fields = (("trigger", trigger), ("rule", rule))
    return Checkpoint(title, type="feedback", fields=fields, date=day, line=line)


# --- the one parser ---------------------------------------------------------------------------
def test_trigger_and_rule_become_the_first_fields_and_imply_feedback() -> None:
    draft = CheckpointDraft.parse(
        "No Friday deploys", "- why: we broke prod", trigger=" before  a deploy ", rule="not Fri"
    )
    assert draft.type == "feedback"
    assert draft.body.split("\n")[:2] == ["- trigger: before a deploy", "- rule: not Fri"]


def test_a_trigger_on_another_type_or_empty_is_a_one_line_error() -> None:
    with pytest.raises(RequestError, match="for feedback checkpoints, not --type project"):
        CheckpointDraft.parse("X", "body", type="project", trigger="before a deploy")
    with pytest.raises(RequestError, match="--trigger needs a value"):
        CheckpointDraft.parse("X", "body", trigger="   ")


@given(
    value=st.text(alphabet=st.characters(blacklist_characters='"\n\r'), max_size=30),
    before=st.sampled_from(["", "Title ", "Title [feedback] "]),
    after=st.sampled_from(["", " --type feedback", " #tag"]),
)
def test_a_quoted_option_is_taken_whole_from_a_magic_line(value, before, after) -> None:
    rest, found = pop_quoted_option(f'{before}--trigger "{value}"{after}', "trigger")
    assert found == value
    assert rest.split() == (before + after).split()


def test_a_line_without_the_option_is_left_alone() -> None:
    assert pop_quoted_option("Title --type feedback", "trigger") == ("Title --type feedback", None)


# --- the index ----------------------------------------------------------------------------------
def test_a_newer_rule_with_the_same_trigger_supersedes_the_older() -> None:
    rules = collect_rules(
        [
            feedback("Old", "Before a deploy", "never on Friday", 1, "2026-03-01"),
            feedback("Plots", "when plotting", "label the axes", 5, "2026-03-02"),
            feedback("New", "before  a DEPLOY", "only Monday to Wednesday", 1, "2026-03-10"),
        ]
    )
    active = [rule for rule in rules if rule.active]
    assert [rule.rule for rule in active] == ["only Monday to Wednesday", "label the axes"]
    (old,) = [rule for rule in rules if not rule.active]
    assert old.superseded_by == "memory/2026-03-10.md#L1"
    text = rules_index_text(rules)
    assert "- before  a DEPLOY" not in text  # whitespace collapsed in the index line
    assert text.index("only Monday") < text.index("label the axes") < text.index("Superseded")
    assert (
        "- Before a deploy -> never on Friday -> memory/2026-03-01.md#L1 "
        "(superseded by memory/2026-03-10.md#L1)" in text
    )


def test_feedback_without_a_trigger_and_other_types_are_not_rules() -> None:
    plain = Checkpoint("Tone", type="feedback", fields=(("rule", "be brief"),), date="2026-03-01")
    project = Checkpoint("P", fields=(("trigger", "x"),), date="2026-03-01")
    assert collect_rules([plain, project]) == []


def test_rules_enter_layer1_after_root_within_their_own_budget(memory_root: Path) -> None:
    memory = Memory(memory_root, config=MemoryConfig())
    assert "RULES" not in [part.name for part in memory.layer1().parts]  # none yet: no part
    memory.remember("No Friday deploys", "- why: broke prod", trigger="before a deploy",
                    rule="never deploy on a Friday")  # fmt: skip
    layer1 = memory.layer1()
    assert [part.name for part in layer1.parts][:2] == ["ROOT", "RULES"]
    rules = layer1.parts[1]
    assert rules.budget == MemoryConfig().layer1_budgets["RULES"]
    assert "- before a deploy -> never deploy on a Friday -> memory/" in layer1.text
    assert "broke prod" not in layer1.text  # the full text stays on demand


def test_layer1_rules_follow_every_append_kept_or_not(memory_root: Path) -> None:
    """The rules are kept across this process's own appends that state none (no raw log read
    again for Layer 1 after a `%%remember`), and made again after a rule, another writer's
    append, or a hand edit of a log."""
    memory = Memory(memory_root, config=MemoryConfig())
    memory.remember("No Friday deploys", "x", trigger="before a deploy", rule="not on Friday")
    assert "not on Friday" in memory.layer1().text
    memory.remember("Pricing review", "- decisions: cut the starter tier")  # no rule: kept
    assert memory._views._rules is not None
    assert memory.layer1().text.count("-> not on Friday") == 1
    memory.remember("Deploy on Mondays", "x", trigger="before a deploy", rule="only Monday")
    assert "only Monday" in memory.layer1().text  # a rule: made again
    other = Memory(memory_root, config=MemoryConfig())
    other.remember("Tests first", "x", trigger="before a merge", rule="run the tests")
    memory.remember("Standup notes", "- outcome: nothing new")  # after another writer's rule
    assert "run the tests" in memory.layer1().text
    log = next((memory_root / "memory").glob("2*.md"))
    log.write_text(log.read_text().replace("run the tests", "run every test"))
    assert "run every test" in memory.layer1().text


def test_a_full_rules_budget_cuts_the_superseded_rules_first(memory_root: Path) -> None:
    config = MemoryConfig()
    config.layer1_budgets = {**config.layer1_budgets, "RULES": 60}
    memory = Memory(memory_root, config=config)
    for n in range(8):
        memory.remember(f"Rule {n}", "x", trigger="before a deploy", rule=f"check list {n}")
    part = memory.layer1().parts[1]
    assert part.truncated and part.tokens > 60
    assert "check list 7" in part.text  # the active rule survives; superseded ones are cut
    assert "check list 0" not in part.text


# --- front ends ---------------------------------------------------------------------------------
def test_remember_with_a_quoted_trigger_and_hipo_rules(claude_shell, capsys) -> None:
    run(
        claude_shell,
        '%%remember No Friday deploys --type feedback --trigger "before a deploy" '
        '--rule "never deploy on a Friday"\n- why: the on-call is thin at weekends',
    )
    run(claude_shell, '%%remember Deploys v2 --trigger "Before a deploy" --rule "ask #ops"\nok')
    capsys.readouterr()
    run(claude_shell, "%hipo rules")
    out = capsys.readouterr().out
    assert "- Before a deploy -> ask #ops -> memory/2026-03-12.md#L" in out
    assert "never deploy on a Friday" in out.split("Superseded")[1]
    run(claude_shell, "%hipo layer1")
    assert "ask #ops" in capsys.readouterr().out


def test_a_trigger_on_a_project_is_a_usage_error(claude_shell) -> None:
    with pytest.raises(UsageError, match="--trigger and --rule are for feedback checkpoints"):
        run(claude_shell, '%%remember Plan --type project --trigger "on Mondays"\n- x: y')


def test_cli_remember_trigger_and_rules(memory_root: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("- why: reviewers need context"))
    argv = ["--root", str(memory_root), "remember", "PR size", "--trigger", "before a PR",
            "--rule", "keep it under 400 lines"]  # fmt: skip
    assert cli.main(argv) == 0
    capsys.readouterr()
    assert cli.main(["--root", str(memory_root), "rules"]) == 0
    assert "- before a PR -> keep it under 400 lines -> memory/" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO("x"))
    bad = ["--root", str(memory_root), "remember", "X", "--type", "user", "--trigger", "t"]
    assert cli.main(bad) == 2
    assert capsys.readouterr().err.count("\n") == 1
