"""Redaction: each kind of secret is replaced by its marker; ordinary text is left alone.

The fake secrets are assembled from pieces so that no complete token shape sits in the source
(secret scanners on the repository would flag it); the assembled strings have the real shapes.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.disk.redact import TOKEN_FORMATS
from hipo_jupyter.memory.disk.redact.rules import (
    REDACTED_MARKER_RE,
    _looks_random,
    redact,
    shannon_entropy,
)

ALNUM = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY"  # 32 mixed characters

ANTHROPIC_KEY = "sk-" + "ant-api03-" + ALNUM * 3 + "-AAAAAA"
OPENAI_KEY = "sk-" + "proj-" + ALNUM + "_" + ALNUM + "-" + ALNUM[:10]
OPENAI_LEGACY_KEY = "sk-" + ALNUM[:20] + "T3BlbkFJ" + ALNUM[:20]
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_TEMP_KEY_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp" + "_" + ALNUM + "abcd"
GITHUB_APP_TOKEN = "ghs" + "_" + ALNUM + "WXYZ"
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0" + ALNUM[:12] + "_" + ALNUM + ALNUM[:27]
SLACK_TOKEN = "xox" + "b-123456789012-1234567890123-" + ALNUM[:24]
GOOGLE_KEY = "AIza" + "SyA-" + ALNUM[:31]
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n"
    "uKZg7cSRhYz2BOlHSG9rlhXk4rBSTA0JW4pz5kzdEtM0EXAMPLEONLY0000000000\n"
    "-----END " + "RSA PRIVATE KEY-----"
)
OPENSSH_KEY = (
    "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END " + "OPENSSH PRIVATE KEY-----"
)

# (text containing one secret, the secret, the kind its marker must name)
SECRETS = [
    (f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}", ANTHROPIC_KEY, "anthropic-api-key"),
    (
        f'client = anthropic.Anthropic(api_key="{ANTHROPIC_KEY}")',
        ANTHROPIC_KEY,
        "anthropic-api-key",
    ),
    (f"use {OPENAI_KEY} for the batch", OPENAI_KEY, "openai-api-key"),
    (f"OPENAI_API_KEY: {OPENAI_LEGACY_KEY}", OPENAI_LEGACY_KEY, "openai-api-key"),
    (f"key id {AWS_KEY_ID} in us-east-1", AWS_KEY_ID, "aws-access-key-id"),
    (f"AWS_ACCESS_KEY_ID={AWS_TEMP_KEY_ID}", AWS_TEMP_KEY_ID, "aws-access-key-id"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws-secret-access-key"),
    (f'"SecretAccessKey": "{AWS_SECRET}"', AWS_SECRET, "aws-secret-access-key"),
    (f"git push https://{GITHUB_TOKEN}@github.com/org/repo", GITHUB_TOKEN, "github-token"),
    (f"token {GITHUB_APP_TOKEN} expires in 1h", GITHUB_APP_TOKEN, "github-token"),
    (f"PAT: {GITHUB_PAT}", GITHUB_PAT, "github-token"),
    (f"slack bot {SLACK_TOKEN}", SLACK_TOKEN, "slack-token"),
    (f"maps key={GOOGLE_KEY}&q=berlin", GOOGLE_KEY, "google-api-key"),
    (f"cookie session={JWT}; path=/", JWT, "jwt"),
    (f"Here is the key:\n{PRIVATE_KEY}\nrotate it.", PRIVATE_KEY, "private-key"),
    (f"{OPENSSH_KEY}\n", OPENSSH_KEY, "private-key"),
    ("postgres://admin:hunter2@db.internal:5432/sales", "hunter2", "url-password"),
    ("redis://:s3cr3t-Pa55@cache:6379/0", "s3cr3t-Pa55", "url-password"),
    (
        "curl -H 'Authorization: Bearer abc123.def456-ghi' https://x.io",
        "abc123.def456-ghi",
        "bearer-token",
    ),
    ('headers = {"Authorization": "Basic dXNlcjpwYXNz"}', "dXNlcjpwYXNz", "basic-auth"),
    (
        "auth = Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "bearer-token",
    ),
    ("DB_PASSWORD=correct horse battery staple", "correct horse battery staple", "password"),
    ("export STRIPE_SECRET=rk_live_abcdef123456", "rk_live_abcdef123456", "secret"),
    ("  passwd: Tr0ub4dor&3", "Tr0ub4dor&3", "password"),
    ("- password: hunter2", "hunter2", "password"),
    ('{"api_key": "abc-123-def"}', "abc-123-def", "api-key"),
    ("X-API-Key: 0a1b2c3d4e5f", "0a1b2c3d4e5f", "api-key"),
    ("connect(host='db', password='pa55word!')", "pa55word!", "password"),
    ("https://example.com/cb?access_token=ya29a0AfH6SM&state=1", "ya29a0AfH6SM", "token"),
    (
        "PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe512961708279",
        "0x4c0883a6910",
        "private-key",
    ),
    ("SLACK_BOT_TOKEN='xyz-not-a-slack-shape'", "xyz-not-a-slack-shape", "token"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[s[2] for s in SECRETS])
def test_each_secret_is_replaced_by_its_kind(text, secret, kind):
    redacted = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert redact(redacted) == redacted


def test_names_users_and_hosts_are_kept():
    assert redact("DB_PASSWORD=hunter2") == "DB_PASSWORD=[REDACTED:password]"
    assert redact('"password": "hunter2"') == '"password": "[REDACTED:password]"'
    assert (
        redact("postgres://admin:hunter2@db.internal:5432/sales")
        == "postgres://admin:[REDACTED:url-password]@db.internal:5432/sales"
    )
    assert redact("Authorization: Bearer abc123") == "Authorization: Bearer [REDACTED:bearer-token]"
    assert redact(f"aws_secret_access_key={AWS_SECRET}") == (
        "aws_secret_access_key=[REDACTED:aws-secret-access-key]"
    )


def test_password_with_at_sign_in_url_is_fully_redacted():
    assert redact("mysql://root:p@ss@db:3306/x") == "mysql://root:[REDACTED:url-password]@db:3306/x"


def test_unterminated_private_key_is_redacted_up_to_the_blank_line():
    text = "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAAS\n\nNext paragraph."
    assert redact(text) == "[REDACTED:private-key]\n\nNext paragraph."


def test_a_checkpoint_body_keeps_everything_but_the_secret():
    body = (
        "- request: rerun the nightly export\n"
        f"- analysis: the job used ANTHROPIC_API_KEY={ANTHROPIC_KEY} from the notebook\n"
        "- outcome: moved the key to the vault; export at 2026-03-12T14:32:05Z-7f3a\n"
    )
    assert redact(body) == body.replace(ANTHROPIC_KEY, "[REDACTED:anthropic-api-key]")


INNOCENT = [
    "We decided to cut the starter tier by 15% on 2026-03-12.",
    "Checkpoint 2026-03-12T14:32:05Z-7f3a came from analysis.ipynb cell 7.",
    "Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (short 3f2a9c1).",
    "Read /home/dana/.ssh/id_rsa.pub and C:\\Users\\dana\\secrets\\notes.txt",
    "See knowledge/pricing-strategy.md and plans/2026-Q2.md",
    "The password policy requires 12 characters and a token rotation every 90 days.",
    "Password: use the vault, never paste it here.",
    "Set OPENAI_API_KEY in your environment before running.",
    "response = client.messages.create(model=model, max_tokens=1024, messages=msgs)",
    "usage: input_tokens: 523, output_tokens: 87",
    "token_budget: 3000",
    "TOKENIZERS_PARALLELISM=false",
    "token = tokenizer.encode(text)",
    'api_key = os.environ["ANTHROPIC_API_KEY"]',
    "password = getpass.getpass()",
    "api_key=None",
    "SECRET_KEY=${SECRET_KEY}",
    "password: ********",
    "Install scikit-learn and task-runner-for-the-nightly-exports.",
    "sk-learn-style slugs like sk-some-long-name-without-any-digits stay",
    "Email dana@example.com or visit https://example.com:8080/path?q=1#frag",
    "ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git",
    "The bearer of this note is Dana. Bearer tokens are short-lived.",
    "Topics Index: - pricing [project, 3d]: competitor-analysis -> 2026-03 (W11)",
    "<!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 tags=pricing,q1 -->",
    "UUID 123e4567-e89b-12d3-a456-426614174000 and sha256 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Asia and Akiane are names; ASIAN markets grew.",
    "already [REDACTED:openai-api-key] here",
    "",
]


@pytest.mark.parametrize("text", INNOCENT)
def test_ordinary_text_is_unchanged(text):
    assert redact(text) == text


def test_marker_regex_matches_every_marker_redact_writes():
    redacted = redact("\n".join(text for text, _, _ in SECRETS))
    markers = REDACTED_MARKER_RE.findall(redacted)
    assert len(markers) >= len(SECRETS)
    assert {m[len("[REDACTED:") : -1] for m in markers} >= {kind for _, _, kind in SECRETS}
    assert not REDACTED_MARKER_RE.search("[REDACTED] and [redacted:x]")


@given(st.text())
def test_redact_is_idempotent_on_any_text(text):
    once = redact(text)
    assert redact(once) == once


FILLER = st.text(
    alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)) | st.sampled_from("\n\t"),
    max_size=20,
)
PIECES = st.sampled_from([s[0] for s in SECRETS])


@settings(max_examples=300)
@given(st.lists(st.one_of(PIECES, FILLER), max_size=8))
def test_secrets_in_random_surroundings_are_gone_and_redaction_is_stable(parts):
    text = "\n".join(parts)
    once = redact(text)
    assert redact(once) == once
    for piece, secret, _ in SECRETS:
        if piece in parts and len(secret) >= 16:
            assert secret not in once


# Fragments of secret syntax, so the fuzzer reaches the rules instead of only plain text.
FRAGMENTS = st.sampled_from(
    [
        "sk-",
        "ant-",
        "proj-",
        "password",
        "TOKEN",
        "api_key",
        "secret",
        "aws_secret_access_key",
        "=",
        ": ",
        '"',
        "'",
        "://",
        "@",
        ":",
        "Bearer ",
        "Authorization: ",
        "eyJ",
        ".",
        "ghp_",
        "AKIA",
        "xoxb-",
        "AIza",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "[REDACTED:token]",
        "[REDACTED:",
        "]",
        "\n",
        " ",
        "- ",
        "export ",
        "(",
        "[",
        "9",
        ALNUM,
        ALNUM[:16],
    ]  # fmt: skip
)


@settings(max_examples=500)
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=4)), max_size=30).map("".join))
def test_redact_is_idempotent_on_secret_like_text(text):
    once = redact(text)
    assert redact(once) == once


# -- the credential formats of the services notebooks call (issue 43): one case per format -------

HEX = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # 32 hex
B62 = ALNUM + "Zq8Wn4Rt"  # 40 mixed
B64_KEY = (ALNUM * 3)[:86] + "=="  # an Azure storage account key: 86 base64 and `==`
HF_TOKEN = "hf" + "_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"
STRIPE_LIVE = "sk" + "_live_" + ALNUM[:24]
STRIPE_RESTRICTED = "rk" + "_live_" + ALNUM[:24]
STRIPE_TEST = "sk" + "_test_" + ALNUM[:24]
STRIPE_PUBLISHABLE = "pk" + "_live_" + ALNUM[:24]
STRIPE_WEBHOOK = "whsec" + "_" + ALNUM
GITLAB_PAT = "glpat" + "-" + ALNUM[:20]
GITLAB_DEPLOY = "gldt" + "-" + ALNUM[:20]
GITLAB_RUNNER = "glrt" + "-" + ALNUM[:20]
PYPI_TOKEN = (
    "pypi" + "-AgEIcHlwaS5vcmc" + "CJDU3ZDg4MjE1LWMyNTAtNGJjYy1iNmYzLTg2NjMyNTNmYTc1ZQ" + ALNUM
)
NPM_TOKEN = "npm" + "_" + ALNUM + "ab12"
SENDGRID_KEY = "SG" + "." + ALNUM[:22] + "." + (ALNUM + ALNUM)[:43]
GOOGLE_ACCESS = "ya29" + ".a0AfH6SMC" + ALNUM + ALNUM
GOOGLE_CLIENT_SECRET = "GOCSPX" + "-" + ALNUM[:28]
GOOGLE_REFRESH = "1//0" + "gLm" + ALNUM + ALNUM[:10]
DATABRICKS = "dapi" + HEX
DIGITALOCEAN = "dop" + "_v1_" + HEX + HEX
DIGITALOCEAN_OAUTH = "doo" + "_v1_" + HEX + HEX
DIGITALOCEAN_REFRESH = "dor" + "_v1_" + HEX + HEX
AZURE_SAS_SIG = "k7Z0g%2B" + ALNUM[:30] + "%3D"
AZURE_SHARED_KEY = ALNUM + "aB3dE5fG7hJ="
AZURE_CLIENT_SECRET = "abc" + "8Q~" + ALNUM[:32]
DISCORD_BOT = "MTA" + ALNUM[:21] + "." + "Gh7kLm" + "." + ALNUM[:30]
DISCORD_WEBHOOK_TOKEN = ALNUM + ALNUM + "abcd"
ALIBABA = "LTAI" + "5tB8" + ALNUM[:14]
TWILIO_KEY = "SK" + HEX
TWILIO_ACCOUNT = "AC" + HEX[::-1]
MAILGUN = "key" + "-" + HEX
SHOPIFY = "shpat" + "_" + HEX
TELEGRAM = "123456789" + ":AA" + ALNUM + "Q"
OPENROUTER = "sk" + "-or-v1-" + HEX + HEX
GROQ = "gsk" + "_" + ALNUM + ALNUM[:20]
REPLICATE = "r8" + "_" + ALNUM + "abcde"
XAI = "xai" + "-" + ALNUM * 2 + ALNUM[:16]
SLACK_APP = "xapp" + "-1-A0123456789-1234567890123-" + HEX
PERPLEXITY = "pplx" + "-" + HEX + HEX[:16]
LANGSMITH = "lsv2" + "_pt_" + HEX + "_" + HEX[:10]
PINECONE = "pcsk" + "_4Xk9Q_" + ALNUM + ALNUM[:20]
TAVILY = "tvly" + "-dev-" + ALNUM
SLACK_WEBHOOK = "https://hooks.slack.com" + "/services/T0123ABCD/B0456EFGH/" + ALNUM[:24]
IBM_KEY = "Xy7" + ALNUM + "-9bQ_Kp2w"
GCP_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + ALNUM
GCP_SERVICE_ACCOUNT = (
    '{"type": "service_account", "project_id": "acme-analytics", '
    f'"private_key_id": "{HEX}abcd1234", '
    '"private_key": "-----BEGIN '
    + "PRIVATE KEY-----\\n"
    + GCP_KEY_BODY
    + "\\n-----END "
    + 'PRIVATE KEY-----\\n", "client_email": "etl@acme-analytics.iam.gserviceaccount.com"}'
)

FORMATS = [
    (f"from huggingface_hub import login; login('{HF_TOKEN}')", HF_TOKEN, "huggingface-token"),
    (f"stripe.api_key = {STRIPE_LIVE}", STRIPE_LIVE, "stripe-key"),
    (f"restricted key {STRIPE_RESTRICTED} for reports", STRIPE_RESTRICTED, "stripe-key"),
    (f"test mode: {STRIPE_TEST}", STRIPE_TEST, "stripe-key"),
    (f"Stripe.js uses {STRIPE_PUBLISHABLE}", STRIPE_PUBLISHABLE, "stripe-key"),
    (f"endpoint_secret = '{STRIPE_WEBHOOK}'", STRIPE_WEBHOOK, "stripe-webhook-secret"),
    (f"git clone https://oauth2:{GITLAB_PAT}@gitlab.com/acme/etl", GITLAB_PAT, "gitlab-token"),
    (f"deploy with {GITLAB_DEPLOY}", GITLAB_DEPLOY, "gitlab-token"),
    (f"gitlab-runner register --token {GITLAB_RUNNER}", GITLAB_RUNNER, "gitlab-token"),
    (f"twine upload -u __token__ -p {PYPI_TOKEN} dist/*", PYPI_TOKEN, "pypi-token"),
    (f"//registry.npmjs.org/:_authToken={NPM_TOKEN}", NPM_TOKEN, "npm-token"),
    (f"sg = SendGridAPIClient('{SENDGRID_KEY}')", SENDGRID_KEY, "sendgrid-api-key"),
    (f"curl -H 'x-goog: {GOOGLE_ACCESS}' gs://b", GOOGLE_ACCESS, "google-oauth-token"),
    (f"client_config = {{'web': {{'cs': '{GOOGLE_CLIENT_SECRET}'}}}}", GOOGLE_CLIENT_SECRET,
     "google-oauth-client-secret"),
    (f"refresh with {GOOGLE_REFRESH} when it expires", GOOGLE_REFRESH, "google-refresh-token"),
    (f"DATABRICKS_HOST=https://adb.net\ndatabricks configure {DATABRICKS}", DATABRICKS,
     "databricks-token"),
    (f"doctl auth init -t {DIGITALOCEAN}", DIGITALOCEAN, "digitalocean-token"),
    (f"oauth {DIGITALOCEAN_OAUTH}", DIGITALOCEAN_OAUTH, "digitalocean-token"),
    (f"refresh {DIGITALOCEAN_REFRESH}", DIGITALOCEAN_REFRESH, "digitalocean-token"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acme;"
        f"AccountKey={B64_KEY};EndpointSuffix=core.windows.net",
        B64_KEY,
        "azure-storage-key",
    ),
    (
        "https://acme.blob.core.windows.net/c/f.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2026-04-01T00:00:00Z&sig={AZURE_SAS_SIG}",
        AZURE_SAS_SIG,
        "azure-sas-signature",
    ),
    (
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={AZURE_SHARED_KEY}",
        AZURE_SHARED_KEY,
        "azure-shared-access-key",
    ),
    (f"ClientSecretCredential(tenant, app, '{AZURE_CLIENT_SECRET}')", AZURE_CLIENT_SECRET,
     "azure-client-secret"),
    (f"bot.run('{DISCORD_BOT}')", DISCORD_BOT, "discord-bot-token"),
    (
        f"post to https://discord.com/api/webhooks/1234567890123456789/{DISCORD_WEBHOOK_TOKEN}",
        DISCORD_WEBHOOK_TOKEN,
        "discord-webhook",
    ),
    (f"aliyun configure --access-key-id {ALIBABA}", ALIBABA, "alibaba-access-key-id"),
    (f"Client({TWILIO_ACCOUNT!r}, ...)", TWILIO_ACCOUNT, "twilio-account-sid"),
    (f"twilio api key {TWILIO_KEY}", TWILIO_KEY, "twilio-api-key"),
    (f"requests.post(url, auth=('api', '{MAILGUN}'))", MAILGUN, "mailgun-api-key"),
    (f"X-Shopify-Access-Token {SHOPIFY}", SHOPIFY, "shopify-token"),
    (f"https://api.telegram.org/bot{TELEGRAM}/sendMessage", TELEGRAM, "telegram-bot-token"),
    (f"OpenAI(base_url='https://openrouter.ai/api/v1', api_key={OPENROUTER})", OPENROUTER,
     "openrouter-api-key"),
    (f"Groq(api_key={GROQ})", GROQ, "groq-api-key"),
    (f"replicate with {REPLICATE}", REPLICATE, "replicate-api-token"),
    (f"grok via {XAI}", XAI, "xai-api-key"),
    (f"Perplexity key {PERPLEXITY}", PERPLEXITY, "perplexity-api-key"),
    (f"LANGCHAIN_API_KEY set; tracing with {LANGSMITH}", LANGSMITH, "langsmith-api-key"),
    (f"Pinecone(api_key={PINECONE})", PINECONE, "pinecone-api-key"),
    (f"TavilyClient({TAVILY!r})", TAVILY, "tavily-api-key"),
    (f"alerts to {SLACK_WEBHOOK}", SLACK_WEBHOOK, "slack-webhook"),
    (f"socket mode app token {SLACK_APP}", SLACK_APP, "slack-token"),
    (GCP_SERVICE_ACCOUNT, GCP_KEY_BODY, "private-key"),
    (GCP_SERVICE_ACCOUNT, HEX + "abcd1234", "private-key"),
    # random values after a key word, without a shape of their own (IBM Cloud, Mistral, ...)
    (f"ibmcloud login --apikey {IBM_KEY}", IBM_KEY, "api-key"),
    (f"mistral = Mistral(key={B62})", B62, "key"),
    (f"curl -H 'X-Auth-Token: {B62}' https://x.io", B62, "token"),
    (f"curl -H \"X-API-Key: {B62}\" https://x.io", B62, "key"),
    (f"my access token is {B62}", B62, "token"),
    (f"--client-secret {B62}", B62, "secret"),
    (f'{{"apiKey": "{B62}"}}', B62, "api-key"),
    (f"credentials:\n  key: {B62}\n", B62, "key"),
    (f"the token: {B62}", B62, "token"),
    (f"mysql -u root --password {B62}", B62, "password"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "secret", "kind"), FORMATS, ids=[f"{n}-{f[2]}" for n, f in enumerate(FORMATS)]
)
def test_each_credential_format_is_replaced_by_its_kind(text, secret, kind):
    redacted = redact(text)
    assert secret not in redacted, redacted
    assert f"[REDACTED:{kind}]" in redacted, redacted
    assert redact(redacted) == redacted


def test_each_format_of_the_table_has_a_case():
    from test_redact_idioms import FORMATS as ISSUE_50_FORMATS  # the formats issue 50 added

    tested = {kind for _, _, kind in SECRETS + FORMATS + ISSUE_50_FORMATS}
    assert {f.kind for f in TOKEN_FORMATS} <= tested


def test_prefixes_and_names_around_a_format_are_kept():
    connection = f"AccountName=acme;AccountKey={B64_KEY};EndpointSuffix=core.windows.net"
    assert redact(connection) == (
        "AccountName=acme;AccountKey=[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net"
    )
    assert redact(f"--token {B62} --verbose") == "--token [REDACTED:token] --verbose"


# Notebook prose and code with key words but no secret: ids, hashes, dates, paths, versions.
NOT_SECRETS = [
    "Key insight: revenue grew 15% in Q1 after the 2026-03-12 launch.",
    "key: 2026-03-12T14:32:05Z-7f3a",
    "The checkpoint key 2026-03-12T14:32:05Z-7f3a was recalled; token budget 3000.",
    "cache_key = 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "primary key id 123e4567-e89b-12d3-a456-426614174000 in table orders",
    "sort key: created_at_2026_03_12",
    "key: knowledge/pricing-strategy.md",
    "--key-file /home/dana/.ssh/id_ed25519_github_work",
    "auth: claude-sonnet-4-20250514",
    '{"key": "model_name_v2_final", "token_count": 1234567890123456}',
    "tokenizer: cl100k_base_tokenizer_v2",
    "the key takeaways are pricingStrategyReview2026 and the Q1 report",
    "signature: Dana Smith, Head of Analytics",
    "auth flow uses PKCE; key rotation every 90 days",
    "token key_id_2026_03_12_release_candidate",
    "key = f'{user_id}-{date}'",
    "sig of the Fourier transform at 1200000000000000 Hz",
    "--token-file ~/.config/hipo/token_for_the_nightly_export_job.txt",
    "the API key is in the vault under analytics/prod/stripe",
    "password reset requires 12 characters",
    "secret sauce: DataFrame.groupby(level=0).agg(sum_of_squares)",
    "keyboard shortcut Ctrl-Shift-K2 opens the monkey patch notes",
    "key 20260312143205 stamp, token 0x7fffffffffffffff",
    'MINILM_TOKENIZER_SHA256 = "be59c4a2a1d3b1e0f9c8d7e6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6"',
    "author aB3dE5fG7hJ9kL2mN4pQ6 wrote the keyboard layout tokenizerV2abc123XYZ789",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_key_words_before_ordinary_values_are_left_alone(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    ("value", "random"),
    [
        (B62, True),
        (ALNUM[:16], True),
        ("pricingStrategyReview2026", False),
        ("claude-sonnet-4-20250514", False),
        ("checkpoint2026version3", False),
        ("aaaaaaaaaaaaaaaa1111", False),
    ],
)
def test_randomness_threshold(value, random):
    assert _looks_random(value, "token") is random
    assert shannon_entropy("abab") == 1.0
