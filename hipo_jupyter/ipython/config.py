"""`Hipo`: the extension's settings as traitlets, so IPython's own config reaches them.

`c.Hipo.root = "~/notes"` in ipython_config.py, or `%config Hipo.recall_k = 10` in a cell.
The defaults are read from the engine's `MemoryConfig`, so the two never drift apart; the
session turns these traits back into a `MemoryConfig` whenever it opens the memory.
"""

from __future__ import annotations

import dataclasses
import math

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, default, validate
from traitlets.config import Config, Configurable

from hipo_jupyter.memory import (
    DEFAULT_BUDGET,
    DEFAULT_RECALL_MODE,
    MIN_BUDGET,
    RECALL_MODES,
    MemoryConfig,
    resolve_team_url,
)

_DEFAULTS = MemoryConfig()
# The real-number settings that refuse NaN and the infinities (`Hipo._finite`).
FINITE = (
    "similarity_weight",
    "keyword_weight",
    "vector_weight",
    "topics_weight",
    "recency_weight",
    "rrf_k",
    "min_similarity",
    "sparql_timeout",
)

SEARCH_BACKENDS = ("fts5", "whoosh")
SUMMARIZERS = ("auto", "extractive", "claude")

# The same values as hipo_jupyter.llm's defaults; repeated here so that reading the settings
# does not import the anthropic SDK. tests/test_llm_request.py checks that they agree.
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_CONTEXT_WINDOW = 200_000
# The SDKs Layer 1 can go into (hipo_jupyter.llm.CLIENTS; tests/test_openai_clients.py checks).
INJECT_CLIENTS = ("anthropic", "openai", "litellm")


