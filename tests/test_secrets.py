"""Secrets: a corpus of realistic (fake) secrets written through every way into memory.

Ways in: `%%remember` (title, fields, free text), the write-back of the notebook's own Claude
calls (auto-checkpoint: the prompt, the reply, a large tool result offloaded to knowledge/),
`Memory.save_knowledge`, `hipo import`, `hipo remember`, Claude's memory tool and `hipo mcp`'s
remember tool. Afterwards no secret is on disk anywhere under the
memory root (every file, the SQLite index included: its rows and the FTS5 vocabulary), nor in
any prompt built from memory (Layer 1 injected into a user call, `%%ask --recall`, the Claude
summarizer's prompts, captured over the fake API); each is replaced by `[REDACTED:<kind>]`.
"""

from __future__ import annotations

import importlib.util
import io
import json
import random
import re
import shutil
import sqlite3
import string
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter import llm
from hipo_jupyter.cli import commands as cli
from hipo_jupyter.ipython import current
from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory_tool import HipoMemoryTool

RNG = random.Random(20260312)


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class Secret:
    kind: str  # the marker's kind: [REDACTED:<kind>]
    value: str  # what must never be stored
    line: str  # how it is written, as people paste it

    @property
    def needles(self) -> set[str]:
        """What to look for on disk: the value, and its longest run of letters and digits
        (an index tokenizes; FTS5 lower-cases), in both cases."""
        run_ = max(re.findall(r"[A-Za-z0-9]+", self.value), key=len)
        return {self.value, run_, run_.lower()}


def corpus() -> list[Secret]:
    anthropic_key = "sk-ant-api03-" + rand(ALNUM + "-_", 93) + "AA"
    openai_key = "sk-proj-" + rand(ALNUM, 20) + "T3BlbkFJ" + rand(ALNUM, 20)
    openai_legacy = "sk-" + rand(ALNUM, 48)
    aws_id = "AKIA" + rand(UPPER, 16)
    aws_secret = rand(B64, 40)
    ghp = "ghp_" + rand(ALNUM, 36)
    github_pat = "github_pat_11" + rand(UPPER, 20) + "_" + rand(ALNUM, 59)
    slack = (
        "xoxb-" + rand(string.digits, 12) + "-" + rand(string.digits, 13) + "-" + rand(ALNUM, 24)
    )
    webhook = "https://hooks.slack.com/services/T" + rand(UPPER, 8) + "/B" + rand(UPPER, 10)
    webhook += "/" + rand(ALNUM, 24)
    google = "AIza" + rand(ALNUM + "-_", 35)
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + rand(ALNUM + "-_", 43)
    rsa_body = "\n".join(rand(B64, 64) for _ in range(6))
    rsa = f"-----BEGIN RSA PRIVATE KEY-----\n{rsa_body}\n-----END RSA PRIVATE KEY-----"
    ssh_body = "\n".join(rand(B64, 70) for _ in range(4))
    ssh = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh_body}\n-----END OPENSSH PRIVATE KEY-----"
    db_password = "S3cr3t" + rand(ALNUM, 10)
    env_password = "Tr0ub4dor" + rand(ALNUM, 8)
    stripe = "sk_live_" + rand(ALNUM, 24)
    api_key = rand(ALNUM, 32)
    bearer = rand(ALNUM, 40)
    basic = "dXNlcjpwYXNz" + rand(ALNUM, 12) + "=="
    client_secret = "Cs" + rand(ALNUM, 14)
    return [
        Secret("anthropic-api-key", anthropic_key, f"ANTHROPIC key {anthropic_key} for the bot"),
        Secret("openai-api-key", openai_key, f"client = OpenAI(api_key='{openai_key}')"),
        Secret("openai-api-key", openai_legacy, f"old key {openai_legacy}"),
        Secret("aws-access-key-id", aws_id, f"aws_access_key_id = {aws_id}"),
        Secret("aws-secret-access-key", aws_secret, f"aws_secret_access_key = {aws_secret}"),
        Secret("github-token", ghp, f"git clone https://{ghp}@github.com/acme/app"),
        Secret("github-token", github_pat, f"export GH_PAT={github_pat}"),
        Secret("slack-token", slack, f"SLACK_BOT={slack}"),
        Secret("slack-webhook", webhook, f"alerts go to {webhook}"),
        Secret("google-api-key", google, f"maps key {google}"),
        Secret("jwt", jwt, f"Authorization: Bearer {jwt}"),
        Secret("private-key", rsa_body.split("\n")[2], rsa),
        Secret("private-key", ssh_body.split("\n")[1], ssh),
        Secret("url-password", db_password, f"postgres://admin:{db_password}@db.internal:5432/app"),
        Secret("password", env_password, f"DATABASE_PASSWORD={env_password}"),
        Secret("stripe-key", stripe, f"STRIPE_SECRET_KEY={stripe}"),
        Secret("secret", client_secret, f"CLIENT_SECRET={client_secret}"),
        Secret("api-key", api_key, f'config = {{"api_key": "{api_key}"}}'),
        Secret("bearer-token", bearer, f"curl -H 'Authorization: Bearer {bearer}' https://api"),
        Secret("basic-auth", basic, f"Authorization: Basic {basic}"),
        *service_credentials(),
        *notebook_idioms(),
    ]


