"""Token counting: the packaged o200k_base, its offline fallback, and truncation to a budget."""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipo_jupyter.memory.tree import tokens
from hipo_jupyter.memory.tree.tokens import (
    PACKAGED_STATUS,
    EncodingUnavailable,
    TokenEstimateWarning,
    count_tokens,
    encoding_status,
    load_encoding,
    truncate_to_tokens,
)

# Token ids published for o200k_base (tiktoken, js-tiktoken and other ports agree on them).
KNOWN_IDS = {
    "hello world": [24912, 2375],
    " 日本語とEnglish 12345!\n": [17428, 40909, 5330, 28881, 220, 7633, 2548, 4175],
    "a\n\n": [64, 279],
    "<|endoftext|>": [27, 91, 419, 1440, 919, 91, 29],
}


@pytest.fixture
def fresh_tokenizer() -> Iterator[None]:
    """Each test that changes the encoding file starts and ends with nothing loaded."""
    tokens.reset_tokenizer()
    yield
    tokens.reset_tokenizer()


@pytest.fixture
def missing_encoding(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_tokenizer: None
) -> Path:
    path = tmp_path / "nowhere" / "o200k_base.tiktoken.gz"
    monkeypatch.setattr(tokens, "ENCODING_FILE", path)
    return path


@pytest.fixture(scope="module")
def encoding():
    return load_encoding()


def test_packaged_encoding_loads_without_network(encoding) -> None:
    assert encoding.name == "o200k_base"
    assert encoding.n_vocab == 200019
    assert encoding_status() == PACKAGED_STATUS


@pytest.mark.parametrize("text", sorted(KNOWN_IDS))
def test_known_token_ids_and_round_trip(encoding, text: str) -> None:
    ids = encoding.encode_ordinary(text)
    assert ids == KNOWN_IDS[text]
    assert encoding.decode(ids) == text
    assert count_tokens(text) == len(KNOWN_IDS[text])


def test_hello_world_is_two_tokens() -> None:
    assert count_tokens("hello world") == 2


def test_special_tokens_are_o200k_base_ones(encoding) -> None:
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [199999]
    assert encoding.encode("<|endofprompt|>", allowed_special="all") == [200018]


def test_pattern_and_special_tokens_match_installed_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Our copy of the pattern and special tokens equals tiktoken's own o200k_base definition
    (its rank loader is replaced for this call, so nothing is downloaded)."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    definition = openai_public.o200k_base()
    assert definition["pat_str"] == tokens.O200K_PAT_STR
    assert definition["special_tokens"] == tokens.O200K_SPECIAL_TOKENS


def test_count_is_stable_on_repeat_and_sensitive_to_text() -> None:
    text = "Compare our pricing with the top 5 competitors.\n" * 200
    first = count_tokens(text)
    assert count_tokens(text) == first
    assert count_tokens(text + " and more words here") > first
    assert count_tokens("") == 0


def test_missing_file_falls_back_to_estimate_and_warns_once(missing_encoding: Path) -> None:
    with pytest.warns(TokenEstimateWarning, match="estimated") as record:
        assert count_tokens("abcdefghi") == 3  # ceil(9 / 4)
    assert len(record) == 1
    assert str(missing_encoding) in str(record[0].message)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise here
        assert count_tokens("hello world") == 3  # ceil(11 / 4), not the real 2
        assert count_tokens("abcd") == 1
        assert count_tokens("a") == 1
        status = encoding_status()
    assert status.startswith("estimate (4 chars/token): ")
    assert "cannot read" in status


def test_wrong_hash_is_refused(tmp_path: Path) -> None:
    altered = tmp_path / "altered.tiktoken.gz"
    altered.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    with pytest.raises(EncodingUnavailable, match="sha256"):
        load_encoding(altered)


def test_not_gzip_is_refused(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.tiktoken.gz"
    damaged.write_bytes(b"not gzip at all")
    with pytest.raises(EncodingUnavailable, match="cannot read"):
        load_encoding(damaged)


def test_wrong_hash_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_tokenizer: None
) -> None:
    altered = tmp_path / "altered.tiktoken.gz"
    altered.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    monkeypatch.setattr(tokens, "ENCODING_FILE", altered)
    with pytest.warns(TokenEstimateWarning, match="sha256"):
        assert count_tokens("12345678") == 2
    assert "sha256" in encoding_status()


def test_missing_tiktoken_falls_back(
    monkeypatch: pytest.MonkeyPatch, fresh_tokenizer: None
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tiktoken", None)  # makes `import tiktoken` fail
    with pytest.warns(TokenEstimateWarning, match="tiktoken is not importable"):
        assert count_tokens("hello world") == 3


def test_truncate_keeps_whole_text_within_budget() -> None:
    text = "line one\nline two\n"
    assert truncate_to_tokens(text, 100) == text
    assert truncate_to_tokens(text, 0) == ""


def test_truncate_cuts_at_a_line_boundary() -> None:
    lines = [f"- item {i}: the decision was to keep the starter tier\n" for i in range(50)]
    text = "".join(lines)
    cut = truncate_to_tokens(text, 100)
    assert count_tokens(cut) <= 100
    assert text.startswith(cut)
    assert cut.endswith("\n")
    assert count_tokens(cut) > 100 - count_tokens(lines[0])  # no whole line left unused
    assert count_tokens(text[: len(cut) + len(lines[0])]) > 100  # the next line would not fit


def test_truncate_cuts_mid_line_when_one_line_is_everything() -> None:
    text = "title\n" + "word " * 500
    cut = truncate_to_tokens(text, 50)
    assert count_tokens(cut) <= 50
    assert len(cut) > len("title\n")  # not thrown back to the only line break
    assert text.startswith(cut)


def test_truncate_with_estimate(missing_encoding: Path) -> None:
    with pytest.warns(TokenEstimateWarning):
        cut = truncate_to_tokens("abcd\nefgh\nijkl\n", 3)
    assert cut == "abcd\nefgh\n"


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=400), budget=st.integers(min_value=0, max_value=60))
def test_truncate_is_a_prefix_within_budget(text: str, budget: int) -> None:
    cut = truncate_to_tokens(text, budget)
    assert text.startswith(cut)
    assert count_tokens(cut) <= budget
    if count_tokens(text) <= budget:
        assert cut == text


# The characters o200k_base's pre-tokenizer treats apart: breaks, slashes after punctuation,
# the four control characters Python splits at and it does not, contractions, marks, digits.
EDGES = st.lists(st.sampled_from([*"ab Z1'!/.\n\r\t\x1c\x1d\x1e\x1f\u3000\u0301é日,-_", "'s"]),
                 max_size=200).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(EDGES, st.text(max_size=300)))
def test_the_token_floor_never_counts_more_than_the_tokenizer(text: str) -> None:
    assert tokens.token_floor(text) <= count_tokens(text)


@settings(max_examples=100, deadline=None)
@given(text=st.one_of(EDGES, st.text(max_size=300)), limit=st.integers(min_value=0, max_value=80))
def test_within_is_the_count_against_the_limit(text: str, limit: int) -> None:
    assert tokens.within(text, limit) == (count_tokens(text) <= limit)


def test_the_floor_holds_where_a_piece_spans_a_break() -> None:
    for text in ("!\n/", "!\n/\n/\n/", "!\x1c!\x1c!", "a\x1cb", "it's", "x /\r\n/ y"):
        assert tokens.token_floor(text) <= count_tokens(text), text
    assert tokens.token_floor("a long reply " * 100) == 300  # what lets `within` skip encoding
