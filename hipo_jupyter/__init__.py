"""hipo-jupyter: persistent agent memory for notebooks, after the Hipocampus protocol.

Where each job lives (arrows point down only: every front end uses the engine, the engine uses
none of them; one `Memory` object is the way in):

- `memory/`, the engine (no IPython, Jupyter, anthropic, mcp or psycopg):
  `memory.py` the `Memory` facade; `requests.py` what a request may be (the one parser of
  dates, counts, titles and text, `CheckpointDraft`, `RecallQuery`, the limits);
  `store.py` the files on disk, `files.py` bounded reads of regular files, `appends.py`
  all-or-nothing raw appends and their proven repair; `checkpoint.py` the checkpoint format;
  `tree.py` the compaction chain, `periods.py` its calendar, `nodes.py` node frontmatter,
  `summarize.py` the extractive summaries, `root.py` ROOT.md, `topic_index.py` the Topics
  Index as data, `topics.py` topic and keyword extraction; `indexing.py` the text index and
  vectors kept in step with the files, `search.py` / `search_whoosh.py` the two text
  backends, `recall.py` ranking and the `Hit` / `RecallResult` results, `semantic.py`,
  `embed.py`, `vectors.py`, `fusion.py` the `[semantic]` extra, `context_pack.py` the
  context a model is sent (`Memory.context`), `fence.py` quoting memory as data;
  `layer1.py` Layer 1 and its budget, `tokens.py` token counts; `importers.py` past
  conversations; `check.py` the protocol rules; `notes.py` what an agent may write;
  `rules.py`, `provenance.py`, `catalog.py`, `frame.py`, `graph.py`, `transcript_check.py`
  structured memory; `redact.py` secrets; `errors.py` the errors front ends show as one line.
- front ends: `ipython/` (`%load_ext hipo`, the magics, `%%ask`, write-back, display),
  `cli.py` and `cli_views.py` (the `hipo` command), `server/` (the REST API of the sidebar),
  `widgets.py`, `mcp.py` (`hipo mcp`), `memory_tool.py` and `tool_run.py` (Claude's memory
  tool), `llm/` (Claude calls: prompt blocks, injection into the SDK, the client, the Claude
  summarizer), `caching.py` (where prompt-cache breakpoints go), `context.py` (a long
  `%%ask` conversation's zones), `demo.py`.
- backends loaded only when asked for: `team/` (the team's memory on PostgreSQL).
"""

from .memory import Memory, MemoryConfig

__version__ = "0.1.0"

__all__ = ["Memory", "MemoryConfig", "__version__"]