def notebook_idioms() -> list[Secret]:
    """Issue 50: credentials as notebooks and shells write them, and the formats it added."""
    hexa = string.digits + "abcdef"
    password = "Pw" + rand(ALNUM, 14) + "!7"
    bech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
    shapes = [
        ("password", password, 'os.environ["DB_PASSWORD"] = "{}"'),
        ("secret", rand(ALNUM, 24), "config['client_secret'] = '{}'"),
        ("key", rand(hexa, 32), '{{"username": "dana", "key": "{}"}}'),
        ("key", rand(hexa, 40), 'wandb.login(key="{}")'),
        ("password", "Nr" + rand(ALNUM, 16), "machine api.wandb.ai login dana password {}"),
        ("password", "Cu" + rand(ALNUM, 16), "curl -s -u dana:{} https://api.example.com"),
        ("password", "My" + rand(ALNUM, 16), "mysql -h db -u root -p{} sales"),
        ("password", "Pg" + rand(ALNUM, 16), "db.internal:5432:sales:dana:{}"),
        ("vault-token", "hvs." + rand(ALNUM, 90), "vault login {}"),
        ("notion-token", "ntn_" + rand(string.digits, 11) + rand(ALNUM, 35), "Client(auth='{}')"),
        ("sentry-token", "sntryu_" + rand(hexa, 64), "sentry token {}"),
        ("grafana-token", "glsa_" + rand(ALNUM, 32) + "_" + rand(hexa, 8), "grafana {}"),
        ("supabase-key", "sbp_" + rand(hexa, 40), "supabase login --token {}"),
        ("age-secret-key", "AGE-SECRET-KEY-1" + rand(bech32, 58), "age identity {}"),
    ]  # fmt: skip
    return [Secret(kind, value, line.format(value)) for kind, value, line in shapes]


