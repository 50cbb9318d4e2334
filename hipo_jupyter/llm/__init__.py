"""LLM calls with memory: the prompt blocks, Layer 1 injection, and the Claude summarizers.

One job a module: `prompt.py` (the blocks and %%ask's request), `injection.py` (Layer 1 in the
user's own SDK calls; `sdk_hooks.py` patches an SDK when it arrives), `messages_shape.py` (where
Layer 1 goes in the anthropic SDK's requests), `openai_shapes.py` (in OpenAI-format requests:
openai's chat.completions and responses, litellm's completion), `client.py` (the client and its
errors as one line), `replies.py` (a streamed reply taken for what it is: whole, incomplete or
malformed), `summarizer.py` (Claude writing summaries), `layer1_pin.py` (Layer 1 split
so the prompt cache survives checkpoints written mid-session), `caching.py` (where prompt-cache
breakpoints go), `conversation.py` (a long `%%ask` conversation's zones: anchor, summary,
active turns), `tool_run.py` (a `%%ask` with Claude's memory tool, `hipo_jupyter.memory_tool`),
`persona.py` (the jupyter-ai chat persona with the memory, loaded by jupyter-ai's persona
manager from the `jupyter_ai.personas` entry point; never imported by this package).

Everything that knows the LLM SDKs (anthropic, openai, litellm) lives here; the engine
(`hipo_jupyter.memory`) never imports them and the IPython front end only calls these functions.
May import: the engine's faces, `memory_tool` (for `tool_run.py`) and the LLM SDKs, late;
jupyter-ai's packages in `persona.py` only.
Not `ipython/`, `cli/`, `mcp/`, `server/` or `team/`.

The prompt of a call made with hipo loaded, in order, stable parts first:
1. Layer 1 as one system block. It opens with `LAYER1_OPEN`: that marker is how injection
   knows a call already carries it and leaves the call alone.
2. The caller's own system text, or (%%ask, once turns were folded) the conversation's anchor
   and rolling summary.
3. (%%ask) the context-status note: live tokens against the window, and what recall took.
4. Layer 1's lines written since block 1 was first sent (`layer1_pin`), in a fence of their own.
5. Recalled memory (%%ask, for the question itself by default; SDK calls when
   `Hipo.auto_recall_sdk` is on), fenced as quoted data and escaped so stored text cannot close
   the fence (`fence_quoted`).
Prompt-cache breakpoints end 1 and 2 where their prefix reaches the model's minimum cacheable
length, within the API's four (`caching.py`); 3 to 5 change from call to call, after
them.

Injection patches the SDKs' request methods at class level (anthropic's `Messages`,
`AsyncMessages` and their beta twins: create, stream, parse, count_tokens; openai's chat
`Completions` and `Responses`, sync and async: create, parse, stream) and litellm's
`completion` / `acompletion`, so every client in the kernel, made before or after loading, gets
Layer 1 first in its system prompt, with the user's own system text kept after it (for OpenAI
formats the same fenced text, as the system message or `instructions`: `openai_shapes`). The
wrappers never mutate the caller's arguments, inject at most once per call (a call that already
carries the block, or a nested call, passes through) and are removed on uninstall.
"""

from hipo_jupyter.memory.recall import RECALL_PREAMBLE, RECALL_TAG, escape_fence, fence_quoted

from .client import ClaudeUnavailable, credentials_in_env, error_line, has_credentials, make_client
from .injection import (
    CLIENTS,
    PATCH_POINTS,
    Injector,
    LLMCall,
    internal_call,
    without_memory,
)
from .layer1_pin import FRESH_PREAMBLE, Layer1Pin, PromptLayer1
from .messages_shape import carries_layer1, inject_layer1, inject_layer1_and_plan, reply_text
from .prompt import (
    CONVERSATION_TAG,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    FRESH_CLOSE,
    FRESH_OPEN,
    LAYER1_CLOSE,
    LAYER1_OPEN,
    LAYER1_PREAMBLE,
    MAX_CACHE_BREAKPOINTS,
    NO_KEY_MESSAGE,
    ask_request,
    ask_request_and_plan,
    conversation_block,
    fresh_block,
    layer1_block,
    status_note,
    tokens_of_block,
)
from .replies import MalformedReply, StreamedReply, incomplete_reason, read_stream
from .summarizer import (
    FOLD_SYSTEM,
    SECTIONS,
    SUMMARIZER_SYSTEM,
    TASK_SYSTEM,
    ClaudeFolder,
    ClaudeSummarizer,
    ClaudeTaskWriter,
    SummaryError,
)

__all__ = [
    "CLIENTS",
    "PATCH_POINTS",
    "FRESH_CLOSE",
    "FRESH_OPEN",
    "FRESH_PREAMBLE",
    "Layer1Pin",
    "PromptLayer1",
    "fresh_block",
    "CONVERSATION_TAG",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "FOLD_SYSTEM",
    "LAYER1_CLOSE",
    "LAYER1_OPEN",
    "LAYER1_PREAMBLE",
    "MAX_CACHE_BREAKPOINTS",
    "NO_KEY_MESSAGE",
    "RECALL_PREAMBLE",
    "RECALL_TAG",
    "SECTIONS",
    "SUMMARIZER_SYSTEM",
    "TASK_SYSTEM",
    "ClaudeFolder",
    "ClaudeSummarizer",
    "ClaudeTaskWriter",
    "ClaudeUnavailable",
    "Injector",
    "LLMCall",
    "MalformedReply",
    "StreamedReply",
    "SummaryError",
    "ask_request",
    "ask_request_and_plan",
    "carries_layer1",
    "conversation_block",
    "credentials_in_env",
    "error_line",
    "escape_fence",
    "fence_quoted",
    "has_credentials",
    "inject_layer1",
    "incomplete_reason",
    "inject_layer1_and_plan",
    "internal_call",
    "layer1_block",
    "make_client",
    "read_stream",
    "reply_text",
    "status_note",
    "tokens_of_block",
    "without_memory",
]