class Hipo(Configurable):
    """Settings of the hipo extension (memory root, compaction thresholds, budgets, recall)."""

    root = Unicode(
        None,
        allow_none=True,
        help=(
            "Folder that holds the memory (memory/, SCRATCHPAD.md, ...). Unset: the HIPO_ROOT "
            "environment variable, else the notebook's folder, else the working directory."
        ),
    ).tag(config=True)

    daily_threshold = Int(
        _DEFAULTS.daily_threshold,
        min=1,
        help="Lines of a day's raw log above which its daily node is summarized, not copied.",
    ).tag(config=True)

    weekly_threshold = Int(
        _DEFAULTS.weekly_threshold,
        min=1,
        help="Lines of a week's daily nodes above which the weekly node is summarized.",
    ).tag(config=True)

    monthly_threshold = Int(
        _DEFAULTS.monthly_threshold,
        min=1,
        help="Lines of a month's weekly nodes above which the monthly node is summarized.",
    ).tag(config=True)

    grace_days = Int(
        _DEFAULTS.grace_days,
        min=0,
        help="Days after a week or month ends before its node is fixed (never rewritten).",
    ).tag(config=True)

    root_budget = Int(
        _DEFAULTS.root_budget,
        min=1,
        help="Token budget ROOT.md is compacted to (Historical Summary shrinks first).",
    ).tag(config=True)

    layer1_budgets = Dict(
        value_trait=Int(min=0),
        default_value=dict(_DEFAULTS.layer1_budgets),
        help=(
            "Token budget of each Layer 1 part in the prompt: ROOT, SCRATCHPAD, WORKING, "
            "TASK-QUEUE. Parts left out keep their default; a part over budget is cut."
        ),
    ).tag(config=True)

    recency_half_life_days = Float(
        _DEFAULTS.recency_half_life_days,
        help="Recall ranking: a memory this many days old counts half as much as a fresh one.",
    ).tag(config=True)

    search_backend = Enum(
        SEARCH_BACKENDS,
        default_value=_DEFAULTS.search_backend,
        help="Search index: 'fts5' (SQLite, built in) or 'whoosh' (needs the [whoosh] extra).",
    ).tag(config=True)

    recall_k = Int(
        5,
        min=1,
        help="How many hits %recall shows when no -k is given.",
    ).tag(config=True)

    recall_budget = Int(
        DEFAULT_BUDGET,
        min=MIN_BUDGET,
        help="Tokens of recalled memory %%ask sends (Memory.context's budget).",
    ).tag(config=True)

    auto_recall = Bool(
        True,
        help=(
            "%%ask recalls memory with the cell's own question (Memory.context, fenced as "
            "quoted data, within Hipo.recall_budget): what memory is for is often what the "
            "question does not name. --recall QUERY searches for QUERY instead; --no-recall "
            "(or False here) sends none."
        ),
    ).tag(config=True)

    auto_recall_sdk = Bool(
        False,
        help=(
            "Recall memory for the last user message of every SDK call made in the kernel "
            "(Hipo.inject_clients), as %%ask does (fenced, after Layer 1). Off by default: "
            "those calls are the user's own code."
        ),
    ).tag(config=True)

    # --- semantic recall (the model comes with hipo-jupyter) ------------------------------
    semantic = Bool(
        None,
        allow_none=True,
        help=(
            "Semantic recall: vectors of every checkpoint and node (all-MiniLM-L6-v2, offline), "
            "fused with keyword search. None: on when the model is installed (it comes with "
            "hipo-jupyter); False: off; True: on, or say why not."
        ),
    ).tag(config=True)

    embedding_model = Unicode(
        "",
        help=(
            "Another ONNX sentence-embedding model for semantic recall: a model.onnx, or a "
            "downloaded model's folder, with its tokenizer.json; its pooling (mean or cls), "
            "normalisation and query/passage prefixes in a hipo-embedding.json beside it "
            "(default: mean, normalised, none). Empty: all-MiniLM-L6-v2, installed with hipo. "
            "A new model re-embeds the memory once."
        ),
    ).tag(config=True)

    embedding_tokenizer = Unicode(
        "",
        help="The tokenizer.json of Hipo.embedding_model, when it is not beside the model.",
    ).tag(config=True)

    recall_mode = Enum(
        RECALL_MODES,
        default_value=DEFAULT_RECALL_MODE,
        help=(
            "How %recall (and recall for %%ask) ranks: 'keyword', 'semantic' (vectors alone), "
            "'hybrid' (both fused), or 'auto': hybrid when semantic recall is on, else keyword."
        ),
    ).tag(config=True)

    fusion = Enum(
        ("score", "rrf"),
        default_value=_DEFAULTS.fusion,
        help=(
            "How hybrid recall combines keywords and meaning: 'score' adds each hit's "
            "similarity (times similarity_weight) to its keyword relevance, so topics, dates, "
            "names and neighbours apply to both (measured best on LoCoMo); 'rrf' fuses the two "
            "rankings by reciprocal rank fusion, with the weights marked (rrf)."
        ),
    ).tag(config=True)

    similarity_weight = Float(
        _DEFAULTS.similarity_weight,
        min=0.0,
        help=(
            "Hybrid recall (score): the share of a hit's similarity (over the best one) added "
            "to its keyword relevance (over the best one); 0 turns meaning off."
        ),
    ).tag(config=True)

    keyword_weight = Float(
        _DEFAULTS.keyword_weight,
        min=0.0,
        help="Hybrid recall (rrf): weight of the keyword ranking (BM25, tree, topics, recency).",
    ).tag(config=True)

    vector_weight = Float(
        _DEFAULTS.vector_weight,
        min=0.0,
        help="Hybrid recall (rrf): weight of the vector (meaning) ranking; 0 turns it off.",
    ).tag(config=True)

    topics_weight = Float(
        _DEFAULTS.topics_weight,
        min=0.0,
        help="Hybrid recall (rrf): weight of the hits carrying a Topics Index entry the query "
        "names.",
    ).tag(config=True)

    recency_weight = Float(
        _DEFAULTS.recency_weight,
        min=0.0,
        help="Hybrid recall (rrf): weight of the candidates ranked newest first (0: recency "
        "only through the keyword ranking).",
    ).tag(config=True)

    rrf_k = Float(
        _DEFAULTS.rrf_k,
        min=0.0,
        help="Hybrid recall (rrf): reciprocal rank fusion's k (higher: lower ranks count more).",
    ).tag(config=True)

    min_similarity = Float(
        _DEFAULTS.min_similarity,
        min=-1.0,
        max=1.0,
        help="Hybrid recall: cosine under which a vector hit is not a candidate.",
    ).tag(config=True)

    sparql_timeout = Float(
        _DEFAULTS.sparql_timeout,
        min=0.1,
        help="%%sparql: seconds a query may run before it is stopped (one line of error).",
    ).tag(config=True)

    sparql_max_rows = Int(
        _DEFAULTS.sparql_max_rows,
        min=1,
        help="%%sparql: the most rows a query may give; more is one line of error.",
    ).tag(config=True)

    # --- team memory (issue 16) -------------------------------------------------------------
    team_url = Unicode(
        help=(
            "A PostgreSQL URL of the team's memory (pip install 'hipo-jupyter[team]'): raw "
            "checkpoints are sent there in the background after %%remember, and "
            "`%recall --team` searches it. Empty (default: $HIPO_TEAM): nothing leaves."
        ),
    ).tag(config=True)

    @default("team_url")
    def _team_url_from_env(self) -> str:
        return resolve_team_url()

    @classmethod
    def class_get_trait_help(cls, trait, inst=None, helptext=None):  # type: ignore[no-untyped-def]
        """`%config Hipo` shows each setting's current value: the team URL's without its
        password (team.url.mask_url), never as typed (issue 34)."""
        text = super().class_get_trait_help(trait, inst, helptext)
        if trait.name == "team_url" and inst is not None and inst.team_url:
            from hipo_jupyter.team.url import mask_url

            shown = f"Current: {mask_url(inst.team_url)!r}"
            lines = [
                line[: line.index("Current:")] + shown if "Current:" in line else line
                for line in text.splitlines()
            ]
            text = "\n".join(line for line in lines if inst.team_url not in line)
        return text

    team_exclude = List(
        Unicode(),
        default_value=list(_DEFAULTS.team_exclude),
        help=(
            "Checkpoint types (user, project, ...) or tags (#private) kept out of the team "
            "database. Default: the 'user' type (notes about you) stays local."
        ),
    ).tag(config=True)

    team_author = Unicode(
        _DEFAULTS.team_author,
        help="The author name the team sees. Empty: $HIPO_AUTHOR, $JUPYTERHUB_USER, the login.",
    ).tag(config=True)

    # --- Claude calls -------------------------------------------------------------------
    model = Unicode(
        DEFAULT_MODEL,
        help="Claude model %%ask uses (and the Claude summarizer); %%ask --model overrides it.",
    ).tag(config=True)

    max_tokens = Int(
        DEFAULT_MAX_TOKENS,
        min=1,
        help="Longest reply %%ask asks for, in tokens; %%ask --max-tokens overrides it.",
    ).tag(config=True)

    context_window = Int(
        DEFAULT_CONTEXT_WINDOW,
        min=1000,
        help=(
            "The model's context window in tokens. A %%ask conversation whose live tokens pass "
            "half of it has its older turns folded into the summary."
        ),
    ).tag(config=True)

    ask_tools = List(
        Unicode(),
        default_value=[],
        help=(
            "Tools %%ask hands Claude on every call unless --tools says otherwise: 'memory' "
            "(Claude's memory tool, kept in this notebook's memory tree)."
        ),
    ).tag(config=True)

    inject = Bool(
        True,
        help=(
            "Prepend Layer 1 to the system prompt of every LLM SDK call made in the kernel "
            "(the SDKs of Hipo.inject_clients; sync, async, streamed). %hipo inject on|off."
        ),
    ).tag(config=True)

    inject_clients = List(
        Enum(INJECT_CLIENTS),
        default_value=list(INJECT_CLIENTS),
        help=(
            "Which SDKs' calls in the kernel get Layer 1 and the write-back: 'anthropic' "
            "(messages), 'openai' (chat.completions and responses, so also Ollama, vLLM and "
            "llama.cpp servers), 'litellm' (litellm.completion, acompletion; a `from litellm "
            "import completion` made before %load_ext keeps the bare function). An SDK is "
            "patched only once the notebook imports it; calls through one left out pass "
            "untouched (%%ask's own calls keep Layer 1 and their write-back either way)."
        ),
    ).tag(config=True)

    auto_checkpoint = Bool(
        True,
        help=(
            "Write a checkpoint at the end of each cell that made LLM calls and wrote none "
            "itself, and one after every 20 calls without a checkpoint."
        ),
    ).tag(config=True)

    summarizer = Enum(
        SUMMARIZERS,
        default_value="auto",
        help=(
            "Who writes summaries (compaction nodes, the %%ask conversation summary): "
            "'claude', 'extractive' (offline), or 'auto' (Claude when ANTHROPIC_API_KEY is set). "
            "A failed Claude summary falls back to the extractive one."
        ),
    ).tag(config=True)

    max_retries = Int(
        2,
        min=0,
        help="Retries of a failed Claude call (429, 529, 5xx, timeouts) before %%ask gives up.",
    ).tag(config=True)

    timeout = Float(
        600.0,
        help="Seconds a Claude call made by hipo may take before it times out.",
    ).tag(config=True)

    @validate("timeout")
    def _positive_timeout(self, proposal):
        if not math.isfinite(proposal["value"]) or proposal["value"] <= 0:
            raise TraitError("timeout must be a finite number above 0 seconds")
        return proposal["value"]

    @validate(*FINITE)
    def _finite(self, proposal):
        """NaN passes a Float's min and max (every comparison is false) and makes every score
        NaN; an infinity means nothing as a weight or a half-life."""
        if not math.isfinite(proposal["value"]):
            raise TraitError(
                f"{proposal['trait'].name} must be a finite number, not {proposal['value']}"
            )
        return proposal["value"]

    @validate("recency_half_life_days")
    def _positive_half_life(self, proposal):
        if not math.isfinite(proposal["value"]) or proposal["value"] <= 0:
            raise TraitError("recency_half_life_days must be above 0")
        return proposal["value"]

    @validate("layer1_budgets")
    def _known_parts(self, proposal):
        unknown = sorted(set(proposal["value"]) - set(_DEFAULTS.layer1_budgets))
        if unknown:
            known = ", ".join(_DEFAULTS.layer1_budgets)
            raise TraitError(f"unknown Layer 1 part(s) {', '.join(unknown)}: use {known}")
        return proposal["value"]

    def memory_config(self) -> MemoryConfig:
        """The engine's view of these settings (a fresh object: the engine may keep it): every
        `MemoryConfig` field from the trait of the same name (tests/test_config_traits.py
        checks that each field has one, with the same default)."""
        names = [field.name for field in dataclasses.fields(MemoryConfig)]
        values = {name: getattr(self, name) for name in names}
        values["layer1_budgets"] = {**_DEFAULTS.layer1_budgets, **self.layer1_budgets}
        values["team_exclude"] = tuple(self.team_exclude)
        return MemoryConfig(**values)


def load_settings(config: Config) -> tuple[Hipo, list[str]]:
    """`Hipo` from IPython's config, and the settings that had to be left at their default.

    `%config` merges a value into the shell's config even when our trait rejects it, so a typo
    would otherwise stop every later `%reload_ext hipo` (and a bad ipython_config.py every
    load). A bad value is reported instead, and the good ones still apply.
    """
    try:
        return Hipo(config=config), []
    except TraitError:
        pass
    settings = Hipo()
    problems = []
    section = config["Hipo"] if "Hipo" in config else Config()
    for name, value in section.items():
        try:
            settings.update_config(Config({"Hipo": {name: value}}))
        except TraitError as error:
            problems.append(f"Hipo.{name} left at its default: {error}")
    return settings, problems
