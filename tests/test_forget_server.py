"""The sidebar's Forget and Correct over a real Jupyter server (jp_fetch's client): POSTs with
the token or the XSRF cookie, 4xx JSON with one line for bad input and nothing written."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path

from test_server_hostile import (  # noqa: F401  (fixtures)
    Server,
    login,
    message,
    outside,
    project,
    query,
    server,
)

from hipo_jupyter.memory import Memory

NAME = "Philippa Ashdown-Vere"


def files_holding(root: Path, needle: str) -> list[str]:
    return [
        str(Path(folder, name).relative_to(root))
        for folder, _, names in os.walk(root)
        for name in names
        if needle.encode() in Path(folder, name).read_bytes()
    ]


async def test_the_sidebar_forgets_and_corrects_with_xsrf(
    server: Server,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    memory = Memory(project, today=lambda: date(2026, 3, 12))
    secret = memory.remember("Call [project]", f"- request: a call with {NAME}", via="magic")
    wrong = memory.remember("Price [project]", "- outcome: the price is 9999 EUR", via="magic")
    memory.close()
    logs = {p: p.read_bytes() for p in (project / "memory").glob("*.md")}
    params = query(path="project/analysis.ipynb")
    cookie = await login(server)
    xsrf = cookie.split(";")[0].split("=", 1)[1]
    session = {"Cookie": cookie}
    body = json.dumps({"id": secret.id, "reason": "asked"}).encode()
    for endpoint, text in (("forget", "reason"), ("correct", "body")):
        not_text = json.dumps({"id": secret.id, text: 5}).encode()
        refused = await server.api(endpoint, params, token=None, method="POST", body=body,
                                   headers=session)  # fmt: skip
        assert refused.code == 403  # no XSRF token
        assert (await server.api(endpoint, params)).code == 405
        for bad, words in [(b"not json", "must be JSON"), (b'{"id": 3}', "missing"),
                           (b'{"id": "nope-nope"}', "no checkpoint has the ID"),
                           (not_text, "must be text")]:  # fmt: skip
            response = await server.api(endpoint, params, method="POST", body=bad)
            assert response.code == 400 and words in message(response), response.body
    assert {p: p.read_bytes() for p in (project / "memory").glob("*.md")} == logs

    fixed = await server.api(
        "correct", params, token=None, method="POST", headers={**session, "X-XSRFToken": xsrf},
        body=json.dumps({"id": wrong.id, "body": "- outcome: the price is 99 EUR"}).encode(),
    )  # fmt: skip
    assert fixed.code == 200 and json.loads(fixed.body)["replaces"] == wrong.id
    hits = json.loads((await server.api("recall", query(path="project/analysis.ipynb",
                                                        q="price"))).body)  # fmt: skip
    shown = json.dumps(hits)
    assert "99 EUR" in shown and "9999 EUR" not in shown

    nowhere = json.dumps({"file": "memory/2026-03-12.md", "line": 999}).encode()
    response = await server.api("forget", params, method="POST", body=nowhere)
    assert response.code == 400 and "no checkpoint with an ID starts at" in message(response)
    hit = json.dumps({"file": "memory/2026-03-12.md", "line": 1, "reason": "asked"}).encode()
    gone = await server.api("forget", params, token=None, method="POST", body=hit,
                            headers={**session, "X-XSRFToken": xsrf})  # fmt: skip
    answer = json.loads(gone.body)
    assert gone.code == 200 and answer["forgot"] == secret.id and answer["clean"], answer
    assert files_holding(project, "Ashdown") == []


async def test_the_sidebars_forget_names_the_notebooks_still_showing_it_and_check_counts_them(
    server: Server,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 48: the saved notebook and its `.ipynb_checkpoints` copy still show the note in an
    earlier `%recall` output; the server's answer names both (the sidebar shows them:
    labextension/src/forgetnotice.ts) and `hipo check` counts them instead of "no trace"."""
    from test_cli import run_hipo

    memory = Memory(project, today=lambda: date(2026, 3, 12))
    secret = memory.remember("Call [project]", f"- request: a call with {NAME}", via="magic")
    memory.close()
    output = {"output_type": "stream", "name": "stdout",
              "text": ["1. Call (memory/2026-03-12.md:1)\n", f"- request: a call with {NAME}\n"]}
    cell = {"cell_type": "code", "source": ["%recall call"], "metadata": {},
            "execution_count": 1, "outputs": [output]}  # fmt: skip
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    (project / "analysis.ipynb").write_text(notebook)
    (project / ".ipynb_checkpoints").mkdir(exist_ok=True)
    (project / ".ipynb_checkpoints" / "analysis-checkpoint.ipynb").write_text(notebook)

    body = json.dumps({"id": secret.id}).encode()
    gone = await server.api("forget", query(path="project/analysis.ipynb"), method="POST",
                            body=body)  # fmt: skip
    answer = json.loads(gone.body)
    assert gone.code == 200 and answer["clean"], answer
    assert sorted(answer["user_files"]) == [
        ".ipynb_checkpoints/analysis-checkpoint.ipynb", "analysis.ipynb"
    ]
    check = run_hipo(project, "check")
    assert check.returncode == 0, check.stdout
    assert "2 of your own files still show it (edit them)" in check.stdout, check.stdout
    assert "analysis.ipynb" in check.stdout
