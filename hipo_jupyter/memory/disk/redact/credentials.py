"""The credentials that identify themselves by their shape: one table, `TOKEN_FORMATS`.

Each row is a kind (the name `redact` writes in its marker, `[REDACTED:<kind>]`), the needles
that gate it, its pattern and, in a comment, where its issuer documents the format. A new
service's credential is one row here and one case in tests/test_redact.py, which checks that
every kind of the table has one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


def mixed_alnum(token: str) -> bool:
    """Random keys mix digits and letters; words and slugs (`sk-learn-tutorial`) do not."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def mixed_case(token: str) -> bool:
    """Hugging Face tokens are letters of both cases; `hf_checkpointdirectory` is a name."""
    return any(c.isupper() for c in token) and any(c.islower() for c in token[3:])


@dataclass(frozen=True)
class TokenFormat:
    """A credential that identifies itself by its shape. `pattern` matches the credential; when
    it has a group named `secret`, only that group is replaced and the rest (a `key=` prefix,
    a URL's host) is kept. `needles` are lower-case substrings one of which any match contains,
    so the pattern runs only on text that holds one (empty: the pattern is its own cheap filter,
    see `_SHAPES_RE`). `check` vets a match the pattern cannot decide alone."""

    kind: str
    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    starts_word: bool = True  # False: may follow letters (`/bot<telegram token>/`)


def _shape(regex: str) -> re.Pattern[str]:
    """`regex` as a whole token: nothing of a word may come before or follow. Without the
    lookbehind, a run of one prefix (`sk-sk-sk-...`) was scanned again from each prefix:
    quadratic, 1 MB took minutes. The lookbehind goes after the literal prefix, where the regex
    engine still searches for that prefix (in front of it, each pattern cost 12 ms a MB, not
    1); a pattern without a literal prefix gets it in front. Each row runs only on text
    holding its needles."""
    prefix = _literal_prefix(regex)
    if prefix:
        rest = regex[len(prefix) :]
        return re.compile(f"{prefix}(?<![\\w-]{prefix})(?:{rest})(?![\\w])")
    branches = _LITERAL_BRANCHES_RE.match(regex)
    if branches:  # `(?:hf_|api_org_)...`: the lookbehind after each branch's literal
        guarded = "|".join(f"{b}(?<![\\w-]{b})" for b in branches.group(1).split("|"))
        return re.compile(f"(?:{guarded})(?:{regex[branches.end() :]})(?![\\w])")
    return re.compile(r"(?<![\w-])(?:" + regex + r")(?![\w])")


_LITERAL_BRANCHES_RE = re.compile(r"\(\?:([A-Za-z0-9_-]+(?:\|[A-Za-z0-9_-]+)+)\)(?![*+?{])")


def _literal_prefix(regex: str) -> str:
    """The letters, digits, `_` and `-` `regex` starts with (none a quantifier applies to),
    when nothing after them is a top-level alternative that would not start with them."""
    prefix = re.match(r"[A-Za-z0-9_-]*", regex).group()
    if prefix and regex[len(prefix) : len(prefix) + 1] in ("*", "+", "?", "{"):
        prefix = prefix[:-1]
    depth, escaped, in_class = 0, False, False
    for char in regex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return ""
    return prefix


def _fixed_shape(regex: str) -> re.Pattern[str]:
    """A shape of bounded length: each start costs at most that length, so no lookbehind is
    needed (`_format_rule` checks the character before) and the literal-prefix search stays."""
    return re.compile(regex + r"(?![\w])")


