"""Writing back: a checkpoint after each cell that made LLM calls (unless it wrote one), a dump
after 20 calls without one, large replies and tool results offloaded to knowledge/, and the
session rules of `%hipo check`. The user's own SDK calls go to the fake API on 127.0.0.1."""

from __future__ import annotations

import re
from pathlib import Path

from claude_helpers import (  # noqa: F401
    SDK_CALL,
    TODAY,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter.ipython import current
from hipo_jupyter.memory import Memory

CALL = SDK_CALL
LARGE = "\n".join(
    f"Row {n}: order ORD-{1000 + n} shipped to warehouse WH-{n % 7} for ${n * 13}.00"
    for n in range(900)
)


def checkpoints(memory_root: Path):
    return Memory(memory_root).recent_checkpoints(50)[::-1]


def test_a_cell_with_calls_is_checkpointed_at_its_end(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    claude_shell.execution_count = 7
    run(claude_shell, CALL.format(prompt="Summarize churn drivers for Q1 by segment"))
    (checkpoint,) = checkpoints(memory_root)
    assert checkpoint.title == "Summarize churn drivers for Q1 by segment"  # its task
    assert checkpoint.tags == () and checkpoint.cell == "7"  # no topic of its own
    fields = dict(checkpoint.fields)
    assert fields["request"] == "Summarize churn drivers for Q1 by segment"
    assert fields["outcome"] == FakeMessagesAPI.default_reply(1, api.message_requests()[0])
    # the exchange's digest: a notebook run again writes the same call's checkpoint once
    assert re.fullmatch(
        r"console cell 7, claude-sonnet-5-5, exchange [0-9a-f]{16}", fields["references"]
    )


def test_a_cell_that_wrote_its_own_checkpoint_gets_no_second(
    claude_shell, memory_root: Path
) -> None:
    run(claude_shell, CALL.format(prompt="Which tier churns most?"))
    run(
        claude_shell,
        CALL.format(prompt="And why?")
        + "get_ipython().run_cell_magic('remember', 'Churn reasons', '- outcome: price')\n",
    )
    titles = [c.title for c in checkpoints(memory_root)]
    assert titles == ["Which tier churns most?", "Churn reasons"]


def test_cells_without_calls_and_the_setting_off_write_nothing(
    claude_shell, memory_root: Path, capsys
) -> None:
    run(claude_shell, "x = 1 + 1")
    claude_shell.run_cell("%config Hipo.auto_checkpoint = False")
    claude_shell.execution_count = 4
    run(claude_shell, CALL.format(prompt="Draft the churn email"))
    assert checkpoints(memory_root) == []

    claude_shell.run_cell("%hipo check")
    out = capsys.readouterr().out
    assert (
        "FAIL  every cell that made LLM calls is followed by a checkpoint: "
        "no checkpoint after cell [4]" in out
    )
    run(claude_shell, "%%remember Churn email drafted\n- outcome: sent to @maria for review")
    claude_shell.run_cell("%hipo check")
    assert (
        "pass  every cell that made LLM calls is followed by a checkpoint"
        in capsys.readouterr().out
    )


def test_twenty_calls_without_a_checkpoint_are_dumped_on_the_spot(
    claude_shell, memory_root: Path
) -> None:
    raw = memory_root / "memory" / f"{TODAY}.md"
    run(
        claude_shell,
        "import anthropic\nclient = anthropic.Anthropic()\nseen = []\n"
        "for n in range(25):\n"
        "    client.messages.create(model='claude-sonnet-5-5', max_tokens=10,\n"
        "        messages=[{'role': 'user', 'content': f'Classify ticket TCK-{n}'}])\n"
        f"    seen.append({str(raw)!r} and __import__('os').path.exists({str(raw)!r}))\n",
    )
    seen = claude_shell.user_ns["seen"]
    assert seen[:19] == [False] * 19 and seen[19] is True  # written right after the 20th call
    (dump,) = checkpoints(memory_root)  # and the cell, having one, gets no second
    assert dump.title == "20 Claude calls: Classify ticket TCK-0"
    assert dict(dump.fields)["request"] == "Classify ticket TCK-0 (+19 more calls)"


def test_a_large_reply_goes_to_knowledge_with_a_pointer_and_facts(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    api.replies.append(LARGE)
    run(claude_shell, CALL.format(prompt="List every shipped order"))
    (checkpoint,) = checkpoints(memory_root)
    outcome = dict(checkpoint.fields)["outcome"]
    (saved,) = (memory_root / "knowledge").glob("*.md")
    assert saved.read_text().count("ORD-") == 900  # the whole reply, kept
    relative = f"knowledge/{saved.name}"
    assert outcome.startswith(f"reply saved to {relative}; facts: Row 0: order ORD-1000")
    assert len(outcome) < 1000 and relative in dict(checkpoint.fields)["references"]
    assert current(claude_shell).memory.recall("ORD-1899").hits  # and it is searchable


def test_a_large_tool_result_in_the_prompt_is_offloaded_once(
    claude_shell, memory_root: Path
) -> None:
    cell = (
        "import anthropic\nclient = anthropic.Anthropic()\n"
        "result = {'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': LARGE}\n"
        "messages = [{'role': 'user', 'content': 'go'},\n"
        "    {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1',\n"
        "        'name': 'orders', 'input': {}}]},\n"
        "    {'role': 'user', 'content': [result]}]\n"
        "for _ in range(2):\n"
        "    client.messages.create(model='claude-sonnet-5-5', max_tokens=10, messages=messages)\n"
    )
    claude_shell.user_ns["LARGE"] = LARGE
    run(claude_shell, cell)
    assert len(list((memory_root / "knowledge").glob("*.md"))) == 1
    (checkpoint,) = checkpoints(memory_root)
    analysis = dict(checkpoint.fields)["analysis"]
    assert analysis.count("tool result saved to knowledge/") == 2  # one file, named twice


def test_a_streamed_reply_is_written_back(claude_shell, memory_root: Path) -> None:
    run(
        claude_shell,
        "import anthropic\n"
        "with anthropic.Anthropic().messages.stream(model='claude-sonnet-5-5', max_tokens=10,\n"
        "        messages=[{'role': 'user', 'content': 'Name the pricing owner'}]) as stream:\n"
        "    text = ''.join(stream.text_stream)\n",
    )
    (checkpoint,) = checkpoints(memory_root)
    assert dict(checkpoint.fields)["outcome"] == claude_shell.user_ns["text"]


def test_check_reports_each_rule(claude_shell, memory_root: Path, capsys) -> None:
    run(claude_shell, CALL.format(prompt="Plan the pricing review"))
    claude_shell.run_cell("%hipo compact")
    capsys.readouterr()
    claude_shell.run_cell("%hipo check")
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "pass  Layer 1 was loaded before the first LLM call",
        "pass  every cell that made LLM calls is followed by a checkpoint",
        "pass  raw logs parse",
        "pass  compaction state is fresh",
        "pass  Layer 1 is within budget",
        "pass  forgotten checkpoints leave no trace",
        "pass  forgets are obeyed by every copy",
        "all rules pass",
    ]

    claude_shell.run_cell("%hipo inject off")
    run(claude_shell, CALL.format(prompt="One more without memory"))
    capsys.readouterr()
    claude_shell.run_cell("%hipo check")
    out = capsys.readouterr().out
    assert "FAIL  Layer 1 was loaded before the first LLM call: 1 of 2 calls went without it" in out
    assert "pass  compaction state is fresh" in out and "1 of 7 rules fail" in out


def test_ask_no_memory_is_an_opt_out_not_a_violation(claude_shell, capsys) -> None:
    run(claude_shell, "%%ask --no-memory\nA question without memory")
    capsys.readouterr()
    claude_shell.run_cell("%hipo check")
    assert "pass  Layer 1 was loaded before the first LLM call" in capsys.readouterr().out
