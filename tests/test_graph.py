"""The memory as RDF and SPARQL over it: schema.org terms where they fit, `hipo:` for the rest,
rules as `schema:HowToStep` with their trigger and supersession, `%sparql` as a DataFrame,
`hipo sparql [--json]`, `hipo export --format turtle`, bad SPARQL as one line with its position,
and a derived store: kept in step with the raw logs, deletable, rebuilt."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import rdflib
from claude_helpers import (  # noqa: F401
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)
from IPython.core.error import UsageError

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.views.graph import SparqlError

COUNT = "SELECT (COUNT(?c) AS ?n) WHERE { ?c a hipo:Checkpoint }"


@pytest.fixture
def memory(memory_root: Path) -> Memory:
    memory = Memory(memory_root)
    memory.remember("Competitor pricing #pricing", "- decisions: cut the starter tier by 15%",
                    on="2026-03-05", notebook="analysis.ipynb", via="magic")  # fmt: skip
    memory.remember("Deploys", "- why: thin on-call", on="2026-03-06", trigger="before a deploy",
                    rule="never on a Friday")  # fmt: skip
    memory.remember("Deploys v2", "ok", on="2026-03-12", trigger="Before a deploy", rule="Mon-Wed")
    return memory


def count(memory: Memory) -> int:
    return memory.sparql(COUNT).rows[0][0]


def test_checkpoints_are_schema_creative_works_in_day_week_month(memory: Memory) -> None:
    result = memory.sparql(
        'SELECT ?name ?date ?week ?month WHERE { ?c schema:keywords "pricing" ; '
        "schema:name ?name ; schema:dateCreated ?date ; schema:isPartOf ?day . "
        "?day schema:isPartOf ?w . ?w hipo:period ?week ; schema:isPartOf ?m . "
        "?m hipo:period ?month }"
    )
    assert result.rows == (("Competitor pricing", "2026-03-05", "2026-W10", "2026-03"),)
    assert memory.sparql(
        'ASK { ?c a schema:CreativeWork ; field:decisions "cut the starter tier by 15%" ; '
        'hipo:via "magic" ; hipo:notebook "analysis.ipynb" ; hipo:file "memory/2026-03-05.md" }'
    ).boolean


def test_rules_are_howto_steps_and_the_older_is_superseded(memory: Memory) -> None:
    result = memory.sparql(
        "SELECT ?rule ?newer WHERE { ?c a schema:HowToStep ; hipo:trigger ?t ; hipo:rule ?rule "
        ". OPTIONAL { ?c hipo:supersededBy ?n . ?n hipo:rule ?newer } } ORDER BY ?rule"
    )
    assert result.rows == (("Mon-Wed", None), ("never on a Friday", "Mon-Wed"))


def test_a_proposed_rule_is_marked_and_supersedes_nothing(memory: Memory) -> None:
    memory.remember("Deploys v3", "- trigger: before a deploy\n- rule: any day", type="feedback",
                    on="2026-03-13", via="mcp")  # fmt: skip
    result = memory.sparql(
        "SELECT ?rule ?who ?newer WHERE { ?c hipo:rule ?rule . OPTIONAL { ?c hipo:proposedBy ?who }"
        " OPTIONAL { ?c hipo:supersededBy ?n . ?n hipo:rule ?newer } } ORDER BY ?rule"
    )
    assert result.rows == (
        ("Mon-Wed", None, None), ("any day", "MCP", None), ("never on a Friday", None, "Mon-Wed"),
    )  # fmt: skip


def test_the_graph_follows_the_raw_logs_and_rebuilds_when_deleted(memory: Memory) -> None:
    assert count(memory) == 3
    memory.remember("Hiring plan", "- decisions: two data roles", on="2026-03-12")
    assert count(memory) == 4  # the changed log's graph replaced, in the same process
    assert count(Memory(memory.root)) == 4  # and from the store on disk in another
    shutil.rmtree(memory.root / "memory" / ".index" / "graph")
    (memory.root / "memory" / ".index" / "graph-state.json").unlink()
    assert count(Memory(memory.root)) == 4
    shutil.rmtree(memory.root / "memory" / ".index" / "graph")  # the store alone: its state
    assert count(Memory(memory.root)) == 4  # no longer vouches for it, so it is rebuilt
    turtle = io.BytesIO()
    Memory(memory.root).export("turtle", turtle)
    assert turtle.getvalue().count(b"hipo:Checkpoint") >= 4
    (memory.root / "memory" / "2026-03-05.md").unlink()
    assert count(memory) == 3


def test_bad_sparql_is_one_line_with_the_position(memory: Memory) -> None:
    with pytest.raises(SparqlError) as caught:
        memory.sparql("SELECT ?c WHERE {\n  ?c schema:name }")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("bad SPARQL: error at 2:")
    with pytest.raises(SparqlError, match="needs a query"):
        memory.sparql("   ")
    assert count(memory) == 3  # a failed query left the store usable (its lock released)


def test_sparql_cell_magic_returns_a_dataframe(claude_shell, capsys) -> None:
    run(claude_shell, "%%remember Launch date #launch\n- decisions: launch on April 2")
    frame = claude_shell.run_cell_magic(
        "sparql", "", "SELECT ?title ?via WHERE { ?c schema:name ?title ; hipo:via ?via }"
    )
    assert isinstance(frame, pd.DataFrame)
    assert frame.to_dict("records") == [{"title": "Launch date", "via": "magic"}]
    assert claude_shell.run_line_magic("sparql", COUNT).iloc[0]["n"] == 1
    with pytest.raises(UsageError, match=r"bad SPARQL: error at 1:\d+"):
        claude_shell.run_cell_magic("sparql", "", "SELECT WHERE {")


def test_hipo_sparql_prints_tsv_or_json_and_bad_queries_exit_2(memory: Memory, capsys) -> None:
    root = ["--root", str(memory.root)]
    assert cli.main([*root, "sparql", COUNT]) == 0
    assert capsys.readouterr().out == "n\n3\n"
    assert cli.main([*root, "sparql", "--json", "ASK { ?c hipo:trigger ?t }"]) == 0
    assert json.loads(capsys.readouterr().out) == {"boolean": True}
    assert cli.main([*root, "sparql", "SELECT ?x WHERE { ?x ?y }"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad SPARQL: error at 1:" in err


def test_turtle_export_parses_and_keeps_every_checkpoint(memory: Memory, tmp_path: Path,
                                                         capsys) -> None:  # fmt: skip
    out = tmp_path / "memory.ttl"
    argv = ["--root", str(memory.root), "export", "--format", "turtle", "-o", str(out)]
    assert cli.main(argv) == 0
    graph = rdflib.Graph()
    graph.parse(out, format="turtle")
    schema, hipo = rdflib.Namespace("https://schema.org/"), rdflib.Namespace("urn:hipo:vocab:")
    names = {str(o) for s in graph.subjects(rdflib.RDF.type, hipo.Checkpoint)
             for o in graph.objects(s, schema.name)}  # fmt: skip
    assert names == {"Competitor pricing", "Deploys", "Deploys v2"}
    assert len(list(graph.subjects(hipo.supersededBy, None))) == 1


def turtle_names(memory: Memory) -> set[str]:
    out = io.BytesIO()
    memory.export("turtle", out)
    graph = rdflib.Graph()
    graph.parse(data=out.getvalue().decode("utf-8"), format="turtle")
    schema, hipo = rdflib.Namespace("https://schema.org/"), rdflib.Namespace("urn:hipo:vocab:")
    return {str(o) for s in graph.subjects(rdflib.RDF.type, hipo.Checkpoint)
            for o in graph.objects(s, schema.name)}  # fmt: skip


def test_the_kept_turtle_follows_the_raw_logs(memory: Memory) -> None:
    first = turtle_names(memory)
    assert first == {"Competitor pricing", "Deploys", "Deploys v2"}
    kept = memory.root / "memory" / ".index" / "graph-turtle"
    assert len(list(kept.glob("*.ttl"))) >= 3  # each graph's Turtle kept for the next export
    memory.remember("Hiring plan", "- decisions: two data roles", on="2026-03-05")
    assert turtle_names(Memory(memory.root)) == first | {"Hiring plan"}  # that log re-dumped
    (memory.root / "memory" / "2026-03-06.md").unlink()
    assert turtle_names(memory) == {"Competitor pricing", "Hiring plan", "Deploys v2"}
    for path in kept.glob("*.ttl"):  # lost files are dumped again from the store
        path.unlink()
    assert turtle_names(Memory(memory.root)) == {"Competitor pricing", "Hiring plan", "Deploys v2"}


def test_a_title_that_looks_like_an_iri_stays_a_literal(memory_root: Path) -> None:
    memory = Memory(memory_root)
    memory.remember('<urn:x> "quoted" \\ back', "- outcome: <b>bold</b>\n  second line")
    result = memory.sparql("SELECT ?name ?o WHERE { ?c schema:name ?name ; field:outcome ?o }")
    assert result.rows == (('<urn:x> "quoted" \\ back', "<b>bold</b>\nsecond line"),)