def service_credentials() -> list[Secret]:
    """The credentials of the services notebooks call (issue 43), as their issuers shape them,
    and random values after a key word."""
    hexa = string.digits + "abcdef"
    letters = string.ascii_letters
    b64_key = rand(B64, 86) + "=="
    sas = rand(ALNUM, 20) + "%2B" + rand(ALNUM, 20) + "%3D"
    service_bus = rand(ALNUM, 43) + "="
    discord_bot = "MT" + rand(ALNUM, 24) + "." + rand(ALNUM, 6) + "." + rand(ALNUM, 38)
    discord_hook = rand(ALNUM + "_-", 68)
    telegram = rand(string.digits, 10) + ":AA" + rand(ALNUM, 33)
    gcp_body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + rand(B64, 60)
    gcp = (
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + gcp_body
        + '\\n-----END PRIVATE KEY-----\\n", "client_email": "etl@acme.iam.gserviceaccount.com"}'
    )
    shapes = [
        ("huggingface-token", "hf_" + rand(letters, 34), "login(token='{}')"),
        ("stripe-key", "rk_live_" + rand(ALNUM, 24), "restricted key {} for reports"),
        ("stripe-webhook-secret", "whsec_" + rand(ALNUM, 32), "endpoint_secret = '{}'"),
        ("gitlab-token", "glpat-" + rand(ALNUM + "_-", 20), "git clone https://oauth2:{}@gitlab.com/a/b"),
        ("gitlab-token", "gldt-" + rand(ALNUM, 20), "deploy token {}"),
        ("pypi-token", "pypi-AgEIcHlwaS5vcmc" + rand(ALNUM + "_-", 120), "twine -p {} dist/*"),
        ("npm-token", "npm_" + rand(ALNUM, 36), "//registry.npmjs.org/:_authToken={}"),
        ("sendgrid-api-key", "SG." + rand(ALNUM, 22) + "." + rand(ALNUM, 43), "SendGrid('{}')"),
        ("google-oauth-token", "ya29.a0" + rand(ALNUM + "_-", 150), "gcloud token {}"),
        ("google-oauth-client-secret", "GOCSPX-" + rand(ALNUM, 28), "client {} in the flow"),
        ("google-refresh-token", "1//0g" + rand(ALNUM + "_-", 100), "refresh {} nightly"),
        ("databricks-token", "dapi" + rand(hexa, 32), "databricks configure {}"),
        ("digitalocean-token", "dop_v1_" + rand(hexa, 64), "doctl auth init -t {}"),
        ("azure-storage-key", b64_key, "AccountName=acme;AccountKey={};EndpointSuffix=x.net"),
        ("azure-sas-signature", sas, "https://a.blob.core.windows.net/c?sv=2022-11-02&sig={}"),
        ("azure-shared-access-key", service_bus, "Endpoint=sb://a/;SharedAccessKey={}"),
        ("azure-client-secret", "x7Y8Q~" + rand(ALNUM + "_~.-", 34), "Credential('{}')"),
        ("discord-bot-token", discord_bot, "bot.run('{}')"),
        ("discord-webhook", discord_hook, "https://discord.com/api/webhooks/12345678901/{}"),
        ("alibaba-access-key-id", "LTAI" + rand(ALNUM, 20), "aliyun key id {}"),
        ("twilio-api-key", "SK" + rand(hexa, 32), "twilio key {}"),
        ("twilio-account-sid", "AC" + rand(hexa, 32), "Client('{}', auth)"),
        ("mailgun-api-key", "key-" + rand(hexa, 32), "auth=('api', '{}')"),
        ("shopify-token", "shpat_" + rand(hexa, 32), "X-Shopify-Access-Token {}"),
        ("telegram-bot-token", telegram, "https://api.telegram.org/bot{}/getMe"),
        ("openrouter-api-key", "sk-or-v1-" + rand(hexa, 64), "openrouter key {}"),
        ("groq-api-key", "gsk_" + rand(ALNUM, 52), "Groq(api_key={})"),
        ("replicate-api-token", "r8_" + rand(ALNUM, 37), "replicate {}"),
        ("xai-api-key", "xai-" + rand(ALNUM, 80), "grok with {}"),
        ("private-key", gcp_body, gcp),
        ("api-key", rand(ALNUM, 44), "ibmcloud login --apikey {}"),
        ("token", rand(ALNUM, 32), "curl -H 'X-Auth-Token: {}' https://x.io"),
        ("password", rand(ALNUM, 24), "mysql -u root --password {}"),
    ]  # fmt: skip
    return [
        Secret(kind, value, line if kind == "private-key" else line.format(value))
        for kind, value, line in shapes
    ]


SECRETS = corpus()
KINDS = sorted({s.kind for s in SECRETS})


def all_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def fts_terms(root: Path) -> set[str]:
    """Every term of the FTS5 index, read through fts5vocab (the file itself is not changed)."""
    db = sqlite3.connect(root / "memory" / ".index" / "fts5.sqlite3")
    try:
        db.execute("create virtual table temp.vocab using fts5vocab(main, documents_fts, 'row')")
        return {row[0] for row in db.execute("select term from temp.vocab")}
    finally:
        db.close()


