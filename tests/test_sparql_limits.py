"""`hipo sparql` under hostile queries (issue 23), driven as a real process.

SERVICE (an outbound request to whatever endpoint the query names) and LOAD are refused before
anything runs; a query that never ends stops at its time limit, one whose rows grow without
bound at its row cap, and Ctrl-C stops it with exit code 130; after each, the graph's lock is
free for the next command. A query on stdin is read bounded while reading (`/dev/zero`).
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("pyoxigraph")

from hipo_jupyter.memory import Memory, MemoryConfig, QueryError  # noqa: E402

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?c a hipo:Checkpoint }"
# every triple with every triple with every triple: minutes of work, one row at the end
CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
GROWING = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


@pytest.fixture
def root(memory_root: Path) -> Path:
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    for n in range(30):
        memory.remember(f"Note {n}", f"- outcome: result {n}\n- decisions: keep {n}")
    memory.close()
    return memory_root


def hipo(root: Path, *args: str, **options: object) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update(HIPO_TODAY="2026-03-12", HIPO_SEMANTIC="0")
    command = [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), "sparql", *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **options
    )  # type: ignore[call-overload]


def finished(process: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word.lower() in err.lower(), err


def assert_graph_free(root: Path) -> None:
    """A count right after: the lock was released (no "the graph is busy")."""
    code, out, err = finished(hipo(root, COUNT, "--timeout", "30"))
    assert code == 0, err
    assert out.splitlines() == ["n", "30"]


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[str]]]:
    """A local SPARQL endpoint that records every request made to it."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.end_headers()
            self.wfile.write(b'{"head":{"vars":["s"]},"results":{"bindings":[]}}')

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql", seen
    server.shutdown()


@pytest.mark.parametrize(
    "template",
    [
        "SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        "select * {{ service silent <{url}> {{ ?s ?p ?o }} }}",
        "SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
        "LOAD <{url}>",
    ],
)
def test_service_and_load_are_refused_and_nothing_goes_out(
    root: Path, endpoint: tuple[str, list[str]], template: str
) -> None:
    url, seen = endpoint
    code, out, err = finished(hipo(root, template.format(url=url)))
    assert_one_line_error(code, err, "refused")
    assert seen == [] and out == ""


def test_a_word_service_in_a_string_is_still_a_query(root: Path) -> None:
    query = 'SELECT ?n WHERE { ?c schema:name ?n FILTER(?n != "SERVICE <http://x> LOAD") } LIMIT 1'
    code, out, err = finished(hipo(root, query))
    assert code == 0, err
    assert out.splitlines()[0] == "n"


def test_a_query_that_never_ends_stops_at_its_time_limit(root: Path) -> None:
    started = time.monotonic()
    code, _, err = finished(hipo(root, CARTESIAN, "--timeout", "1.5"))
    assert_one_line_error(code, err, "time limit")
    assert time.monotonic() - started < 30
    assert_graph_free(root)


def test_rows_past_the_cap_are_one_line(root: Path) -> None:
    code, out, err = finished(hipo(root, GROWING, "--max-rows", "50"))
    assert_one_line_error(code, err, "more than 50 rows")
    assert out == ""
    code, out, err = finished(hipo(root, COUNT, "--max-rows", "1"))
    assert code == 0, err


def test_ctrl_c_stops_the_query_with_130_and_frees_the_graph(root: Path) -> None:
    process = hipo(root, CARTESIAN, "--timeout", "600")
    time.sleep(3)  # well into the query
    assert process.poll() is None
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    code, _, err = finished(process, timeout=20)
    assert code == 130, err
    assert time.monotonic() - started < 10
    assert_graph_free(root)


def test_stdin_is_read_bounded(root: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        started = time.monotonic()
        code, _, err = finished(hipo(root, "-", stdin=zero), timeout=30)
    assert_one_line_error(code, err, "20,000")
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    "args", [("--timeout", "nan"), ("--timeout", "inf"), ("--max-rows", "²"), ("--max-rows", "0")]
)
def test_bad_limits_are_one_line(root: Path, args: tuple[str, str]) -> None:
    code, _, err = finished(hipo(root, COUNT, *args))
    assert_one_line_error(code, err, args[0])


def test_the_limits_are_settings_of_the_engine(root: Path) -> None:
    memory = Memory(root, config=MemoryConfig(sparql_max_rows=5, sparql_timeout=1.0))
    with pytest.raises(QueryError, match="more than 5 rows"):
        memory.sparql(GROWING)
    with pytest.raises(QueryError, match="time limit of 1 s"):
        memory.sparql(CARTESIAN)
    assert memory.sparql(COUNT).rows == ((30,),)
    memory.close()
