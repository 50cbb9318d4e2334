"""The Memory object end to end: remember, recall, rebuild, Hipocampus folders, bad input."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from hipo_jupyter.memory import HipoError, Memory, MemoryConfig, PathOutsideRootError, QueryError
from hipo_jupyter.memory.disk.checkpoint import parse_log

TOPICS = {
    "pricing": ("Competitor pricing review", "cut starter tier by 15%"),
    "hiring": ("Backend hiring loop", "open two senior roles"),
    "infra": ("Kubernetes migration", "move batch jobs to k8s-prod-eu"),
    "billing": ("Invoice reconciliation", "switch to stripe webhooks"),
    "research": ("Retrieval evaluation", "adopt reciprocal rank fusion"),
    "design": ("Onboarding redesign", "ship three-step wizard"),
}


def memory_at(root: Path, today: date, **config) -> Memory:
    return Memory(root, config=MemoryConfig(**config), today=lambda: today)


@pytest.fixture
def month_of_memory(memory_root):
    """30 days of checkpoints over 6 topics, written with `on=` like `hipo remember --date`."""
    start, today = date(2026, 2, 10), date(2026, 3, 12)
    memory = memory_at(memory_root, today)
    written = []
    for offset in range(30):
        name = sorted(TOPICS)[offset % 6]
        title, decision = TOPICS[name]
        title = f"{title} {offset} #{name}"
        body = f"- request: work on {name} item{offset}\n- decisions: {decision} ref{offset}x"
        written.append(memory.remember(title, body, on=start + timedelta(days=offset)))
    memory.compact()
    return memory, written


def test_remember_appends_parses_and_is_found_at_once(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    saved = memory.remember(
        "Competitor pricing [project] #pricing #q1",
        "- request: Compare pricing\n- decisions: recommend a 15% cut on the starter tier",
        notebook="analysis.ipynb",
        cell="7",
    )
    assert saved.tags == ("pricing", "q1") and saved.title == "Competitor pricing"
    raw = (memory_root / "memory/2026-03-12.md").read_text()
    parsed = parse_log(raw, date="2026-03-12")
    assert parsed == [saved]
    result = memory.recall("starter tier")
    assert result.hits[0].file == "memory/2026-03-12.md"
    assert result.hits[0].line == saved.line == 1
    assert result.hits[0].path[-1] == "memory/2026-03-12.md#L1"
    # compaction leaves the working files to `init`: nothing beside the notebook but memory/
    memory.compact()
    for name in ("SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md", "knowledge", "plans"):
        assert not (memory_root / name).exists()


def test_secrets_never_reach_the_raw_log(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    key = "sk-ant-api03-" + "a1B2c3D4" * 10
    memory.remember("Key rotation", f"- outcome: rotated {key}")
    raw = (memory_root / "memory/2026-03-12.md").read_text()
    assert key not in raw and "[REDACTED:" in raw


def test_thirty_days_six_topics_every_checkpoint_found(month_of_memory, memory_root):
    memory, written = month_of_memory
    for sub, count in (("daily", 30), ("weekly", 5), ("monthly", 2)):
        assert len(list((memory_root / "memory" / sub).glob("*.md"))) == count
    root = (memory_root / "memory/ROOT.md").read_text()
    index = root.split("## Topics Index", 1)[1]
    for name in TOPICS:
        assert f"- {name} [project," in index
    for offset, checkpoint in enumerate(written):
        by_title = memory.recall(checkpoint.title.split()[-1], k=30)  # the offset number
        assert any(h.line == checkpoint.line and h.date == checkpoint.date for h in by_title)
        by_decision = memory.recall(f"ref{offset}x")
        assert by_decision.hits[0].date == checkpoint.date


def test_statuses_after_a_month(month_of_memory, memory_root):
    from hipo_jupyter.memory.disk.nodes import parse_node

    def status(relative):
        return parse_node((memory_root / "memory" / relative).read_text()).status

    assert status("daily/2026-03-11.md") == "fixed"
    assert status("weekly/2026-W07.md") == "fixed"  # Feb 9-15, over for more than 7 days
    assert status("weekly/2026-W10.md") == "tentative"  # Mar 2-8, still in its grace week
    assert status("monthly/2026-02.md") == "fixed"  # over since Mar 1 + 7 days
    assert status("monthly/2026-03.md") == "tentative"


def test_deleting_the_index_gives_the_same_hits(month_of_memory, memory_root):
    memory, _ = month_of_memory
    before = [(h.file, h.line) for h in memory.recall("stripe webhooks", k=10)]
    memory.close()
    shutil.rmtree(memory_root / "memory/.index")
    again = memory_at(memory_root, date(2026, 3, 12))
    assert [(h.file, h.line) for h in again.recall("stripe webhooks", k=10)] == before


def test_deleting_derived_files_rebuilds_them_byte_for_byte(month_of_memory, memory_root):
    memory, _ = month_of_memory
    tree = memory_root / "memory"
    before = {p.relative_to(tree): p.read_bytes() for p in tree.rglob("*.md") if p.parent != tree}
    before["ROOT.md"] = (tree / "ROOT.md").read_bytes()
    for sub in ("daily", "weekly", "monthly"):
        shutil.rmtree(tree / sub)
    (tree / "ROOT.md").unlink()
    memory.compact()
    after = {p.relative_to(tree): p.read_bytes() for p in tree.rglob("*.md") if p.parent != tree}
    after["ROOT.md"] = (tree / "ROOT.md").read_bytes()
    assert after == before


def test_recall_filters_and_drill_down(month_of_memory):
    memory, _ = month_of_memory
    hits = memory.recall("reciprocal rank fusion", k=10, since="2026-03-01")
    assert hits.hits and all(h.date >= "2026-03-01" for h in hits)
    assert "research" in hits.topic_matches or hits.hits[0].title.startswith("Retrieval")
    first = hits.hits[0]
    assert first.path[0] == "memory/ROOT.md"
    assert first.path[1].startswith("memory/monthly/") and first.path[2].startswith(
        "memory/weekly/"
    )
    assert first.path[3] == f"memory/daily/{first.date}.md"
    assert memory.recall("fusion", type="feedback").hits == []
    with pytest.raises(QueryError):
        memory.recall("x", since="yesterday")
    with pytest.raises(QueryError):
        memory.recall("   ")


def test_did_you_mean_a_close_topic(month_of_memory):
    memory, _ = month_of_memory
    result = memory.recall("hirring")
    assert result.hits == []
    assert "hiring" in result.did_you_mean


def test_topic_boost_ranks_the_tagged_checkpoint_first(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    memory.remember("Lunch notes", "- outcome: talked about pricing briefly", on=fixed_today)
    memory.remember("Plan review #pricing", "- outcome: pricing plan agreed", on=fixed_today)
    assert memory.recall("pricing").hits[0].title == "Plan review"


def test_hipocampus_folder_opens_compacts_and_recalls(memory_root):
    """A folder written by Hipocampus itself: no comment lines, a hand-written fixed node."""
    tree = memory_root / "memory"
    (tree / "daily").mkdir(parents=True)
    (tree / "2026-03-02.md").write_text(
        "## Legal research [reference]\n"
        "- request: tort liability overview\n"
        "- outcome: Civil Act 750 summarized -> knowledge/legal-750.md\n\n"
        "## Tone of replies [feedback]\n"
        "- rule: answer in short bullet lists\n"
        "- why: the user skims on mobile\n"
        "- how-to-apply: every reply longer than five lines\n"
    )
    (tree / "2026-03-03.md").write_text(
        "Worked on the qmd integration all day, no decisions yet.\n"
    )
    fixed = (
        "---\ntype: daily\nstatus: fixed\nperiod: 2026-03-02\n---\n\n## Topics\nlegal, civil-act\n"
    )
    (tree / "daily/2026-03-02.md").write_text(fixed)
    memory = memory_at(memory_root, date(2026, 3, 20))
    memory.compact()
    assert (tree / "daily/2026-03-02.md").read_text() == fixed
    assert memory.recall("Civil Act").hits[0].type == "reference"
    assert memory.recall("bullet lists").hits[0].type == "feedback"
    assert memory.recall("qmd integration").hits[0].date == "2026-03-03"
    root = (tree / "ROOT.md").read_text()
    assert "legal-research [reference" in root and "tone-replies [feedback" in root


def test_bad_input_is_a_clear_error_and_nothing_is_lost(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    memory.remember("Keep me", "- outcome: precious")
    raw = memory_root / "memory/2026-03-12.md"
    before = raw.read_bytes()
    with pytest.raises(HipoError, match="needs a body"):
        memory.remember("Empty", "   ")
    with pytest.raises(HipoError, match="limit"):
        memory.remember("Huge", "x" * 10_000_000)
    with pytest.raises(HipoError, match="type must be one of"):
        memory.remember("Odd", "text", type="diary")
    with pytest.raises(PathOutsideRootError):
        memory.read("../../etc/passwd")
    assert raw.read_bytes() == before


def test_unwritable_root_is_a_clear_error(tmp_path, fixed_today):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(HipoError, match="not a folder"):
        memory_at(blocker, fixed_today).remember("x", "y")


def test_malformed_raw_log_still_compacts_and_is_not_touched(memory_root, fixed_today):
    tree = memory_root / "memory"
    tree.mkdir()
    junk = "## \n- : \n<!-- hipo id= -->\n-----\n## [x] [y] [feedback\n\n\t- rule\n"
    (tree / "2026-03-10.md").write_text(junk)
    memory = memory_at(memory_root, fixed_today)
    memory.remember("Normal", "- outcome: fine", on=date(2026, 3, 10))
    memory.compact()
    assert (tree / "2026-03-10.md").read_text().startswith(junk)


def test_subscribers_hear_writes(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    events = []
    unsubscribe = memory.subscribe(events.append)
    memory.remember("A", "text")
    memory.compact()
    unsubscribe()
    memory.remember("B", "text")
    assert events == ["remember", "compact"]


def test_status_counts(month_of_memory):
    memory, _ = month_of_memory
    status = memory.status()
    assert status.checkpoints == 30 and status.raw_days == 30 and status.topics == 6
    assert status.nodes == {"daily": 30, "weekly": 5, "monthly": 2, "root": 1}
    assert status.dirty_nodes == 0 and status.layer1_tokens > 0


def test_both_backends_answer_alike(memory_root, fixed_today):
    pytest.importorskip("whoosh")
    fts = memory_at(memory_root, fixed_today)
    for index, name in enumerate(sorted(TOPICS)):
        title, decision = TOPICS[name]
        fts.remember(
            f"{title} #{name}", f"- decisions: {decision}", on=fixed_today - timedelta(days=index)
        )
    fts.compact()
    whoosh = memory_at(memory_root, fixed_today, search_backend="whoosh")
    for query in ("stripe webhooks", "senior roles", "k8s-prod-eu"):
        assert fts.recall(query).hits[0].title == whoosh.recall(query).hits[0].title


def test_save_knowledge_offloads_and_indexes(memory_root, fixed_today):
    memory = memory_at(memory_root, fixed_today)
    first = memory.save_knowledge("Tool output: crawl", "huge crawl result mentioning zebrafish")
    second = memory.save_knowledge("Tool output: crawl", "another one")
    assert first == "knowledge/2026-03-12-tool-output-crawl.md"
    assert second == "knowledge/2026-03-12-tool-output-crawl-2.md"
    hit = memory.recall("zebrafish").hits[0]
    assert hit.kind == "knowledge" and hit.file == first


def test_unchanged_layer1_is_measured_without_building_the_tokenizer(memory_root, fixed_today):
    from hipo_jupyter.memory.tree import tokens

    memory = memory_at(memory_root, fixed_today)
    memory.remember("Pricing #pricing", "- decisions: cut")
    memory.compact()
    first = memory.layer1()
    tokens.reset_tokenizer()
    again = memory_at(memory_root, fixed_today).layer1()  # a new session, nothing changed
    assert again.total_tokens == first.total_tokens
    assert [p.tokens for p in again.parts] == [p.tokens for p in first.parts]
    assert tokens._tokenizer._loaded is False
    assert "source-hash" not in again.text  # ROOT's bookkeeping stays out of the prompt


def test_topics_kept_up_to_date_by_remember_match_a_full_read(memory_root, fixed_today):
    from hipo_jupyter.memory.tree.topic_index import collect_topics

    memory = memory_at(memory_root, fixed_today)
    for index, name in enumerate(["pricing", "hiring", "pricing", "infra"]):
        memory.remember(
            f"Item {index} #{name}", "- outcome: done", on=fixed_today - timedelta(days=10 - index)
        )
    memory.compact()
    assert memory.topics()  # cached now
    memory.remember("Follow-up #pricing #new", "- outcome: more", on=fixed_today)
    memory.remember("Old import #hiring", "- outcome: late", on=fixed_today - timedelta(days=40))
    incremental = {t.name: (t.count, t.last_date, t.weeks, t.months) for t in memory.topics()}
    full = {
        t.name: (t.count, t.last_date, t.weeks, t.months)
        for t in collect_topics(memory._all_checkpoints(), fixed_today)
    }
    assert incremental == full
    # a fresh process reads the topics the last compaction saved
    memory.compact()
    fresh = memory_at(memory_root, fixed_today)
    assert [t.name for t in fresh.topics()] == [t.name for t in memory.topics()]