def leaks_on_disk(root: Path) -> list[str]:
    found = []
    files = all_files(root)
    assert any(name.endswith("fts5.sqlite3") for name in files)
    for secret in SECRETS:
        for name, data in files.items():
            for needle in secret.needles:
                if needle.encode() in data:
                    found.append(f"{secret.kind} in {name}")
    terms = fts_terms(root)
    for secret in SECRETS:
        run_ = max(re.findall(r"[A-Za-z0-9]+", secret.value), key=len).lower()[:12]
        if any(run_ in term for term in terms):  # a prefix: stemming may change the end
            found.append(f"{secret.kind} in the FTS5 vocabulary")
    return found


def leaks_in(texts: list[str]) -> list[str]:
    return [s.kind for s in SECRETS for t in texts for n in s.needles if n in t]


def request_texts(api: FakeMessagesAPI, start: int = 0) -> list[str]:
    return [json.dumps(body) for body in api.message_requests()[start:]]


CALL = (
    "import anthropic\n"
    "client = anthropic.Anthropic()\n"
    "reply = client.messages.create(model='claude-sonnet-5-5', max_tokens=100,\n"
    "    messages={messages!r})\n"
)


def write_every_way(claude_shell, api: FakeMessagesAPI, memory_root: Path, tmp_path: Path) -> int:
    """Every secret through every way in; returns how many writes that made."""
    writes = 0
    # 1. %%remember: in the title, in a field, in free text
    for number, secret in enumerate(SECRETS):
        first_line = secret.line.split("\n")[0]  # a bare value is not a secret by its looks
        as_title = not any(word.startswith("-") for word in first_line.split())  # not options
        title = f"Setup step {number} {first_line if as_title else ''}"
        body = f"- request: wire the service\n- analysis: {first_line}\n\n"
        body += f"Pasted config:\n{secret.line}\n"
        run(claude_shell, f"%%remember {title}\n{body}")
        writes += 1
    # 2. the write-back of the notebook's own calls: prompt, reply, large tool result
    for number, secret in enumerate(SECRETS):
        api.replies.append(f"Done: I stored {secret.line} as asked (step {number}).")
        tool_text = f"{secret.line}\n" + "\n".join(
            f"row {n}: order ORD-{n} shipped" for n in range(1500 if number == 0 else 3)
        )
        messages = [
            {"role": "user", "content": f"Use this to connect: {secret.line}"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch",
                                               "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": tool_text},
                {"type": "text", "text": f"Also keep {secret.line} for step {number}"},
            ]},
        ]  # fmt: skip
        run(claude_shell, CALL.format(messages=messages))
        writes += 1
    # 3. save_knowledge, as %%ask's offload and the write-back use it
    memory = current(claude_shell).memory
    memory.save_knowledge("Credentials dump", "\n\n".join(s.line for s in SECRETS))
    writes += len(SECRETS)
    # 4. hipo import
    turns = [
        {"speaker": "ops", "text": f"here you go: {s.line}", "time": f"2026-03-0{1 + n % 9}"}
        for n, s in enumerate(SECRETS)
    ]
    transcript = tmp_path / "ops-chat.json"
    transcript.write_text(json.dumps(turns))
    assert cli.main(["--root", str(memory_root), "import", str(transcript)]) == 0
    writes += len(SECRETS)
    # 5. `hipo remember`, the memory tool and `hipo mcp`'s remember: each secret once
    lines = "\n".join(f"- analysis: {s.line}" for s in SECRETS)
    sys.stdin, stdin = io.StringIO(lines + "\n"), sys.stdin
    try:
        assert cli.main(["--root", str(memory_root), "remember", "Pasted from the terminal"]) == 0
    finally:
        sys.stdin = stdin
    tool = HipoMemoryTool(memory)
    tool.call({"command": "create", "path": "/memories/knowledge/creds.md", "file_text": lines})
    writes += 2 * len(SECRETS)
    if importlib.util.find_spec("mcp") is not None:
        from test_mcp import call, session

        async def remember_over_mcp() -> None:
            async with session(memory_root) as client:
                text, error = await call(client, "remember", title="From an agent", body=lines)
                assert not error, text

        anyio.run(remember_over_mcp)
        writes += len(SECRETS)
    return writes


