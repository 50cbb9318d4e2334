"""A SPARQL query run in a child process that can be stopped (`MemoryGraph.query`).

A query is one call into pyoxigraph's native code: Python cannot interrupt it, and a
three-way cartesian `COUNT(*)` runs for minutes holding the store's lock, so other commands
say "the graph is busy". So the query runs in a child process (this file as a script: the
standard library and pyoxigraph, ~0.1 s to start) that the parent kills at the time limit,
on Ctrl-C or on any other exit; the lock dies with it. The child streams the rows and stops
at the row cap, so a result that grows without bound is one line of error, not a full memory.

Before anything runs, `refusal` turns away what would leave the memory: `SERVICE` (a query
that fetches rows from another endpoint over the network) and `LOAD` or any other update:
no hipo command touches the network unless the user configured a server. They are found as
keywords outside strings, IRIs and comments, so a checkpoint that mentions a service is
still found.

Protocol: one JSON request on the child's stdin ({store, query, prefixes, max_rows,
attempts, wait}), one JSON answer on its stdout ({boolean} | {triples} | {variables, rows} |
{error}).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from typing import Any

XSD = "http://www.w3.org/2001/XMLSchema#"
_NUMERIC: dict[str, type] = {
    XSD + name: int for name in ("integer", "int", "long", "short", "nonNegativeInteger")
}
_NUMERIC.update({XSD + "decimal": float, XSD + "double": float, XSD + "float": float})
# Strings (long and short, either quote), IRIs, comments, variables and prefixed names: what
# may hold the word SERVICE without being the keyword.
_NOT_KEYWORDS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
    r"|<[^<>\"{}|^`\\\s]*>|#[^\n]*|[?$]\w+|[\w.-]*:[\w.-]*"
)
_REFUSED = re.compile(r"\b(SERVICE|LOAD)\b", re.IGNORECASE)
# SPARQL reads \\uXXXX and \\UXXXXXXXX escapes anywhere in a query, before parsing it
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def refusal(query: str) -> str | None:
    """Why `query` is not run (one line), or None: SERVICE reaches the network, LOAD
    fetches a document (updates the store's own parser refuses)."""
    decoded = _CODEPOINT.sub(lambda m: chr(min(int(m.group(1) or m.group(2), 16), 0x10FFFF)), query)
    bare = _NOT_KEYWORDS.sub(" ", decoded)
    found = _REFUSED.search(bare)
    if found is None:
        return None
    if found.group(1).upper() == "SERVICE":
        return (
            "SERVICE is refused: a hipo query reads the memory and never the network "
            "(federated queries are not run)"
        )
    return "LOAD is refused: hipo sparql runs queries (SELECT, ASK, CONSTRUCT, DESCRIBE)"


def python_value(term: Any) -> Any:
    """A SPARQL value as a plain Python value: IRIs and strings as str, numbers as numbers,
    booleans as bool, unbound as None (dates stay ISO strings)."""
    if term is None:
        return None
    datatype = getattr(getattr(term, "datatype", None), "value", None)
    if datatype in _NUMERIC:
        try:
            return _NUMERIC[datatype](term.value)
        except ValueError:
            return term.value
    if datatype == XSD + "boolean":
        return term.value == "true"
    return term.value


def run(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The child's answer to `request`; {"error": ...} when it ran over `timeout` seconds
    (the child killed). Ctrl-C or any exception here kills the child before it goes on."""
    process = subprocess.Popen(
        [sys.executable, __file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C reaches the parent, which stops the child
    )
    try:
        out, err = process.communicate(json.dumps(request).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {
            "error": f"the query ran over its time limit of {timeout:g} s and was stopped "
            "(raise it with --timeout, Hipo.sparql_timeout or sparql_timeout)"
        }
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    try:
        return json.loads(out)
    except ValueError:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or ["no answer"]
        return {"error": f"SPARQL failed: {last[0]}"}


def _open(ox: Any, path: str, attempts: int, wait: float) -> Any:
    for attempt in range(attempts):
        try:
            return ox.Store(path)
        except OSError as error:
            if "lock" not in str(error).lower() or attempt == attempts - 1:
                raise
            time.sleep(wait)
    raise OSError("unreachable")


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """Run one request in this (child) process."""
    import pyoxigraph as ox

    cap = int(request["max_rows"])
    try:
        store = _open(ox, request["store"], int(request["attempts"]), float(request["wait"]))
    except OSError as error:
        if "lock" in str(error).lower():
            return {"error": "the graph is busy in another process (memory/.index/graph); "
                             "try again in a moment"}  # fmt: skip
        return {"error": f"SPARQL failed: {' '.join(str(error).split())}"}
    try:
        result = store.query(
            request["query"], prefixes=request["prefixes"], use_default_graph_as_union=True
        )
        if isinstance(result, ox.QueryBoolean):
            return {"boolean": bool(result)}
        items: list[Any] = []
        if isinstance(result, ox.QueryTriples):
            for triple in result:
                items.append(f"{triple} .")
                if len(items) > cap:
                    return {"error": _too_many(cap)}
            return {"triples": items}
        names = [variable.value for variable in result.variables]
        for row in result:
            items.append([python_value(row[name]) for name in names])
            if len(items) > cap:
                return {"error": _too_many(cap)}
        return {"variables": names, "rows": items}
    except SyntaxError as problem:
        return {"error": f"bad SPARQL: {' '.join(str(problem).split())}"}
    except (OSError, ValueError, RuntimeError) as problem:
        return {"error": f"SPARQL failed: {' '.join(str(problem).split())}"}


def _too_many(cap: int) -> str:
    return (
        f"the query gives more than {cap:,} rows and was stopped (narrow it, add LIMIT, "
        "or raise --max-rows, Hipo.sparql_max_rows or sparql_max_rows)"
    )


if __name__ == "__main__":
    sys.stdout.write(json.dumps(answer(json.loads(sys.stdin.readline()))))