# Each format as its issuer documents it (the comment says where), matched with its own prefix
# and length so that prose, slugs and identifiers never match. Order matters where one prefix
# begins another (sk-ant- and sk-or- before sk-).
TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    # Anthropic API keys: `sk-ant-api03-` (admin: `sk-ant-admin01-`) + ~95 url-safe characters.
    TokenFormat("anthropic-api-key", ("sk-ant-",), _shape(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    # OpenRouter: `sk-or-v1-` + 64 hex (openrouter.ai/docs, API keys).
    TokenFormat("openrouter-api-key", ("sk-or-",), _shape(r"sk-or-(?:v\d+-)?[A-Za-z0-9]{32,}")),
    # OpenAI: `sk-` + 48 (legacy, with `T3BlbkFJ` inside), `sk-proj-`, `sk-svcacct-`,
    # `sk-admin-` + ~150 url-safe characters. A slug `sk-learn-tutorial` has no digit: kept.
    TokenFormat(
        "openai-api-key",
        ("sk-",),
        _shape(r"sk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        mixed_alnum,
    ),
    # xAI (Grok): `xai-` + 80 alphanumerics (console.x.ai).
    TokenFormat("xai-api-key", ("xai-",), _shape(r"xai-[A-Za-z0-9]{70,}")),
    # Groq: `gsk_` + 52 alphanumerics (console.groq.com/keys).
    TokenFormat("groq-api-key", ("gsk_",), _shape(r"gsk_[A-Za-z0-9]{48,}")),
    # Replicate: `r8_` + 37 alphanumerics (replicate.com/account/api-tokens).
    TokenFormat("replicate-api-token", ("r8_",), _fixed_shape(r"r8_[A-Za-z0-9]{37}")),
    # Perplexity: `pplx-` + 48 alphanumerics.
    TokenFormat("perplexity-api-key", ("pplx-",), _shape(r"pplx-[A-Za-z0-9]{40,}")),
    # LangSmith: `lsv2_pt_` (personal) or `lsv2_sk_` (service) + 32 hex + `_` + 10 hex.
    TokenFormat(
        "langsmith-api-key", ("lsv2_",), _fixed_shape(r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}")
    ),
    # Pinecone: `pcsk_` + id + `_` + secret (pinecone.io, API keys since 2024).
    TokenFormat("pinecone-api-key", ("pcsk_",), _shape(r"pcsk_[A-Za-z0-9]{5,}_[A-Za-z0-9]{30,}")),
    # Tavily: `tvly-` (+ `dev-`/`prod-`) + 32 alphanumerics.
    TokenFormat("tavily-api-key", ("tvly-",), _shape(r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{30,}")),
    # Hugging Face user access tokens: `hf_` + 34 letters; organization API tokens `api_org_` + 34
    # (huggingface.co/docs/hub/security-tokens).
    TokenFormat(
        "huggingface-token",
        ("hf_", "api_org_"),
        _shape(r"(?:hf_|api_org_)[A-Za-z0-9]{30,}"),
        mixed_case,
    ),
    # Stripe: secret `sk_`, restricted `rk_`, publishable `pk_` keys, `_live_` or `_test_` + 24-99
    # alphanumerics; webhook signing secrets `whsec_` + 32+ (docs.stripe.com/keys).
    TokenFormat(
        "stripe-key", ("_live_", "_test_"), _shape(r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")
    ),
    TokenFormat("stripe-webhook-secret", ("whsec_",), _shape(r"whsec_[A-Za-z0-9+/=]{24,}")),
    # GitHub: `ghp_` (classic), `gho_` (OAuth), `ghu_`/`ghs_` (app), `ghr_` (refresh) + 36; fine-
    # grained `github_pat_` + 82 (docs.github.com, "About authentication to GitHub").
    TokenFormat(
        "github-token",
        ("gh", "github_pat_"),
        _shape(r"g(?:h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{22,})"),
    ),
    # GitLab (docs.gitlab.com, "Token prefixes"): personal `glpat-`, deploy `gldt-`, runner
    # `glrt-`/`glrtr-`, pipeline trigger `glptt-`, CI job `glcbt-`, OAuth app secret `gloas-`,
    # service account `glsoat-`, feature flags `glffct-`, incoming mail `glimt-`, agent
    # `glagent-`, feed `glft-`, SCIM `glsoat-`, + 20 or more url-safe characters (routable
    # tokens add `.01.` and more); runner registration `GR1348941` + 20.
    TokenFormat(
        "gitlab-token",
        ("gl",),
        _shape(
            r"gl(?:pat|dt|rtr?|ptt|cbt|oas|soat|ffct|imt|agent|ft|cd|dt)-[A-Za-z0-9_-]{20,}+"
            r"(?:\.[A-Za-z0-9_.-]{1,64}+)?"
        ),
    ),
    TokenFormat("gitlab-token", ("gr1348941",), _shape(r"GR1348941[A-Za-z0-9_-]{20,}")),
    # PyPI API tokens: `pypi-` + a macaroon whose base64 starts `AgEIcHlwaS5vcmc` ("pypi.org"),
    # TestPyPI's `AgENdGVzdC5weXBpLm9yZw` (pypi.org/help/#apitoken).
    TokenFormat(
        "pypi-token",
        ("pypi-ag",),
        _shape(r"pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,}"),
    ),
    # npm access tokens: `npm_` + 36 alphanumerics (docs.npmjs.com, "About access tokens").
    TokenFormat("npm-token", ("npm_",), _fixed_shape(r"npm_[A-Za-z0-9]{36}")),
    # SendGrid API keys: `SG.` + 22 + `.` + 43 url-safe base64 (docs.sendgrid.com, API keys).
    TokenFormat(
        "sendgrid-api-key",
        ("sg.",),
        _fixed_shape(r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"),
    ),
    # Mailgun: private API keys `key-` + 32 hex (legacy) or 32 hex `-` 8 hex `-` 8 hex.
    TokenFormat("mailgun-api-key", ("key-",), _fixed_shape(r"key-[a-f0-9]{32}")),
    # Google: API keys `AIza` + 35; OAuth access tokens `ya29.` + 20-2000 url-safe; OAuth client
    # secrets `GOCSPX-` + 28; refresh tokens `1//0` + 40 or more (developers.google.com/identity).
    TokenFormat("google-api-key", ("aiza",), _fixed_shape(r"AIza[0-9A-Za-z_-]{35}")),
    TokenFormat("google-oauth-token", ("ya29.",), _shape(r"ya29\.[0-9A-Za-z_-]{20,}")),
    TokenFormat("google-oauth-client-secret", ("gocspx-",), _shape(r"GOCSPX-[0-9A-Za-z_-]{24,}")),
    TokenFormat(
        "google-refresh-token",
        ("1//0",),
        re.compile(r"1//0(?<![\w/]1//0)[0-9A-Za-z_-]{30,}(?![\w])"),
    ),
    # Databricks personal access tokens: `dapi` + 32 hex, optionally `-` + digit.
    TokenFormat(
        "databricks-token", ("dapi",), _fixed_shape(r"dapi[a-f0-9]{32}(?:-\d)?"), mixed_alnum
    ),
    # DigitalOcean: personal `dop_v1_`, OAuth `doo_v1_`, refresh `dor_v1_` + 64 hex.
    TokenFormat("digitalocean-token", ("_v1_",), _fixed_shape(r"do[opr]_v1_[a-f0-9]{64}")),
    # Shopify: admin `shpat_`, custom app `shpca_`, private app `shppa_`, shared secret `shpss_`
    # + 32 hex (shopify.dev, access tokens).
    TokenFormat("shopify-token", ("shp",), _fixed_shape(r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
    # Alibaba Cloud AccessKey ids: `LTAI` + 12-20 alphanumerics.
    TokenFormat(
        "alibaba-access-key-id", ("ltai",), _fixed_shape(r"LTAI[A-Za-z0-9]{12,20}"), mixed_alnum
    ),
    # Twilio: API key SIDs `SK` and account SIDs `AC` + 32 hex (twilio.com/docs/glossary).
    TokenFormat("twilio-api-key", (), _fixed_shape(r"SK[0-9a-f]{32}"), mixed_alnum),
    TokenFormat("twilio-account-sid", (), _fixed_shape(r"AC[0-9a-f]{32}"), mixed_alnum),
    # Slack: bot `xoxb-`, user `xoxp-`, app-level `xapp-`, config `xoxe-` tokens; incoming
    # webhooks under hooks.slack.com/services/ (api.slack.com/authentication/token-types).
    TokenFormat(
        "slack-token",
        ("xox", "xapp-"),
        _shape(r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}"),
        mixed_alnum,
    ),
    TokenFormat(
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"
        ),
    ),
    # Discord: bot tokens are base64(user id) `.` 6 (timestamp) `.` 27-38 (HMAC); the id starts
    # M, N or O; webhooks are discord.com/api/webhooks/<id>/<68-char token>.
    TokenFormat(
        "discord-bot-token",
        (),
        _fixed_shape(r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"),
        mixed_alnum,
    ),
    TokenFormat(
        "discord-webhook",
        ("discord",),
        re.compile(
            r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/"
            r"[A-Za-z0-9_-]{30,}"
        ),
    ),
    # Telegram bot tokens: `<bot id>:` + 35 url-safe characters starting `AA`
    # (core.telegram.org/bots/api, "Authorizing your bot").
    TokenFormat(
        "telegram-bot-token",
        (":aa",),
        re.compile(r"(?<!\d)\d{6,12}:AA[A-Za-z0-9_-]{33}(?![\w-])"),
        starts_word=False,
    ),
    # Azure: storage account keys (`AccountKey=` + 86 base64 + `==`), Service Bus / Event Hubs
    # `SharedAccessKey=` + 44 base64, SAS signatures (`sig=` in a SAS URL or token, base64 often
    # percent-encoded), Entra ID client secrets (3 characters, a digit, `Q~`, 31-34 more).
    TokenFormat(
        "azure-storage-key",
        ("accountkey",),
        re.compile(r"(?i:AccountKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{40,}={0,2})"),
    ),
    TokenFormat(
        "azure-shared-access-key",
        ("sharedaccesskey",),
        re.compile(r"(?i:SharedAccessKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{30,}={0,2})"),
    ),
    TokenFormat(
        "azure-sas-signature",
        ("sig=",),
        re.compile(r"sig=(?P<secret>(?:[A-Za-z0-9+/]|%2[BbFf]|%3[Dd]){30,}(?:=|%3[Dd]){0,2})"),
    ),
    TokenFormat(
        "azure-client-secret",
        ("q~",),
        re.compile(r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])"),
    ),
    # AWS access key ids: `AKIA` (long-term) or `ASIA` (temporary) + 16 upper-case alphanumerics.
    TokenFormat(
        "aws-access-key-id",
        ("akia", "asia"),
        _fixed_shape(r"A(?:KIA|SIA)[A-Z0-9]{16}"),
    ),
    # HashiCorp Vault: service `hvs.`, batch `hvb.`, recovery `hvr.` + 24 or more base62
    # (developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes).
    TokenFormat("vault-token", ("hvs.", "hvb.", "hvr."), _shape(r"hv[sbr]\.[A-Za-z0-9_-]{24,}")),
    # Notion internal integration secrets: `ntn_` (since 2024) or `secret_` + 43 or more base62
    # (developers.notion.com/docs/authorization).
    TokenFormat(
        "notion-token",
        ("ntn_", "secret_"),
        _shape(r"(?:ntn_|secret_)[A-Za-z0-9]{40,50}"),
        mixed_alnum,
    ),
    # Sentry: organization auth tokens `sntrys_` + base64, user auth tokens `sntryu_` + 64 hex
    # (docs.sentry.io/account/auth-tokens/); a DSN's key (and legacy secret) before `@` the
    # ingest host (docs.sentry.io/concepts/key-terms/dsn-explainer/).
    TokenFormat(
        "sentry-token",
        ("sntrys_", "sntryu_"),
        _shape(r"sntry(?:s_[A-Za-z0-9+/=_-]{40,}|u_[a-f0-9]{64})"),
    ),
    TokenFormat(
        "sentry-dsn-key",
        ("sentry",),
        re.compile(
            r"http(?<![\w-]http)s?://(?P<secret>[a-f0-9]{32}(?::[a-f0-9]{32})?)"
            r"@[A-Za-z0-9.-]{0,64}sentry"
        ),
        starts_word=False,
    ),
    # Grafana: Cloud access policy tokens `glc_` + base64 JSON, service account tokens `glsa_`
    # + 32 alphanumerics `_` 8 hex (grafana.com/docs/grafana/latest/administration/
    # service-accounts/, grafana.com/docs/grafana-cloud/security-and-account-management/
    # authentication-and-permissions/access-policies/).
    TokenFormat(
        "grafana-token",
        ("glc_", "glsa_"),
        _shape(r"gl(?:c_[A-Za-z0-9+/=_-]{32,}|sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    ),
    # Supabase: personal access tokens `sbp_` + 40 hex, secret API keys `sb_secret_` + 20 or
    # more (supabase.com/docs/guides/api/api-keys).
    TokenFormat(
        "supabase-key",
        ("sbp_", "sb_secret_"),
        _shape(r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})"),
    ),
    # age identities: `AGE-SECRET-KEY-1` + 58 upper-case Bech32 characters
    # (age-encryption.org/v1, "X25519 recipient type").
    TokenFormat(
        "age-secret-key",
        ("age-secret-key-1",),
        _fixed_shape(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ),
    # Linear personal API keys: `lin_api_` + 40 alphanumerics
    # (developers.linear.app/docs/graphql/working-with-the-graphql-api).
    TokenFormat("linear-api-key", ("lin_api_",), _shape(r"lin_api_[A-Za-z0-9]{40}")),
    # Doppler: personal `dp.pt.`, service `dp.st.`, CLI `dp.ct.`, SCIM `dp.scim.`, audit
    # `dp.audit.` + 40 or more alphanumerics (docs.doppler.com/reference/auth-token-formats).
    TokenFormat(
        "doppler-token",
        ("dp.",),
        _shape(r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}"),
    ),
    # Postman API keys: `PMAK-` + 24 hex `-` 34 hex (learning.postman.com/docs/developer/
    # postman-api/authentication/).
    TokenFormat("postman-api-key", ("pmak-",), _fixed_shape(r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}")),
    # Figma personal access tokens: `figd_` + 40 or more url-safe characters
    # (figma.com/developers/api#access-tokens).
    TokenFormat("figma-token", ("figd_",), _shape(r"figd_[A-Za-z0-9_-]{40,}")),
    # 1Password service account tokens: `ops_` + base64 JSON (`eyJ`)
    # (developer.1password.com/docs/service-accounts/).
    TokenFormat("1password-service-token", ("ops_eyj",), _shape(r"ops_eyJ[A-Za-z0-9+/=_-]{40,}")),
    # Atlassian API tokens: `ATATT3` + 180 or more url-safe characters
    # (support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/).
    TokenFormat("atlassian-api-token", ("atatt3",), _shape(r"ATATT3[A-Za-z0-9_=-]{150,}")),
    # JSON Web Tokens: three base64url parts, the first two JSON objects (`eyJ` is `{"`).
    TokenFormat(
        "jwt",
        ("eyj",),
        _shape(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"),
    ),
)
