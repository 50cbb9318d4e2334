"""The `hipo` command: every subcommand in-process through `main`, once as a real process, and a
month of checkpoints written through `remember --date` that the tree, the Topics Index and recall
must all account for, and that survive deleting every derived file."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.cli import demo
from hipo_jupyter.cli import parser as cli_parser
from hipo_jupyter.memory import HipoError

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-12"


class TTYStream(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def hipo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], memory_root: Path):
    """Run `hipo --root <memory_root> ARGS` in-process; returns (exit code, stdout, stderr)."""
    monkeypatch.setenv("HIPO_TODAY", TODAY)

    def run(*args: str, stdin: str = "", root: Path | None = memory_root):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        argv = ["--root", str(root), *args] if root is not None else list(args)
        code = cli.main(argv)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hipo: error:")
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0]


# --- commands one by one ------------------------------------------------------------------------


def test_init_creates_the_layout(hipo, memory_root: Path) -> None:
    code, out, _ = hipo("init")
    assert code == 0
    assert str(memory_root) in out
    assert (memory_root / "memory").is_dir()
    for name in ("SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md"):
        assert (memory_root / name).is_file()


def test_init_creates_a_missing_root_folder(hipo, memory_root: Path) -> None:
    code, _, _ = hipo("init", root=memory_root / "new" / "project")
    assert code == 0
    assert (memory_root / "new" / "project" / "memory").is_dir()


def test_remember_reads_the_body_from_stdin(hipo, memory_root: Path) -> None:
    body = "- decisions: recommend a 15% cut on the starter tier\n- outcome: report shared\n"
    code, out, _ = hipo(
        "remember", "Competitor", "pricing", "--tags", "pricing,q1", "--date", "2026-03-05",
        stdin=body,
    )
    assert code == 0
    raw = memory_root / "memory" / "2026-03-05.md"
    text = raw.read_text(encoding="utf-8")
    assert "## Competitor pricing" in text
    assert "recommend a 15% cut on the starter tier" in text
    assert "tags=pricing,q1" in text
    # prints the file and the checkpoint id, and the id is the one written to the log
    file, checkpoint_id = out.split()
    assert file == "memory/2026-03-05.md"
    assert f"id={checkpoint_id}" in text


def test_remember_title_option_type_and_default_date(hipo, memory_root: Path) -> None:
    code, out, _ = hipo(
        "remember", "--title", "Always cite sources", "--type", "feedback",
        stdin="- rule: cite the source of every number\n",
    )
    assert code == 0
    assert out.startswith(f"memory/{TODAY}.md")  # HIPO_TODAY is the default day
    text = (memory_root / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    assert "## Always cite sources [feedback]" in text


def test_remember_reads_type_and_tags_from_the_title_as_the_magic_does(
    hipo, memory_root: Path
) -> None:
    code, _, _ = hipo(
        "remember", "Cite sources [feedback] #reporting", "--tags", "q1", "--date", "2026-03-05",
        stdin="- rule: cite the source of every number\n",
    )
    assert code == 0
    text = (memory_root / "memory" / "2026-03-05.md").read_text(encoding="utf-8")
    assert "## Cite sources [feedback]" in text
    assert "tags=reporting,q1" in text


def test_remember_without_a_title_is_a_usage_error(hipo) -> None:
    code, _, err = hipo("remember", stdin="- outcome: nothing\n")
    assert_one_line_error(code, err, "title")


@pytest.mark.parametrize("bad", ["2026-13-01", "12/03/2026", "yesterday", "20260312"])
def test_bad_date_is_one_line_and_exit_2(hipo, memory_root: Path, bad: str) -> None:
    code, _, err = hipo("remember", "Title", "--date", bad, stdin="x\n")
    assert_one_line_error(code, err, "bad date", "YYYY-MM-DD")
    assert not list((memory_root).rglob("*.md"))  # nothing written


def test_bad_recall_filters_are_usage_errors(hipo) -> None:
    assert_one_line_error(*hipo("recall", "x", "--since", "March")[::2], "bad date")
    assert_one_line_error(*hipo("recall", "x", "--type", "diary")[::2], "must be one of")
    assert_one_line_error(*hipo("recall", "x", "-k", "0")[::2], "at least 1")
    assert_one_line_error(*hipo("frobnicate")[::2], "invalid choice")
    assert_one_line_error(*hipo(root=None)[::2], "required")


def test_bad_hipo_today_is_reported(hipo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPO_TODAY", "soon")
    code, _, err = hipo("status")
    assert_one_line_error(code, err, "HIPO_TODAY")


def test_missing_root_is_a_clear_message(hipo, memory_root: Path) -> None:
    code, _, err = hipo("recall", "pricing", root=memory_root / "nowhere")
    assert_one_line_error(code, err, "nowhere", "does not exist")


def test_root_that_is_a_file_is_a_clear_message(hipo, memory_root: Path) -> None:
    not_a_folder = memory_root / "notes.txt"
    not_a_folder.write_text("hello")
    code, _, err = hipo("remember", "Title", stdin="x", root=not_a_folder)
    assert_one_line_error(code, err, "not a folder")


def _unwritable_folder(tmp: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp / "readonly"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    # root ignores permission bits; sysfs refuses new files even to root
    sysfs = Path("/sys")
    if not sysfs.is_dir() or os.access(sysfs / "hipo-probe", os.F_OK):
        pytest.skip("no unwritable folder available when running as root")
    return sysfs


def test_unwritable_root_is_a_clear_message(hipo, memory_root: Path) -> None:
    folder = _unwritable_folder(memory_root)
    try:
        code, _, err = hipo("remember", "Title", stdin="- outcome: x\n", root=folder)
    finally:
        if folder != Path("/sys"):
            folder.chmod(0o700)
    assert_one_line_error(code, err)
    assert str(folder) in err or "permission" in err.lower() or "not permitted" in err.lower()


def test_recall_prints_hits_and_json(hipo) -> None:
    hipo("remember", "Competitor pricing", "--tags", "pricing", "--date", "2026-03-05",
         stdin="- decisions: cut the starter tier by 15%\n")
    hipo("remember", "Hiring plan", "--tags", "hiring", "--date", "2026-03-06",
         stdin="- decisions: open two data roles\n")

    code, out, _ = hipo("recall", "starter", "tier")
    assert code == 0
    assert "Competitor pricing" in out and "Hiring plan" not in out
    lines = out.splitlines()  # the answer first: heading, passage, where it came from
    assert lines[1].startswith("1. 2026-03-05 [project] Competitor pricing")
    assert "cut the starter tier by 15%" in lines[2]
    assert re.fullmatch(r"   from the command line · id \S+-[0-9a-f]{8}", lines[3]), lines[3]
    assert " -> " not in out  # the tree path only on request
    code, with_paths, _ = hipo("recall", "starter", "tier", "--paths")
    assert code == 0 and "-> memory/2026-03-05.md#L" in with_paths

    code, out, _ = hipo("recall", "starter", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["query"] == "starter"
    assert set(payload) == {"query", "mode", "hits", "did_you_mean", "topic_matches"}
    hit = next(h for h in payload["hits"] if h["kind"] == "raw")
    assert set(hit) == {
        "file", "line", "date", "kind", "type", "title", "snippet", "score", "path", "topics",
        "provenance", "writer", "id",
    }
    assert hit["writer"] == "user"  # typed: who wrote it, never read from the phrase
    assert hit["file"] == "memory/2026-03-05.md"
    assert hit["date"] == "2026-03-05"
    assert hit["title"] == "Competitor pricing"
    assert hit["type"] == "project"
    assert isinstance(hit["line"], int) and isinstance(hit["score"], float)
    assert isinstance(hit["path"], list)


def test_recall_filters_reach_the_engine(hipo) -> None:
    hipo("remember", "Early pricing", "--date", "2026-02-02", stdin="- decisions: pricing A\n")
    hipo("remember", "Late pricing", "--date", "2026-03-02", stdin="- decisions: pricing B\n")
    hipo("remember", "Pricing rule", "--type", "feedback", "--date", "2026-03-03",
         stdin="- rule: pricing C\n")

    def titles(*args: str) -> set[str]:
        code, out, _ = hipo("recall", "pricing", "--json", "-k", "20", *args)
        assert code == 0
        return {h["title"] for h in json.loads(out)["hits"] if h["kind"] == "raw"}

    assert titles() == {"Early pricing", "Late pricing", "Pricing rule"}
    assert titles("--since", "2026-03-01") == {"Late pricing", "Pricing rule"}
    assert titles("--until", "2026-02-28") == {"Early pricing"}
    assert titles("--type", "feedback") == {"Pricing rule"}
    code, out, _ = hipo("recall", "pricing", "--json", "-k", "1")
    assert len(json.loads(out)["hits"]) == 1


def test_recall_with_nothing_found(hipo) -> None:
    hipo("init")
    code, out, _ = hipo("recall", "zeppelin")
    assert code == 0
    assert "No memory of 'zeppelin'" in out


def test_status_text_and_json(hipo, memory_root: Path) -> None:
    hipo("remember", "Competitor pricing", "--tags", "pricing", "--date", "2026-03-05", stdin="x\n")
    hipo("remember", "Hiring plan", "--tags", "hiring", "--date", "2026-03-06", stdin="y\n")
    code, out, _ = hipo("status", "--json")
    assert code == 0
    status = json.loads(out)
    assert status["raw_days"] == 2
    assert status["checkpoints"] == 2
    assert Path(status["root"]) == memory_root
    assert set(status["nodes"]) >= {"daily", "weekly", "monthly"}
    code, out, _ = hipo("status")
    assert code == 0
    assert "2 days, 2 checkpoints" in out


def test_compact_builds_the_tree_silently_off_a_tty(hipo, memory_root: Path) -> None:
    # a log another tool wrote (`hipo remember` compacts after itself)
    (memory_root / "memory").mkdir()
    (memory_root / "memory" / "2026-03-05.md").write_text("## Competitor pricing #pricing\nx\n")
    code, out, err = hipo("compact")
    assert code == 0
    assert "memory/daily/2026-03-05.md" in out
    assert (memory_root / "memory" / "ROOT.md").is_file()
    assert err == ""  # no progress bar when stderr is not a terminal
    code, out, _ = hipo("compact")
    assert "Nothing to compact" in out


def test_reindex_counts_documents(hipo) -> None:
    hipo("remember", "Competitor pricing", "--date", "2026-03-05", stdin="x\n")
    hipo("compact")
    code, out, err = hipo("reindex")
    assert code == 0
    count = int(re.search(r"Indexed (\d+) documents", out).group(1))
    assert count >= 2  # the checkpoint and at least its daily node
    assert err == ""


def test_progress_bar_draws_only_on_a_tty() -> None:
    tty = TTYStream()
    with cli.ProgressBar(tty) as progress:
        progress(0, 4, "daily")
        progress(4, 4, "weekly")
    assert "weekly" in tty.getvalue() and "4/4" in tty.getvalue()

    pipe = io.StringIO()
    with cli.ProgressBar(pipe) as progress:
        progress(2, 4, "daily")
    assert pipe.getvalue() == ""


def test_layer1_prints_text_and_a_token_summary(hipo) -> None:
    hipo("init")
    hipo("remember", "Competitor pricing", "--tags", "pricing", "--date", "2026-03-05", stdin="x\n")
    hipo("compact")
    code, out, err = hipo("layer1")
    assert code == 0
    assert "# memory/ROOT.md" in out and "# SCRATCHPAD.md" not in out  # untouched: left out
    summary = {line.split()[0]: line for line in err.strip().splitlines()}
    assert {"ROOT", "SCRATCHPAD", "WORKING", "TASK-QUEUE", "total"} <= set(summary)
    assert re.search(r"ROOT\s+memory/ROOT\.md\s+[\d,]+\s+3,000\s", summary["ROOT"])
    assert err.startswith("Layer 1: ")  # the same table %hipo budget and the widget print


# --- help text (docs drift) ---------------------------------------------------------------------


def test_every_command_has_a_handler_and_a_help_line() -> None:
    assert list(cli.COMMANDS) == list(cli_parser.HELP)


def test_every_command_and_option_has_help() -> None:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert set(commands.choices) >= {
        "init", "remember", "recall", "compact", "status", "layer1", "reindex", "check", "demo",
    }
    helped = {action.dest: action.help for action in commands._choices_actions}
    for name, subparser in commands.choices.items():
        assert helped.get(name), f"`hipo {name}` has no help string"
        for action in subparser._actions:
            assert action.help, f"`hipo {name}` option {action.dest} has no help string"


def test_help_exits_zero(hipo, capsys) -> None:
    code, out, _ = hipo("--help", root=None)
    assert code == 0
    assert "remember" in out and "HIPO_ROOT" in out
    code, out, _ = hipo("recall", "--help", root=None)
    assert code == 0 and "--since" in out


# --- a month of checkpoints ---------------------------------------------------------------------

TOPICS = ("pricing", "onboarding", "churn", "forecast", "hiring", "infra")
TITLE_WORDS = (
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "orion", "vega", "lyra", "draco"
)
DECISION_WORDS = (
    "basalt", "cobalt", "granite", "jasper", "marble", "quartz", "onyx", "topaz", "garnet", "opal",
    "amber", "jade", "pearl", "ruby", "flint", "slate", "shale", "gypsum", "mica", "talc",
    "zircon", "beryl", "agate", "coral", "ivory", "obsidian", "pumice", "sulfur", "feldspar",
    "zinc"
)
FIRST_DAY = date(2026, 2, 1)


def month_of_checkpoints() -> list[dict[str, str]]:
    entries = []
    for number in range(30):
        day = FIRST_DAY + timedelta(days=number)
        topic = TOPICS[number % len(TOPICS)]
        entries.append(
            {
                "date": day.isoformat(),
                "topic": topic,
                "title": f"{topic.capitalize()} review {TITLE_WORDS[number]}",
                "decision_word": DECISION_WORDS[number],
                "body": (
                    f"- request: look at the {topic} numbers of the week\n"
                    f"- analysis: compared this week with the previous one\n"
                    f"- decisions: adopt the {DECISION_WORDS[number]} plan\n"
                    f"- outcome: shared with the team\n"
                ),
            }
        )
    return entries


def derived_files(root: Path) -> dict[str, bytes]:
    memory = root / "memory"
    files = [memory / "ROOT.md"]
    for level in ("daily", "weekly", "monthly"):
        files += sorted((memory / level).glob("*.md"))
    return {f.relative_to(root).as_posix(): f.read_bytes() for f in files}


def topics_index_section(root: Path) -> str:
    text = (root / "memory" / "ROOT.md").read_text(encoding="utf-8")
    match = re.search(r"^## Topics Index[^\n]*\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.M)
    return match.group(1).strip() if match else ""


def test_a_month_of_checkpoints_through_the_cli(hipo, memory_root: Path) -> None:
    entries = month_of_checkpoints()
    for entry in entries:
        code, _, err = hipo(
            "remember", entry["title"], "--tags", entry["topic"], "--date", entry["date"],
            stdin=entry["body"],
        )
        assert code == 0, err
    code, _, err = hipo("compact")
    assert code == 0, err

    memory = memory_root / "memory"
    assert (memory / "ROOT.md").is_file()
    assert len(list((memory / "daily").glob("*.md"))) == 30
    # Feb 1 2026 is a Sunday (ISO week 5, whose Thursday is in January); Mar 2 starts week 10
    assert {p.stem for p in (memory / "weekly").glob("*.md")} == {
        f"2026-W{week:02d}" for week in range(5, 11)
    }
    assert {p.stem for p in (memory / "monthly").glob("*.md")} == {"2026-01", "2026-02", "2026-03"}

    index = topics_index_section(memory_root)
    for topic in TOPICS:
        assert re.search(rf"^- {topic}\b", index, re.MULTILINE), f"{topic} not in\n{index}"

    def recall(word: str) -> list[dict]:
        code, out, err = hipo("recall", word, "--json", "-k", "10")
        assert code == 0, err
        return json.loads(out)["hits"]

    def finds(hits: list[dict], entry: dict[str, str]) -> bool:
        return any(
            h["kind"] == "raw"
            and h["file"] == f"memory/{entry['date']}.md"
            and h["title"] == entry["title"]
            for h in hits
        )

    before = {}
    for number, entry in enumerate(entries):
        by_title = recall(TITLE_WORDS[number])
        by_decision = recall(entry["decision_word"])
        assert finds(by_title, entry), (entry["title"], by_title)
        assert finds(by_decision, entry), (entry["decision_word"], by_decision)
        before[number] = (by_title, by_decision)

    # the index is derived: without it, recall answers the same
    shutil.rmtree(memory / ".index")
    for number, entry in enumerate(entries):
        assert (recall(TITLE_WORDS[number]), recall(entry["decision_word"])) == before[number]

    # the tree is derived: rebuilt from the raw logs, byte for byte
    tree = derived_files(memory_root)
    for level in ("daily", "weekly", "monthly"):
        shutil.rmtree(memory / level)
    (memory / "ROOT.md").unlink()
    code, _, err = hipo("compact")
    assert code == 0, err
    assert derived_files(memory_root) == tree


# --- a real process -------------------------------------------------------------------------------


def run_hipo(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["HIPO_TODAY"] = TODAY
    script = Path(sys.executable).with_name("hipo")  # the console script, once pip-installed
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "hipo_jupyter.cli"]
    return subprocess.run(
        [*command, "--root", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
    )


def test_as_a_real_process(memory_root: Path) -> None:
    assert run_hipo(memory_root, "init").returncode == 0

    done = run_hipo(
        memory_root, "remember", "Competitor pricing", "--tags", "pricing", "--date", "2026-03-05",
        stdin="- decisions: cut the starter tier by 15%\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memory/2026-03-05.md ")

    # `hipo remember` compacted after itself: the tree is in step, `hipo check` passes
    assert (memory_root / "memory" / "daily" / "2026-03-05.md").is_file()
    done = run_hipo(memory_root, "compact")
    assert done.returncode == 0, done.stderr
    assert "Nothing to compact" in done.stdout
    assert done.stderr == ""  # not a TTY: no progress bar

    done = run_hipo(memory_root, "recall", "starter", "--json")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert any(h["title"] == "Competitor pricing" and h["kind"] == "raw" for h in hits)

    done = run_hipo(memory_root, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["checkpoints"] == 1

    done = run_hipo(memory_root, "remember", "Late", "--date", "2026-02-30", stdin="x\n")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "bad date" in done.stderr and "Traceback" not in done.stderr


# --- demo ---------------------------------------------------------------------------------------


def test_notebooks_run_on_this_interpreter(tmp_path: Path, monkeypatch) -> None:
    """The demo's kernel is this Python, can import this package from anywhere, and does not
    inherit a pinned HIPO_ROOT (the demo's memory is its own temporary folder)."""
    import nbformat

    monkeypatch.setenv("HIPO_ROOT", str(tmp_path / "elsewhere"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import json, os, sys, hipo_jupyter\n"
            "print(json.dumps([sys.executable, os.getcwd(), os.environ.get('HIPO_ROOT')]))"
        )
    ]
    path = tmp_path / "probe.ipynb"
    nbformat.write(notebook, path)
    executed = demo.execute_notebook(path, timeout=60)
    shown = json.loads(executed.cells[0].outputs[0].text)
    assert shown == [sys.executable, str(tmp_path), None]


def test_a_failing_notebook_is_a_one_line_error(tmp_path: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("raise ValueError('boom')")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(HipoError, match="broken.ipynb failed: .*boom"):
        demo.execute_notebook(path, timeout=60)


def test_quickstart_is_found_in_the_source_tree() -> None:
    assert demo.find_quickstart() == REPO / "notebooks" / "quickstart.ipynb"


@pytest.mark.skipif(
    not (REPO / "hipo_jupyter" / "ipython").joinpath("__init__.py").is_file(),
    reason="the IPython extension is not there yet",
)
def test_demo_runs_the_quickstart(
    hipo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`make demo`'s run: the quickstart in a named folder that is kept, and the last line the
    command that opens it with this environment's JupyterLab."""
    monkeypatch.delenv("HIPO_TODAY")  # the notebook's own day (metadata.hipo.today) applies
    monkeypatch.chdir(tmp_path)
    code, out, err = hipo("demo", "--dir", "demo", root=None)
    assert code == 0, err
    assert (tmp_path / "demo" / "quickstart.ipynb").is_file()
    assert (tmp_path / "demo" / "memory" / "ROOT.md").is_file()
    jupyter = Path(sys.executable).parent / "jupyter"
    last = out.rstrip().splitlines()[-1]
    assert last == f"  HIPO_TODAY=2026-03-21 {jupyter} lab demo/quickstart.ipynb"
    assert "Memory tree:" in out
    assert re.search(r"memory/ROOT\.md\s+\w+", out)
    assert re.search(r"memory/daily/\S+\.md\s+(fixed|tentative)", out)
    index = out.split("Topics Index (memory/ROOT.md):")[1].split("$ hipo recall pricing -k 3")[0]
    assert re.search(r"^- pricing\b", index, re.MULTILINE)
    recall = out.split("$ hipo recall pricing -k 3")[1]
    assert re.search(r"^1\. .*\[", recall, re.MULTILINE)