def test_no_secret_reaches_the_disk_the_index_or_a_prompt(
    claude_shell, api: FakeMessagesAPI, memory_root: Path, tmp_path: Path, capsys
) -> None:
    writes = write_every_way(claude_shell, api, memory_root, tmp_path)
    session = current(claude_shell)
    session.memory.compact()

    # the markers say what was there
    raw = "\n".join(p.read_text() for p in sorted((memory_root / "memory").glob("2026-*.md")))
    knowledge = "\n".join(p.read_text() for p in (memory_root / "knowledge").glob("*.md"))
    for kind in KINDS:
        assert f"[REDACTED:{kind}]" in raw, kind
        assert f"[REDACTED:{kind}]" in knowledge, kind
    assert any("tool result saved to knowledge/" in line for line in raw.splitlines())
    assert "Pasted from the terminal" in raw and "From an agent" in raw  # CLI and MCP wrote
    assert "[REDACTED:" in (memory_root / "knowledge" / "creds.md").read_text()  # memory tool

    # prompts built from memory: the Claude summarizer over every raw log ...
    start = len(api.message_requests())
    api.replies.extend(["## Topics\nsetup\n## Key Decisions\n- wire it\n"] * 40)
    summarizing = Memory(
        memory_root,
        config=MemoryConfig(daily_threshold=5, weekly_threshold=5, monthly_threshold=5),
        summarizer=llm.ClaudeSummarizer(client=api.client()),
    )
    (memory_root / "memory" / ".compaction-state.json").unlink()
    for level in ("daily", "weekly", "monthly"):  # every node written again, by Claude
        shutil.rmtree(memory_root / "memory" / level)
    summarizing.compact()
    summarizing.close()
    # ... Layer 1 injected into a user call, and %%ask with recalled memory
    run(claude_shell, CALL.format(messages=[{"role": "user", "content": "What is set up?"}]))
    for words in ("wire the service", "connect keep step", "credentials dump", "ops here"):
        run(claude_shell, f"%%ask --recall {words}\nWhat did we configure?")
    prompts = request_texts(api, start)
    assert len(prompts) >= 6
    assert any(llm.RECALL_TAG in p for p in prompts)
    assert any(llm.LAYER1_OPEN in p for p in prompts)
    assert any("hipo-source" in p for p in prompts), "the summarizer was never asked"
    assert leaks_in(prompts) == []
    assert any("[REDACTED:" in p for p in prompts)

    # nothing on disk, the index included
    assert leaks_on_disk(memory_root) == []
    with capsys.disabled():
        print(
            f"\nsecrets: {len(SECRETS)} in the corpus ({len(KINDS)} kinds), {writes} writes "
            f"through 7 ways in, {len(prompts)} prompts checked; leaked: 0"
        )


def test_the_check_finds_a_secret_written_around_the_engine(memory_root: Path) -> None:
    """The detector itself: a secret put on disk by another tool is found in the file and in
    the index, so the zero above means something."""
    memory = Memory(memory_root)
    memory.remember("Harmless", "- outcome: nothing to see")
    log = next((memory_root / "memory").glob("2026-*.md"))
    with log.open("a") as handle:
        handle.write(f"\n## Pasted by hand\n{SECRETS[0].line}\n")
    memory.reindex()
    memory.close()
    found = leaks_on_disk(memory_root)
    assert f"{SECRETS[0].kind} in memory/{log.name}" in found
    assert any(f.startswith(SECRETS[0].kind) and "fts5.sqlite3" in f for f in found)
    assert f"{SECRETS[0].kind} in the FTS5 vocabulary" in found


def test_a_secret_typed_into_ask_is_not_saved_in_clear(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    secret = SECRETS[0]
    api.replies.append(f"Noted: {secret.line}")
    run(claude_shell, f"%%ask\nPlease remember our key: {secret.value}")
    saved = {
        name: data for name, data in all_files(memory_root).items() if ".conversations" in name
    }
    assert saved, "the conversation was saved"
    assert not [name for name, data in saved.items() if secret.value.encode() in data]
