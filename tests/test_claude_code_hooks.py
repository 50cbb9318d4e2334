"""Claude Code's hooks (issue 52, items 1 and 4): `hipo mcp --install claude-code` writes them,
and the real `hipo` command, run as Claude Code runs a hook (the event's JSON on stdin, as its
hooks reference documents it; the command taken from the settings it wrote, through a shell),
answers:

- SessionStart: Layer 1 fenced as memory, with its tokens, under 10,000 characters;
- UserPromptSubmit: the recalled memory for the prompt, nothing when nothing matches;
- Stop / PreCompact / SessionEnd: the transcript's exchanges as checkpoints (a detached writer):
  redacted, once each by the transcript's uuids, from "Claude Code", an agent; a forget holds;
- never a failure: bad input is exit 0 and one line in memory/.hooks.log;
- a copied folder answers from its own memory; another tool's hooks and settings survive an
  install and an uninstall.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hipo_jupyter.mcp import config as mcp_config
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import provenance_text, writer_of
from hipo_jupyter.memory.disk.trust import AGENT

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-12"
SECRET = "sk-ant-api03-" + "A" * 80
USER_UUID = "5d2c8a52-7b1e-4f0a-9a57-1c1b2f6e0a01"
REPLY_UUID = "9a1f3c77-2d4b-4c8e-8f11-6b0e2d7c9a02"
FENCE = re.compile(r"<hipo-layer1-\d{12}>")
OTHER_TOOL: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm run lint)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "prompt-guard --strict"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "bash-guard"}]}
        ],
        # looks like ours but is not: another program's `hook stop`
        "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/git/githooks hook stop"}]}],
    },
}


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPO_", "CLAUDE_"))}
    env.update(HOME=str(home), HIPO_TODAY=TODAY, HIPO_SEMANTIC="0", PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def hipo(home: Path, *args: str, cwd: Path | None = None, stdin: str = "") -> Any:
    return subprocess.run(
        [*mcp_config.hipo_command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment(home),
        cwd=cwd,
        timeout=120,
        check=False,
    )


def installed_hooks(settings: Path) -> dict[str, str]:
    """Claude Code event -> the command of ours the settings name for it."""
    data = json.loads(settings.read_text("utf-8"))
    found = {}
    for event, groups in data["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                if " hook " in f" {hook['command']} " and "hipo" in hook["command"]:
                    found[event] = hook["command"]
    return found


def run_hook(command: str, event: dict[str, Any], home: Path, cwd: Path) -> Any:
    """One hook as Claude Code runs it: through a shell, in the project, JSON on stdin,
    CLAUDE_PROJECT_DIR set to the project."""
    started = time.monotonic()
    done = subprocess.run(
        command,
        shell=True,  # noqa: S602 - Claude Code runs hook commands through a shell
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=environment(home, CLAUDE_PROJECT_DIR=str(cwd)),
        cwd=cwd,
        timeout=60,
        check=False,
    )
    done.seconds = time.monotonic() - started
    return done


def event_json(name: str, root: Path, transcript: Path, **fields: Any) -> dict[str, Any]:
    """The common fields every hook gets (Claude Code's hooks reference), and the event's."""
    common = {
        "session_id": "abc123",
        "transcript_path": str(transcript),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": name,
    }
    return {**common, **fields}


def transcript_lines(prompt: str = "", reply: str = "") -> list[dict[str, Any]]:
    """A session as Claude Code writes it: a summary, a user turn, a tool call and its result,
    the reply; each record with its uuid, parentUuid, sessionId and timestamp."""
    prompt = prompt or f"Set the starter tier to 49 EUR for the launch; the key is {SECRET}"
    reply = reply or "Done: pricing.yaml now has the starter tier at 49 EUR."
    base = {"isSidechain": False, "userType": "external", "sessionId": "abc123", "version": "2"}
    return [
        {"type": "summary", "summary": "Pricing", "leafUuid": REPLY_UUID},
        {**base, "type": "user", "uuid": USER_UUID, "parentUuid": None,
         "timestamp": f"{TODAY}T09:00:00.000Z", "message": {"role": "user", "content": prompt}},
        {**base, "type": "assistant", "uuid": "c1", "parentUuid": USER_UUID,
         "timestamp": f"{TODAY}T09:00:02.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": "edit the file"},
             {"type": "tool_use", "id": "t1", "name": "Edit", "input": {}}]}},
        {**base, "type": "user", "uuid": "c2", "parentUuid": "c1",
         "timestamp": f"{TODAY}T09:00:03.000Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {**base, "type": "assistant", "uuid": REPLY_UUID, "parentUuid": "c2",
         "timestamp": f"{TODAY}T09:00:05.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": reply}]}},
    ]  # fmt: skip


def write_transcript(home: Path, records: list[dict[str, Any]]) -> Path:
    path = home / ".claude" / "projects" / "-work-notebooks" / "abc123.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def wait_for(predicate: Any, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def session_checkpoints(root: Path) -> list[Any]:
    memory = Memory(root)
    try:
        return [c for c in memory.recent_checkpoints(50) if c.via == "claude-code"]
    finally:
        memory.close()


@pytest.fixture
def project(memory_root: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A notebook folder with one note, hipo installed for Claude Code in it: (root, home,
    the hook commands of its .claude/settings.json)."""
    home = tmp_path / "home"
    home.mkdir()
    note = hipo(home, "--root", str(memory_root), "remember", "--title", "Launch plan #launch",
                stdin="- decisions: moved the launch of the pricing page to May\n")  # fmt: skip
    assert note.returncode == 0, note.stderr
    done = hipo(home, "--root", str(memory_root), "mcp", "--install", "claude-code")
    assert done.returncode == 0, done.stderr
    return memory_root, home, installed_hooks(memory_root / ".claude" / "settings.json")


def test_install_writes_a_hook_for_each_event_with_no_root_in_it(project: Any) -> None:
    root, _, hooks = project
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"}
    assert all(str(root) not in command for command in hooks.values())
    server = json.loads((root / ".mcp.json").read_text("utf-8"))["mcpServers"]["hipo"]
    assert str(root) not in json.dumps(server)
    assert server["args"] == ["--root", "${CLAUDE_PROJECT_DIR:-.}", "mcp"]


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_gives_layer1_fenced_with_its_tokens(project: Any, source: str) -> None:
    root, home, hooks = project
    event = event_json("SessionStart", root, home / "t.jsonl", source=source)
    done = run_hook(hooks["SessionStart"], event, home, root)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert "moved the launch of the pricing page to May" in context
    assert FENCE.search(context) and re.search(r"Layer 1 \([\d,]+ tokens\)", context)
    assert len(context) < 10_000


def test_a_long_layer1_is_cut_under_the_limit_and_says_so(project: Any) -> None:
    root, home, hooks = project
    for name in ("SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md"):  # each at its budget
        lines = "".join(f"- lesson {n}: keep the fixtures small\n" for n in range(900))
        (root / name).write_text(f"# {name}\n{lines}", "utf-8")
    event = event_json("SessionStart", root, home / "t.jsonl", source="startup")
    context = json.loads(run_hook(hooks["SessionStart"], event, home, root).stdout)[
        "hookSpecificOutput"
    ]["additionalContext"]
    assert len(context) < 10_000 and "cut at" in context and FENCE.search(context)
    assert context.rstrip().endswith(">")  # the fence closed


def test_prompt_gets_the_recalled_memory_and_nothing_when_nothing_matches(project: Any) -> None:
    root, home, hooks = project
    asked = event_json("UserPromptSubmit", root, home / "t.jsonl",
                       prompt="When does the pricing page launch?")  # fmt: skip
    done = run_hook(hooks["UserPromptSubmit"], asked, home, root)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "moved the launch of the pricing page to May" in output["additionalContext"]
    assert re.search(r"<hipo-recalled-memory-\d{12}", output["additionalContext"])
    unrelated = event_json("UserPromptSubmit", root, home / "t.jsonl", prompt="zebra quokka")
    nothing = run_hook(hooks["UserPromptSubmit"], unrelated, home, root)
    assert nothing.returncode == 0 and nothing.stdout == ""


def test_stop_writes_each_exchange_once_redacted_from_claude_code_an_agent(project: Any) -> None:
    root, home, hooks = project
    transcript = write_transcript(home, transcript_lines())
    stop = event_json("Stop", root, transcript, stop_hook_active=False)
    done = run_hook(hooks["Stop"], stop, home, root)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert wait_for(lambda: session_checkpoints(root)), "the detached writer wrote nothing"
    (written,) = session_checkpoints(root)
    assert written.id == USER_UUID and writer_of(written) == AGENT
    assert provenance_text(written) == "Claude Code"
    assert written.field("request").startswith("Set the starter tier to 49 EUR")
    assert "pricing.yaml now has the starter tier" in written.field("outcome")
    log = (root / "memory" / f"{TODAY}.md").read_text("utf-8")
    assert SECRET not in log and "edit the file" not in log  # redacted; no thinking

    # PreCompact and SessionEnd hand in the same file: nothing twice. SessionEnd answers fast.
    compact = event_json("PreCompact", root, transcript, trigger="manual", custom_instructions="")
    end = event_json("SessionEnd", root, transcript, reason="prompt_input_exit")
    assert run_hook(hooks["PreCompact"], compact, home, root).returncode == 0
    ended = run_hook(hooks["SessionEnd"], end, home, root)
    assert ended.returncode == 0 and ended.seconds < 1.5, ended.seconds
    time.sleep(4)  # the detached writers have long finished (one takes ~1 s here)
    assert len(session_checkpoints(root)) == 1
    assert (root / "memory" / f"{TODAY}.md").read_text("utf-8").count(USER_UUID) == 1


def test_a_forgotten_exchange_is_not_written_again(project: Any) -> None:
    root, home, hooks = project
    transcript = write_transcript(home, transcript_lines())
    stop = event_json("Stop", root, transcript, stop_hook_active=False)
    run_hook(hooks["Stop"], stop, home, root)
    assert wait_for(lambda: session_checkpoints(root))
    forgot = hipo(home, "--root", str(root), "forget", USER_UUID)
    assert forgot.returncode == 0, forgot.stderr
    run_hook(hooks["Stop"], stop, home, root)
    time.sleep(4)
    assert session_checkpoints(root) == []
    assert "starter tier" not in (root / "memory" / f"{TODAY}.md").read_text("utf-8")


def test_memory_handed_to_the_session_is_not_written_back(project: Any) -> None:
    root, home, hooks = project
    start = event_json("SessionStart", root, home / "t.jsonl", source="startup")
    layer1 = json.loads(run_hook(hooks["SessionStart"], start, home, root).stdout)
    pasted = layer1["hookSpecificOutput"]["additionalContext"]
    records = transcript_lines(prompt=f"{pasted}\nWhat about the roadmap review?")
    transcript = write_transcript(home, records)
    run_hook(hooks["Stop"], event_json("Stop", root, transcript), home, root)
    assert wait_for(lambda: session_checkpoints(root))
    (written,) = session_checkpoints(root)
    assert written.field("request") == "What about the roadmap review?"


@pytest.mark.parametrize(
    "stdin", ["", "{not json", "[1, 2]", '{"cwd": 7, "prompt": ["x"]}', "{" * 100 + "}" * 100]
)
def test_a_hook_never_fails_the_session(project: Any, stdin: str) -> None:
    root, home, hooks = project
    for command in hooks.values():
        done = subprocess.run(command, shell=True, input=stdin, capture_output=True, text=True,  # noqa: S602
                              env=environment(home, CLAUDE_PROJECT_DIR=str(root)), cwd=root,
                              timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done
        if done.stdout:  # SessionStart needs nothing of the input: Layer 1 all the same
            assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_problems_are_one_line_each_in_the_hooks_log(project: Any, tmp_path: Path) -> None:
    root, home, hooks = project
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    run_hook(hooks["Stop"], event_json("Stop", root, fifo), home, root)
    run_hook(hooks["Stop"], {"cwd": str(root), "hook_event_name": "Stop"}, home, root)
    log = root / "memory" / ".hooks.log"
    assert wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 2)
    lines = log.read_text("utf-8").splitlines()
    assert any("not a regular file" in line for line in lines), lines
    assert any("no transcript_path" in line for line in lines), lines
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (stop|write): "  # write: the detached writer
    assert all(re.match(stamp, line) for line in lines), lines


def test_a_folder_without_memory_is_left_alone(tmp_path: Path, project: Any) -> None:
    _, home, hooks = project
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    transcript = write_transcript(home, transcript_lines())
    for name, command in hooks.items():
        done = run_hook(command, event_json(name, elsewhere, transcript, prompt="launch",
                                            source="startup"), home, elsewhere)  # fmt: skip
        assert done.returncode == 0 and done.stdout == ""
    time.sleep(2)
    assert list(elsewhere.iterdir()) == []


def test_a_copied_folder_talks_to_its_own_memory(project: Any, tmp_path: Path) -> None:
    root, home, _ = project
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    shutil.rmtree(root / "memory")  # the original's memory gone: the copy must not need it
    for note in ("ROOT.md",):
        assert (copy / "memory" / note).exists()
    hooks = installed_hooks(copy / ".claude" / "settings.json")
    asked = event_json("UserPromptSubmit", copy, home / "t.jsonl", prompt="pricing page launch")
    done = run_hook(hooks["UserPromptSubmit"], asked, home, copy)
    assert "moved the launch of the pricing page to May" in done.stdout
    server = json.loads((copy / ".mcp.json").read_text("utf-8"))["mcpServers"]["hipo"]
    args = [arg.replace("${CLAUDE_PROJECT_DIR:-.}", ".") for arg in server["args"]]  # unset
    status = subprocess.run([server["command"], *args[:2], "status", "--json"], cwd=copy,
                            capture_output=True, text=True, env=environment(home),
                            timeout=60, check=False)  # fmt: skip
    assert Path(json.loads(status.stdout)["root"]).resolve() == copy.resolve(), status.stderr


def test_install_keeps_another_tools_hooks_and_uninstall_takes_out_only_ours(
    memory_root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = memory_root / ".claude" / "settings.json"
    settings.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/hipo hook prompt"}  # an older install
    before = json.loads(json.dumps(OTHER_TOOL))
    before["hooks"]["UserPromptSubmit"][0]["hooks"].append(stale)
    settings.write_text(json.dumps(before), "utf-8")
    done = hipo(home, "--root", str(memory_root), "mcp", "--install", "claude-code")
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 2, done.stderr
    data = json.loads(settings.read_text("utf-8"))
    assert data["permissions"] == OTHER_TOOL["permissions"]
    assert data["hooks"]["PreToolUse"] == OTHER_TOOL["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"][0] == OTHER_TOOL["hooks"]["Stop"][0]
    assert data["hooks"]["UserPromptSubmit"][0] == OTHER_TOOL["hooks"]["UserPromptSubmit"][0]
    assert data["hooks"]["SessionEnd"][0] == OTHER_TOOL["hooks"]["SessionEnd"][0]
    assert "/old/venv" not in settings.read_text("utf-8")
    assert len(installed_hooks(settings)) == 5
    again = hipo(home, "--root", str(memory_root), "mcp", "--install", "claude-code")
    assert again.stdout.count("nothing changed") == 2
    removed = hipo(home, "--root", str(memory_root), "mcp", "--uninstall", "claude-code")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings.read_text("utf-8")) == OTHER_TOOL


def test_scope_user_writes_the_users_settings(memory_root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))
    done = hipo(home, "--root", str(memory_root), "mcp", "--install", "claude-code",
                "--scope", "user")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(installed_hooks(home / ".claude" / "settings.json")) == 5
    state = json.loads((home / ".claude.json").read_text("utf-8"))
    assert state["numStartups"] == 3 and "hipo" in state["mcpServers"]
    assert not (memory_root / ".claude").exists() and not (memory_root / ".mcp.json").exists()
    wrong = hipo(home, "--root", str(memory_root), "mcp", "--install", "jupyter-ai",
                 "--scope", "user")  # fmt: skip
    assert wrong.returncode == 2 and len(wrong.stderr.splitlines()) == 1


def test_the_module_entry_point_hands_stop_to_the_writer_too(project: Any) -> None:
    """`python -m hipo_jupyter.cli hook stop`: what the settings run when no `hipo` script
    exists, which goes through the CLI rather than the script's early hand-off."""
    root, home, _ = project
    transcript = write_transcript(home, transcript_lines())
    command = shlex.join([sys.executable, "-m", "hipo_jupyter.cli", "hook", "stop"])
    done = run_hook(command, event_json("Stop", root, transcript), home, root)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert wait_for(lambda: session_checkpoints(root)), "the detached writer wrote nothing"


def test_a_transcript_path_to_another_file_reads_nothing(project: Any, tmp_path: Path) -> None:
    """Only a `.jsonl` transcript is read: a hook input naming a private key (or any file that
    is not a session) writes nothing, and the log line does not quote the file."""
    root, home, hooks = project
    key = home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "utf-8")
    run_hook(hooks["Stop"], event_json("Stop", root, key), home, root)
    log = root / "memory" / ".hooks.log"
    assert wait_for(lambda: log.exists())
    text = log.read_text("utf-8")
    assert "not a Claude Code transcript" in text and "PRIVATE KEY" not in text
    assert session_checkpoints(root) == []
