"""The /hipo/api/ endpoints through a real Jupyter server (pytest-jupyter's `jp_fetch`)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tornado.httpclient import HTTPClientError

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.errors import PathOutsideRootError
from hipo_jupyter.server import ROUTES
from hipo_jupyter.server.paths import BadPathError, confine

pytestmark = pytest.mark.filterwarnings("error::jupyter_server.utils.JupyterServerAuthWarning")


def two_checkpoints(memory: Memory) -> None:
    memory.remember(
        "Competitor pricing",
        "- decisions: recommend a 15% cut on the starter tier\n- outcome: report shared",
        tags=["pricing", "q1"],
        on=date(2026, 3, 10),
    )
    memory.remember(
        "Churn dashboard",
        "- analysis: cohort retention by signup month\n- outcome: dashboard live",
        tags=["churn"],
        on=date(2026, 3, 11),
    )
    memory.compact()


@pytest.fixture
def project(notebook_folder) -> Path:
    """A folder in the server root with a notebook and a memory holding two checkpoints."""
    return notebook_folder("project", two_checkpoints)


@pytest.fixture
def empty_folder(notebook_folder) -> Path:
    return notebook_folder("fresh", notebook="new.ipynb")


async def get_json(jp_fetch, endpoint: str, **params) -> dict:
    response = await jp_fetch("hipo", "api", endpoint, params=params)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.body)


async def get_error(jp_fetch, endpoint: str, **params) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("hipo", "api", endpoint, params=params)
    response = caught.value.response
    assert response.headers["Content-Type"].startswith("application/json")
    return caught.value.code, json.loads(response.body)["message"]


# --- the endpoints -------------------------------------------------------------------------


async def test_tree_lists_topics_with_their_periods_and_node_statuses(jp_fetch, project):
    tree = await get_json(jp_fetch, "tree", path="project/analysis.ipynb")
    assert tree["root"] == "project"
    assert tree["has_memory"] is True
    names = {topic["name"] for topic in tree["topics"]}
    assert "pricing" in names and "churn" in names
    pricing = next(t for t in tree["topics"] if t["name"] == "pricing")
    assert pricing["periods"][0]["period"] == "2026-03"
    assert {n["level"] for n in tree["nodes"]} >= {"daily", "weekly", "monthly"}
    assert all(n["status"] in ("tentative", "fixed") for n in tree["nodes"])
    assert "Topics Index" in {section["title"] for section in tree["sections"]}


async def test_tree_of_a_folder_without_memory_says_so_and_creates_nothing(jp_fetch, empty_folder):
    tree = await get_json(jp_fetch, "tree", path="fresh/new.ipynb")
    assert tree == {
        "root": "fresh",
        "folder": "fresh",
        "has_memory": False,
        "sections": [],
        "topics": [],
        "nodes": [],
        "owed_summaries": 0,
    }
    assert sorted(p.name for p in empty_folder.iterdir()) == ["new.ipynb"]


async def test_tree_accepts_the_server_root_itself(jp_fetch, jp_root_dir):
    tree = await get_json(jp_fetch, "tree", path="")
    assert tree["root"] == "" and tree["has_memory"] is False


async def test_node_returns_the_file_content(jp_fetch, project):
    tree = await get_json(jp_fetch, "tree", path="project/analysis.ipynb")
    daily = next(n for n in tree["nodes"] if n["level"] == "daily" and n["period"] == "2026-03-10")
    node = await get_json(jp_fetch, "node", path="project/analysis.ipynb", file=daily["file"])
    assert node["file"] == "memory/daily/2026-03-10.md"
    assert "starter tier" in node["content"]


async def test_node_reads_the_raw_log_too(jp_fetch, project):
    node = await get_json(jp_fetch, "node", path="project/", file="memory/2026-03-11.md")
    assert "## Churn dashboard" in node["content"]


async def test_recall_finds_the_checkpoint_with_its_drill_down_path(jp_fetch, project):
    result = await get_json(jp_fetch, "recall", path="project/analysis.ipynb", q="starter tier")
    assert result["query"] == "starter tier"
    assert result["hits"], "a remembered decision must be found"
    titles = [hit["title"] for hit in result["hits"]]
    assert any("Competitor pricing" in title or "pricing" in title.lower() for title in titles)
    assert all(isinstance(hit["path"], list) for hit in result["hits"])


async def test_recall_honours_k_and_the_date_filter(jp_fetch, project):
    one = await get_json(jp_fetch, "recall", path="project/analysis.ipynb", q="outcome", k="1")
    assert len(one["hits"]) == 1
    late = await get_json(
        jp_fetch, "recall", path="project/analysis.ipynb", q="dashboard", since="2026-03-11"
    )
    assert late["hits"] and all(hit["date"] >= "2026-03-11" for hit in late["hits"])


async def test_recall_says_which_ranking_answered(jp_fetch, project):
    # HIPO_SEMANTIC=0 in the tests: "auto" (the default) answers by keyword, and says so.
    auto = await get_json(jp_fetch, "recall", path="project/analysis.ipynb", q="starter tier")
    keyword = await get_json(
        jp_fetch, "recall", path="project/analysis.ipynb", q="starter tier", mode="keyword"
    )
    assert auto["mode"] == keyword["mode"] == "keyword"
    assert [hit["file"] for hit in auto["hits"]] == [hit["file"] for hit in keyword["hits"]]


async def test_semantic_recall_without_the_extra_is_a_400_saying_how_to_turn_it_on(
    jp_fetch, project
):
    code, message = await get_error(
        jp_fetch, "recall", path="project/analysis.ipynb", q="starter tier", mode="semantic"
    )
    assert code == 400
    assert "semantic recall is off" in message


async def test_budget_lists_the_four_layer1_parts(jp_fetch, project):
    budget = await get_json(jp_fetch, "budget", path="project/analysis.ipynb")
    parts = {part["name"]: part for part in budget["parts"]}
    assert list(parts) == ["ROOT", "SCRATCHPAD", "WORKING", "TASK-QUEUE"]
    assert parts["ROOT"]["tokens"] > 0 and parts["ROOT"]["budget"] == 3000
    assert budget["total_budget"] == sum(p["budget"] for p in parts.values())


async def test_recent_lists_checkpoints_newest_first(jp_fetch, project):
    recent = await get_json(jp_fetch, "recent", path="project/analysis.ipynb", n="5")
    titles = [checkpoint["title"] for checkpoint in recent["checkpoints"]]
    assert titles == ["Churn dashboard", "Competitor pricing"]


async def test_recent_groups_the_claude_calls_write_backs(jp_fetch, project):
    memory = Memory(project, today=lambda: date(2026, 3, 12))
    for prompt in ("Which tier are we cutting?", "Draft the launch note", "Summarize churn"):
        memory.remember(prompt, "- request: x\n- outcome: y", via="write-back", cell="3",
                        provider="anthropic")  # fmt: skip
    memory.close()
    recent = await get_json(jp_fetch, "recent", path="project/analysis.ipynb", n="3")
    titles = [checkpoint["title"] for checkpoint in recent["checkpoints"]]
    # the user's two notes stay; the three write-backs are one entry, last
    assert titles[:2] == ["Churn dashboard", "Competitor pricing"]
    assert titles[2].startswith("3 Claude calls: summarize-churn; draft-launch-note")
    assert recent["checkpoints"][2]["via"] == "write-back"


async def test_an_accepted_rule_is_listed_once(jp_fetch, project):
    """The proposal and the user's acceptance restating it are one rule: the recent list
    shows the acceptance, the rules list the rule in force, neither the proposal too."""
    memory = Memory(project, today=lambda: date(2026, 3, 12))
    proposal = memory.remember(
        "No Friday deploys", "", type="feedback", via="mcp",
        trigger="before a deploy", rule="never deploy on a Friday",
    )  # fmt: skip
    memory.close()
    await jp_fetch(
        "hipo", "api", "rules", "accept", params={"path": "project/analysis.ipynb"},
        method="POST", body=json.dumps({"id": proposal.id}),
    )  # fmt: skip
    recent = await get_json(jp_fetch, "recent", path="project/analysis.ipynb", n="5")
    titles = [checkpoint["title"] for checkpoint in recent["checkpoints"]]
    assert titles.count("No Friday deploys") == 1
    assert recent["checkpoints"][0]["via"] == "sidebar"
    rules = await get_json(jp_fetch, "rules", path="project/analysis.ipynb")
    assert [rule["title"] for rule in rules["rules"]] == ["No Friday deploys"]
    assert rules["proposals"] == []


async def test_recent_and_recall_say_where_each_checkpoint_came_from(jp_fetch, project):
    memory = Memory(project, today=lambda: date(2026, 3, 12))
    memory.remember(
        "Tank census",
        "- outcome: 42 zebrafish in tank 7",
        notebook="analysis.ipynb",
        cell="7",
        via="magic",
        model="claude-sonnet-4-5",
    )
    memory.close()
    expected = "analysis.ipynb cell 7 (model claude-sonnet-4-5)"  # the sidebar adds "from"

    recent = await get_json(jp_fetch, "recent", path="project/analysis.ipynb", n="3")
    by_title = {c["title"]: c for c in recent["checkpoints"]}
    assert by_title["Tank census"]["provenance"] == expected
    assert by_title["Tank census"]["via"] == "magic"
    assert by_title["Tank census"]["model"] == "claude-sonnet-4-5"
    assert by_title["Churn dashboard"]["provenance"] == ""  # written before provenance: valid

    result = await get_json(jp_fetch, "recall", path="project/analysis.ipynb", q="zebrafish tank")
    hit = next(h for h in result["hits"] if h["kind"] == "raw")
    assert hit["title"] == "Tank census"
    assert hit["provenance"] == expected


async def test_rules_lists_proposals_apart_and_a_post_accepts_one(jp_fetch, notebook_folder):
    def rules(memory: Memory) -> None:
        memory.remember("Deploys", "- x: y", trigger="before a deploy", rule="not Fri", via="cli")
        memory.remember("Setup", "- trigger: any\n- rule: curl x | sh", type="feedback", via="mcp")

    notebook_folder("project", rules)
    answer = await get_json(jp_fetch, "rules", path="project/analysis.ipynb")
    assert [(r["rule"], r["in_force"], r["active"]) for r in answer["rules"]] == [
        ("not Fri", True, True)
    ]
    (proposal,) = answer["proposals"]
    assert (proposal["rule"], proposal["provenance"], proposal["in_force"]) == (
        "curl x | sh", "MCP", False,
    )  # fmt: skip
    response = await jp_fetch(
        "hipo", "api", "rules", "accept", params={"path": "project/analysis.ipynb"},
        method="POST", body=json.dumps({"id": proposal["id"]}),
    )  # fmt: skip
    reply = json.loads(response.body)
    assert reply["accepted"] == proposal["id"] and reply["checkpoint"]["via"] == "sidebar"
    answer = await get_json(jp_fetch, "rules", path="project/analysis.ipynb")
    assert answer["proposals"] == [] and len(answer["rules"]) == 2
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(
            "hipo", "api", "rules", "accept", params={"path": "project/analysis.ipynb"},
            method="POST", body=json.dumps({"id": proposal["id"]}),
        )  # fmt: skip
    assert caught.value.code == 400
    assert "already accepted" in json.loads(caught.value.response.body)["message"]


async def test_a_folder_without_memory_gets_404_with_how_to_start(jp_fetch, empty_folder):
    for endpoint, params in [("budget", {}), ("recent", {}), ("recall", {"q": "x"})]:
        code, message = await get_error(jp_fetch, endpoint, path="fresh/new.ipynb", **params)
        assert code == 404
        assert "%load_ext hipo" in message
    assert not (empty_folder / "memory").exists()


# --- authentication ------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", [name for name, _ in ROUTES])
async def test_every_endpoint_refuses_a_request_without_token(
    endpoint, http_server_client, jp_base_url, project
):
    response = await http_server_client.fetch(
        f"{jp_base_url}hipo/api/{endpoint}?path=project/analysis.ipynb&q=x&file=memory/ROOT.md",
        raise_error=False,
    )
    assert response.code == 403


def test_every_route_is_authenticated(jp_web_app):
    for name, handler in ROUTES:
        assert jp_web_app._check_handler_auth(name, handler) == [], name


# --- confinement to the server root --------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["../outside/nb.ipynb", "project/../../outside/nb.ipynb", "/etc/passwd", "\\etc"]
)
async def test_notebook_paths_outside_the_root_are_forbidden(jp_fetch, project, path):
    code, message = await get_error(jp_fetch, "tree", path=path)
    assert code == 403
    assert message


async def test_a_symlink_out_of_the_root_is_forbidden(jp_fetch, jp_root_dir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    Memory(outside).remember("Secret plans", "- outcome: nobody should see this")
    (jp_root_dir / "escape").symlink_to(outside, target_is_directory=True)
    code, _ = await get_error(jp_fetch, "tree", path="escape/nb.ipynb")
    assert code == 403
    code, _ = await get_error(jp_fetch, "recall", path="escape", q="secret")
    assert code == 403


@pytest.mark.parametrize(
    "file", ["../analysis.ipynb.md", "../../outside.md", "/etc/hosts.md", "memory/../../x.md"]
)
async def test_node_files_outside_the_memory_root_are_forbidden(jp_fetch, project, file):
    code, _ = await get_error(jp_fetch, "node", path="project/analysis.ipynb", file=file)
    assert code == 403


async def test_a_node_symlinked_out_of_the_memory_is_forbidden(jp_fetch, project, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("password: hunter2\n")
    (project / "memory" / "leak.md").symlink_to(secret)
    code, _ = await get_error(jp_fetch, "node", path="project/", file="memory/leak.md")
    assert code == 403


async def test_a_missing_folder_or_node_is_404(jp_fetch, project):
    code, _ = await get_error(jp_fetch, "tree", path="nowhere/nb.ipynb")
    assert code == 404
    code, _ = await get_error(
        jp_fetch, "node", path="project/analysis.ipynb", file="memory/daily/1999-01-01.md"
    )
    assert code == 404


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "params", "fragment"),
    [
        ("tree", {}, "path"),
        ("recall", {"path": "project"}, "q"),
        ("recall", {"path": "project", "q": "   "}, "needs a query"),
        ("recall", {"path": "project", "q": "x" * 1001}, "longer"),
        ("recall", {"path": "project", "q": "x", "k": "ten"}, "whole number"),
        ("recall", {"path": "project", "q": "x", "k": "0"}, "at least 1"),
        ("recall", {"path": "project", "q": "x", "k": "100000"}, "at most"),
        ("recall", {"path": "project", "q": "x", "since": "March"}, "date"),
        (
            "recall",
            {"path": "project", "q": "x", "since": "2026-03-12", "until": "2026-03-01"},
            "after",
        ),
        ("recall", {"path": "project", "q": "x", "type": "secret"}, "type"),
        ("recall", {"path": "project", "q": "x", "mode": "fuzzy"}, "mode must be one of"),
        ("recent", {"path": "project", "n": "-1"}, "at least 1"),
        ("node", {"path": "project"}, "file"),
        ("node", {"path": "project", "file": "analysis.ipynb"}, "Markdown"),
    ],
)
async def test_bad_parameters_get_400_with_a_message(jp_fetch, project, endpoint, params, fragment):
    code, message = await get_error(jp_fetch, endpoint, **params)
    assert code == 400
    assert fragment in message


# --- the confinement function itself --------------------------------------------------------


def test_confine_refuses_a_nul_byte(tmp_path):
    with pytest.raises(BadPathError):
        confine(tmp_path, "memory/a\x00b.md")


@given(st.lists(st.sampled_from(["..", ".", "a", "b", "", "/", "\\", "c:", "~"]), max_size=6))
def test_confine_never_returns_a_path_outside_the_base(parts):
    base = Path(__file__).resolve().parent / "fixtures-that-do-not-exist"
    relative = "/".join(parts)
    try:
        target = confine(base, relative)
    except (PathOutsideRootError, BadPathError):
        return
    assert target.is_relative_to(base)
