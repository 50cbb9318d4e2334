"""Issue 50: credentials as notebooks write them (subscripts, attributes, dict literals and
JSON, login and client calls, `.env`, `.netrc`, `.pgpass`, command-line flags), the token
formats issuers publish beyond issue 43's, a corpus of notebook lines that must stay intact,
and redaction's cost bounded by the input's length (checked for correctness here on modest
adversarial inputs; the timings are benchmarks/redact_speed.py's).

Fake secrets are assembled from pieces, so no whole token shape sits in the source.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.disk.redact import TOKEN_FORMATS, redact, redact_counted

HEX32 = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # random-looking hex, as Kaggle keys are
HEX40 = HEX32 + "7c6d5e4f"  # as W&B API keys are
ALNUM = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY"
PASSWORD = "Tr0ub4dor&3x"

# (text as a notebook or shell writes it, what must go, the kind its marker names)
IDIOMS = [
    (f'os.environ["DB_PASSWORD"] = "{PASSWORD}"', PASSWORD, "password"),
    (f"os.environ['WANDB_API_KEY'] = '{HEX40}'", HEX40, "api-key"),
    (f'config["client_secret"] = "{PASSWORD}"', PASSWORD, "secret"),
    (f"cfg.api_key = '{PASSWORD}'", PASSWORD, "api-key"),
    (f'settings = {{"db_password": "{PASSWORD}", "host": "db"}}', PASSWORD, "password"),
    (f'{{"username": "dana", "key": "{HEX32}"}}', HEX32, "key"),  # ~/.kaggle/kaggle.json
    (f'wandb.login(key="{HEX40}")', HEX40, "key"),
    (f"WANDB_API_KEY={HEX40}", HEX40, "api-key"),
    (f"%env WANDB_API_KEY={HEX40}", HEX40, "api-key"),
    (f'client = Client(api_key="{PASSWORD}")', PASSWORD, "api-key"),
    (f"export DATABASE_PASSWORD={PASSWORD}\n", PASSWORD, "password"),  # .env
    (f"machine api.wandb.ai\n  login user\n  password {PASSWORD}\n", PASSWORD, "password"),
    (f"machine ftp.example.com login dana password {PASSWORD}", PASSWORD, "password"),
    (f"db.internal:5432:sales:dana:{PASSWORD}", PASSWORD, "password"),  # ~/.pgpass
    (f"localhost:*:*:postgres:{PASSWORD}\n", PASSWORD, "password"),
    (f"!curl -s -u dana:{PASSWORD} https://api.example.com/v1", PASSWORD, "password"),
    (f"curl --user dana:{PASSWORD} https://x.io", PASSWORD, "password"),
    (f"!mysql -h db -u root -p{PASSWORD} sales", PASSWORD, "password"),
    (f"mysqldump -uroot -p{PASSWORD} sales > dump.sql", PASSWORD, "password"),
    (f"pg_dump --password {PASSWORD} sales", PASSWORD, "password"),
    (f"tool --password={PASSWORD}", PASSWORD, "password"),
    (f"gh auth login --token={ALNUM}", ALNUM, "token"),
    (f"cli --api-key {ALNUM} run", ALNUM, "api-key"),
    (f"deploy --client-secret {PASSWORD}", PASSWORD, "secret"),
]

VAULT = "hvs." + "CAESI" + ALNUM + ALNUM[:20]
VAULT_BATCH = "hvb." + "AAAAAQ" + ALNUM * 4
NOTION = "ntn" + "_" + "12345678901" + ALNUM[:35]
NOTION_LEGACY = "secret" + "_" + ALNUM + "Zq8Wn4Rt5Yu"
SENTRY_ORG = "sntrys" + "_" + "eyJpYXQiOjE3MDAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIn0" + ALNUM
SENTRY_USER = "sntryu" + "_" + HEX32 + HEX32
SENTRY_DSN = f"https://{HEX32}" + "@o123456.ingest.us.sentry.io/4505"
GRAFANA_CLOUD = "glc" + "_" + "eyJvIjoiMTIzNDU2IiwibiI6InN0YWNrLTEyMzQ1Ni" + ALNUM
GRAFANA_SA = "glsa" + "_" + ALNUM + "_" + HEX32[:8]
SUPABASE = "sbp" + "_" + HEX40
SUPABASE_SECRET = "sb" + "_secret_" + ALNUM[:24]
AGE = "AGE-SECRET" + "-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE"
LINEAR = "lin" + "_api_" + ALNUM + "Zq8Wn4Rt"
DOPPLER = "dp" + ".pt." + ALNUM + ALNUM[:11]
POSTMAN = "PMAK" + "-" + HEX32[:24] + "-" + HEX32 + "ab"
FIGMA = "figd" + "_" + ALNUM + "-Zq8Wn4Rt_"
ONEPASSWORD = "ops" + "_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSJ9" + ALNUM
ATLASSIAN = "ATATT3" + "xFfGF0" + (ALNUM * 6)[:180]

FORMATS = [
    (f"vault login {VAULT}", VAULT, "vault-token"),
    (f"VAULT_TOKEN is {VAULT_BATCH}", VAULT_BATCH, "vault-token"),
    (f"notion = Client(auth='{NOTION}')", NOTION, "notion-token"),
    (f"Notion(auth={NOTION_LEGACY})", NOTION_LEGACY, "notion-token"),
    (f"sentry-cli with {SENTRY_ORG}", SENTRY_ORG, "sentry-token"),
    (f"user token {SENTRY_USER}", SENTRY_USER, "sentry-token"),
    (f'sentry_sdk.init(dsn="{SENTRY_DSN}")', HEX32, "sentry-dsn-key"),
    (f"grafana cloud {GRAFANA_CLOUD}", GRAFANA_CLOUD, "grafana-token"),
    (f"service account {GRAFANA_SA}", GRAFANA_SA, "grafana-token"),
    (f"supabase login --token {SUPABASE}", SUPABASE, "supabase-key"),
    (f"create_client(url, '{SUPABASE_SECRET}')", SUPABASE_SECRET, "supabase-key"),
    (f"# created: 2026-03-12\n# public key: age1xyz\n{AGE}\n", AGE, "age-secret-key"),
    (f"LinearClient({LINEAR!r})", LINEAR, "linear-api-key"),
    (f"doppler with {DOPPLER}", DOPPLER, "doppler-token"),
    (f"postman {POSTMAN}", POSTMAN, "postman-api-key"),
    (f"figma {FIGMA}", FIGMA, "figma-token"),
    (f"op with {ONEPASSWORD}", ONEPASSWORD, "1password-service-token"),
    (f"jira token {ATLASSIAN}", ATLASSIAN, "atlassian-api-token"),
]

ISSUE_50_KINDS = {
    "vault-token", "notion-token", "sentry-token", "sentry-dsn-key", "grafana-token",
    "supabase-key", "age-secret-key", "linear-api-key", "doppler-token", "postman-api-key",
    "figma-token", "1password-service-token", "atlassian-api-token",
}  # fmt: skip


@pytest.mark.parametrize(("text", "secret", "kind"), IDIOMS + FORMATS)
def test_each_idiom_and_format_is_replaced_by_its_kind(text, secret, kind):
    redacted = redact(text)
    assert secret not in redacted, redacted
    assert f"[REDACTED:{kind}]" in redacted, redacted
    assert redact(redacted) == redacted


def test_the_new_formats_are_rows_of_the_table_each_with_a_case():
    table = {f.kind for f in TOKEN_FORMATS}
    assert table >= ISSUE_50_KINDS
    assert {kind for _, _, kind in FORMATS} == ISSUE_50_KINDS


def test_names_commands_and_hosts_around_a_value_are_kept():
    assert redact(f"curl -u dana:{PASSWORD} https://x.io") == (
        "curl -u dana:[REDACTED:password] https://x.io"
    )
    assert redact(f"db.internal:5432:sales:dana:{PASSWORD}") == (
        "db.internal:5432:sales:dana:[REDACTED:password]"
    )
    assert redact(f'os.environ["DB_PASSWORD"] = "{PASSWORD}"  # dev') == (
        'os.environ["DB_PASSWORD"] = "[REDACTED:password]"  # dev'
    )
    assert redact(f"TOKEN={PASSWORD}   \nnext") == "TOKEN=[REDACTED:token]   \nnext"


def test_the_count_per_kind_is_what_was_replaced():
    text = "\n".join(line for line, _, _ in IDIOMS[:4]) + f"\nvault login {VAULT}\n"
    result = redact_counted(text)
    assert result.text == redact(text)
    assert result.counts == {"password": 1, "api-key": 2, "secret": 1, "vault-token": 1}
    assert result.summary() == "1 password, 2 api-key, 1 secret, 1 vault-token"
    assert redact_counted(result.text).counts == {}  # markers are never counted again
    assert redact_counted("nothing here").summary() == ""


# Notebook lines that look like credentials to a careless rule and must stay as they are.
FALSE_POSITIVES = [
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "md5 d41d8cd98f00b204e9800998ecf8427e  data/orders.parquet",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  model.safetensors",
    "run_id = '123e4567-e89b-12d3-a456-426614174000'",
    "key: 123e4567-e89b-12d3-a456-426614174000",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
    "git checkout 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "cache_key = 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "cache key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "sha256_key = 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42'
    'mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
    "   region  revenue  growth\n0    EMEA  1204332     4.1\n1    APAC   982113     2.7",
    "<class 'pandas.core.frame.DataFrame'>\nRangeIndex: 1200000 entries, 0 to 1199999",
    "numpy==1.26.4\npandas==2.2.2\nscikit-learn==1.5.0\ntokenizers==0.19.1\nkeyring==25.2.1",
    "torch @ https://download.pytorch.org/whl/cu121/torch-2.3.0%2Bcu121-cp311-linux_x86_64.whl",
    "https://example.com/api/v1/orders?page=2&sort=date#results",
    "https://huggingface.co/datasets/squad/resolve/main/train.json",
    "rows.sort(key=lambda x: x[1])",
    "sorted(d.items(), key=lambda kv: kv[1], reverse=True)",
    '{"key": "region", "value": "EMEA"}',
    'df.pivot_table(index="key", columns="month", values="revenue")',
    "the --password option asks for it at the prompt",
    "pip install --token-file ~/.config/token.txt",
    "docker run -u 1000:1000 -v $PWD:/data image",
    "fe80:0:0:0:1",
    "2026-03-12 14:32:05,123 INFO tokenizer loaded in 0.4s",
    "secret_santa_assignments_2026 = shuffle(names)",
    "mysql -u root -p sales  # asks for the password",
    "mysql -u root -p$MYSQL_PASSWORD sales",
    "curl -u $USER:$TOKEN https://api.example.com",
    "machine api.example.com login dana password $NETRC_PASSWORD",
    "AGE-SECRET-KEY-1 is how an age identity starts",
    "The lemma 'sentry' and 'vault' are words; hvs. and ntn_ are prefixes.",
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_notebook_lines_that_are_not_credentials_stay_intact(text):
    assert redact(text) == text


# -- linear time: adversarial inputs, checked for correctness only (benchmarks/ times them) ---

ADVERSARIAL_UNITS = [
    "sk-", "ghp_", "AKIA", "key=", "password:", "token ", "token_", "secret_", "api_key=\"",
    "eyJ", "a-", "xoxb-", "glpat-", "hvs.", "ntn_", "glc_", "sbp_", "AGE-SECRET-KEY-1",
    "aws_secret_access_key=", "Authorization: ", "://a:", "machine m login l password ",
    "a:1:b:c:", "--password ", "curl -u a:", "mysql -p", "key=a1", "TOKEN=x   ", "aB3dE5",
]  # fmt: skip


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_a_long_run_of_one_prefix_is_redacted_and_stable(unit):
    text = unit * (64_000 // len(unit)) + "é"
    once = redact(text)
    assert redact(once) == once
    assert once.count("[REDACTED:") <= len(text) // 8  # never more markers than values


def test_a_secret_after_a_long_run_of_its_prefix_is_still_found():
    token = "ghp" + "_" + ALNUM + "abcd"
    text = "ghp_" * 16_000 + " " + token + " and " + "key=" * 16_000 + f" key={ALNUM}"
    redacted = redact(text)
    assert token not in redacted and ALNUM not in redacted


SCANNER_PIECES = st.sampled_from(
    ["key", "token", "secret", "password", "api_key", "=", ":", '"', "'", "[", "]", " ", "\n",
     "-", "_", ".", "--", "machine ", "login ", "curl -u ", "mysql -p", "hvs.", "ntn_", ALNUM,
     HEX32, "[REDACTED:key]", "@", "://", "5432", "*"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(SCANNER_PIECES, max_size=40).map("".join))
def test_the_scanner_is_idempotent_and_counts_what_it_replaces(text):
    result = redact_counted(text)
    assert redact(result.text) == result.text
    before = text.count("[REDACTED:")
    assert result.text.count("[REDACTED:") - before <= sum(result.counts.values())
