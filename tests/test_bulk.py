"""The batch reader never answers a line differently from the one loader.

``donegate.bulk`` reads claims with its own typed decoder, for speed. It may only ever take a line
the loader (``parse_claim``, pydantic) would take, and must then decide it exactly as the models
would: the same bytes out. Everything else goes to the loader. These tests feed both the same
lines (real claims, their hostile mutants, hypothesis-drawn documents) and compare the answers.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from donegate import bulk, reader
from donegate.claim import Claim, as_model, parse_claim, validated
from donegate.errors import InvalidInput
from donegate.instant import Instant
from donegate.rules import VerifyOptions
from donegate.verdict import decide
from tests.claims import claim_doc, evidence
from tests.hostile import mutants
from tests.test_fuzz import real_claims

NOW = Instant.parse("2026-08-27T18:04:10Z")
OPTIONS = VerifyOptions(now=NOW)


def both(line: bytes, options: VerifyOptions = OPTIONS) -> tuple[bytes, bytes]:
    """The batch's answer, and the loader's answer to the same line."""
    fast = bulk.Batch(options).answer(7, line)
    loaded = bulk.Batch(options)._answer_loaded(7, line)
    return fast, loaded


def assert_same(line: bytes, options: VerifyOptions = OPTIONS) -> None:
    fast, loaded = both(line, options)
    assert fast == loaded, line[:300]
    struct = reader.read(line)
    if struct is not None:  # taken by the reader: the models must take it too, and be the same
        assert_same_models(as_model(struct), validated(line))


def assert_same_models(built: Claim, checked: Claim) -> None:
    assert built == checked
    # Fields set at every level decide what a claim written back holds.
    assert built.to_json_dict() == checked.to_json_dict()
    assert built.model_dump_json(exclude_unset=True) == checked.model_dump_json(exclude_unset=True)
    assert built.model_dump_json() == checked.model_dump_json()
    assert repr(built) == repr(checked)


def test_the_reader_takes_an_ordinary_claim() -> None:
    # Without this the comparisons below would only ever compare the loader with itself.
    line = json.dumps(claim_doc()).encode()
    assert reader.read(line) is not None
    answer = json.loads(bulk.Batch(OPTIONS).answer(1, line))
    assert answer["verdict"]["state"] == "verified"
    assert_same(line)


def test_real_claims_and_their_mutants_are_answered_as_the_loader_does() -> None:
    taken = 0
    for doc in real_claims():
        for line in [json.dumps(doc).encode(), *mutants(doc, 150, seed=len(json.dumps(doc)))]:
            assert_same(line)
            taken += reader.read(line) is not None
    assert taken > 100, "the reader must take the valid mutants, not hand everything over"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"zz_extra": {"kept": True}}, "a field the format does not name is kept by the loader"),
        ({"evidence": [evidence(covers=["nope"])]}, "a dangling reference"),
        ({"mutations": [{"id": "m1", "kind": "k", "target": "t", "at": NOW.text}] * 2}, "dup id"),
        ({"evidence": [evidence(at="٢٠٢٦-08-27T18:04:09Z")]}, "digits of another script"),
        ({"evidence": [evidence(at="2026-08-27T18:04:09Z\n")]}, "a trailing newline"),
        ({"evidence": [evidence(observed_value=json.loads("[" * 196 + "]" * 196))]}, "deep"),
        ({"evidence": [evidence(observed_value=json.loads("[" * 197 + "]" * 197))]}, "deeper"),
        ({"verdict": json.loads("[" * 198 + "]" * 198)}, "a deep verdict the loader drops"),
        ({"evidence": [evidence(observed_value={"n": 10**400})]}, "a huge integer"),
        ({"policy": {"requires": ["test_run"], "max_age_s": 10**30}}, "a huge bound"),
        ({"policy": {"max_age_s": 1e-300, "extra": [1]}}, "a policy with its own field"),
        ({"policy": {"max_age_s": True}}, "a boolean is not a number"),
        ({"task": {"id": ""}}, "an empty id"),
        ({"task": {"id": "t", "description": 3}}, "a number for text"),
        ({"evidence": [evidence(verifier={"id": "v", "kind": "independent", "sig": "x"})]}, "x"),
    ],
)
def test_edge_documents_are_answered_as_the_loader_does(change: dict[str, Any], why: str) -> None:
    assert_same(json.dumps(claim_doc(**change), ensure_ascii=False).encode())


def nested(levels: int) -> Any:
    value: Any = 1
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("levels", [reader.VALUE_DEPTH, reader.VALUE_DEPTH + 1, 150, 190, 210])
def test_a_deep_value_is_read_unless_its_line_has_many_brackets(levels: int) -> None:
    doc = claim_doc(evidence=[evidence(expected={"v": nested(levels)})])
    line = json.dumps(doc).encode()
    brackets = line.count(b"[") + line.count(b"{")
    taken = levels <= reader.VALUE_DEPTH or brackets < reader.MOST_BRACKETS
    assert (reader.read(line) is not None) == taken
    assert_same(line)


def test_brackets_are_counted_wherever_they_are() -> None:
    # Brackets in a string nest nothing, but the reader does not read strings: with a deep
    # value beside them, the loader decides, and answers the same.
    outcome = "[" * reader.MOST_BRACKETS
    shallow = json.dumps(claim_doc(claimed_outcome=outcome)).encode()
    assert reader.read(shallow) is not None
    deep = claim_doc(claimed_outcome=outcome, evidence=[evidence(observed_value=nested(6))])
    assert reader.read(json.dumps(deep).encode()) is None
    assert_same(json.dumps(deep).encode())
    rows = claim_doc(evidence=[evidence(observed_value=[{"row": [n]} for n in range(200)])])
    assert reader.read(json.dumps(rows).encode()) is not None  # many brackets, but shallow
    assert_same(json.dumps(rows).encode())


@pytest.mark.parametrize("key", ["observed_value", "verdict", "expected", "at"])
def test_a_deep_value_hidden_under_a_duplicate_key_never_passes_the_reader(key: str) -> None:
    # The first of two equal keys is dropped by a decoder, but the loader's parser still reads
    # (and refuses) its depth: measured on the decoded claim, this line would be taken.
    deep = "[" * 210 + "]" * 210  # the loader's parser stops between 196 and 201 levels
    base = json.dumps(claim_doc())
    if key == "verdict":
        line = base[:-1] + f', "verdict": {deep}, "verdict": null}}'
    else:
        marker = f'"{key}": '
        line = base.replace(marker, f"{marker}{deep}, {marker}", 1)
    assert line != base
    assert reader.read(line.encode()) is None
    with pytest.raises(InvalidInput, match="nested too deeply"):
        parse_claim(line)
    assert_same(line.encode())


def test_raw_texts_the_json_module_would_not_write() -> None:
    base = json.dumps(claim_doc())
    for raw in ["-0", "-0.0", "1e400", "1E2", "1.5e-400", "123456789012345678901234567890"]:
        assert_same(base.replace('"exit_code": 0', f'"exit_code": {raw}').encode())
    doubled = base.replace('"claimed_outcome": ', '"claimed_outcome": 3, "claimed_outcome": ', 1)
    assert_same(doubled.encode())


@pytest.mark.parametrize(
    "options",
    [
        VerifyOptions(now=NOW, max_skew_s=Fraction(1, 3)),
        VerifyOptions(now=NOW, max_skew_s=0),
        VerifyOptions(now=NOW, trust=frozenset({"someone-else"})),
        VerifyOptions(now=Instant.parse("2026-08-27T18:04:09.0000001Z")),
    ],
    ids=["fraction-skew", "no-skew", "trust", "odd-now"],
)
def test_options_are_applied_as_the_models_apply_them(options: VerifyOptions) -> None:
    for doc in real_claims():
        assert_same(json.dumps(doc).encode(), options)


_instants = st.builds(
    "{}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}".format,
    st.sampled_from(["2026", "1970", "0001", "9999"]),
    st.integers(1, 12),
    st.integers(1, 31),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 60),
    st.sampled_from(["", ".5", ".000000001", ".1000", "." + "9" * 30]),
    st.sampled_from(["Z", "z", "+00:00", "-23:59", "+14:30", "+24:00"]),
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


@st.composite
def claims(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(st.sampled_from(["m1", "m2", "m3"]), max_size=3))
    mutations = [{"id": i, "kind": "file_write", "target": i, "at": draw(_instants)} for i in ids]
    items = [
        {
            "check_type": draw(st.sampled_from(["test_run", "endpoint_health", ""])),
            "target": "t",
            "expected": draw(st.dictionaries(st.sampled_from(["a", "body_contains"]), _json)),
            "observed_value": draw(_json | st.dictionaries(st.sampled_from(["a"]), _json)),
            "at": draw(_instants),
            "covers": draw(st.lists(st.sampled_from(["m1", "m2", "m4"]), max_size=2)),
            "verifier": {"id": "v", "kind": draw(st.sampled_from(["independent", "absent"]))},
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    policy = draw(
        st.none()
        | st.fixed_dictionaries(
            {},
            optional={
                "requires": st.lists(st.sampled_from(["test_run", "endpoint_health"])),
                "max_age_s": st.integers(0, 10**20) | st.floats(0, 1e12),
                "on_unverified": st.sampled_from(["block", "warn", "nope"]),
            },
        )
    )
    return {
        "spec_version": "0.1",
        "task": {"id": "t"},
        "claimed_outcome": "done",
        "mutations": mutations,
        "evidence": items,
        "policy": policy,
    }


@settings(max_examples=400, deadline=None)
@given(claims())
def test_drawn_claims_are_answered_as_the_loader_does(doc: dict[str, Any]) -> None:
    assert_same(json.dumps(doc).encode())


def test_the_batch_answer_is_the_models_verdict() -> None:
    # The loader's own answer carries the verdict decide() computes for the API.
    for doc in real_claims():
        line = json.dumps(doc).encode()
        try:
            claim = parse_claim(line)
        except InvalidInput:
            continue
        answer = json.loads(bulk.Batch(OPTIONS).answer(1, line))
        model = decide(claim, OPTIONS).model_dump(mode="json", exclude_unset=True)
        assert answer["verdict"] == model
