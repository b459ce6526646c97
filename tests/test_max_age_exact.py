"""Rule 5 at its boundary: ``max_age_s`` read as the decimal it is written, ages compared exactly.

The reference below applies the spec's six rules to the JSON text, read with exact decimals
(``json.loads(..., parse_float=Decimal)``) and instants worked out by hand in fractions
(:func:`tests.test_instant_exact.reference`), without any of donegate's code. Claims are drawn at
and around the age bound: the bound written as a fraction, in exponent notation, with many digits;
the evidence exactly that old, one nanosecond or one last digit either side. Every way a claim
arrives (the loader, the validating loader, the batch reader, the batch's own loader, a policy
file, the team's configuration) must give the reference's verdict, and every stale finding's
message must print the exact age and the exact bound, the one greater than the other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from donegate import bulk
from donegate.claim import parse_claim, validated
from donegate.cli.app import run
from donegate.cli.verify import LARGE_CLAIM_BYTES
from donegate.config import parse_config
from donegate.errors import InvalidInput
from donegate.instant import Instant
from donegate.policy import AppliedPolicy, parse_policy
from donegate.rules import VerifyOptions
from donegate.verdict import decide
from tests.test_instant_exact import reference as seconds_of
from tests.test_instant_exact import text_of

NOW_TEXT = "2026-08-27T18:04:10.25Z"
NOW = seconds_of(NOW_TEXT)
STALE = re.compile(
    r"stale: (?P<age>[0-9.]+) s old at decision time, policy max_age_s is (?P<bound>\S+) \(rule 5\)"
)

# ----------------------------------------------------------------------------------------------
# The reference: the spec's rules, from its text, in exact arithmetic.


def _outcome(expected: dict[str, Any], observed: Any) -> str:
    if not isinstance(observed, dict) or not all(k in observed for k in expected):
        return "no_observation"  # the drawn claims never mix a missing key with a wrong one
    if all(observed[k] == v for k, v in expected.items()):
        return "match"
    return "contradicts"


def reference(text: str, now: Fraction, override: str | None = None) -> tuple[str, list[bool]]:
    """The verdict of the claim ``text`` at ``now``, and whether each evidence item counts.

    1. Self-attested (or absent) evidence never counts.
    2. Evidence counts only when collected strictly after every mutation it covers.
    5. Evidence older than ``max_age_s`` (``decided_at - at > max_age_s``) is absent.
    6. A counting observation that contradicts ``expected`` refutes the claim.
    3, 4. Verified only when every mutation and every required check type has counting, matching
       evidence, and there is some; otherwise unverified.
    """
    doc = json.loads(text, parse_float=Decimal)
    policy = json.loads(override, parse_float=Decimal) if override else doc.get("policy") or {}
    bound = policy.get("max_age_s")
    written = {m["id"]: seconds_of(m["at"]) for m in doc.get("mutations", [])}
    counts, matched, covered, refuted = [], set(), set(), False
    for item in doc.get("evidence", []):
        at = seconds_of(item["at"])
        fresh = bound is None or not now - at > Fraction(bound)
        after = all(at > written[m] for m in item["covers"])
        counting = item["verifier"]["kind"] == "independent" and after and fresh
        counts.append(counting)
        if not counting:
            continue
        outcome = _outcome(item["expected"], item.get("observed_value"))
        refuted = refuted or outcome == "contradicts"
        if outcome == "match":
            matched.add(item["check_type"])
            covered.update(item["covers"])
    if refuted:
        return "refuted", counts
    complete = set(written) <= covered and set(policy.get("requires", [])) <= matched
    return ("verified" if matched and complete else "unverified"), counts


# ----------------------------------------------------------------------------------------------
# Claims drawn at the boundary.

NAMED_BOUNDS = [
    "0.1",
    "0.3",
    "3e-1",
    "30E-2",
    "0.03e1",
    "1e-9",
    "1E-9",
    "2.675",
    "2.6749999999999998",
    "0.30000000000000004",
    "0.1000000000000000055511151231257827",
    "1.0000000000000000000000000001",
    "299.99999999999999999",
    "300.0",
    "3e2",
    "300",
    "0",
    "0.0",
    "4.35",
    "1e-30",
]


@st.composite
def bound_texts(draw: st.DrawFn) -> str:
    """A non-negative JSON number up to a million seconds, written in any way JSON allows."""
    form = draw(st.sampled_from(["plain", "e", "E+", "e-"]))
    if form == "plain":
        places = draw(st.integers(0, 30))
        whole, frac = divmod(draw(st.integers(0, 10 ** (places + 6))), 10**places)
        return f"{whole}.{frac:0{places}d}" if places else str(whole)
    if form == "E+":
        return f"{draw(st.integers(0, 999))}E+{draw(st.integers(0, 3))}"
    exponent = draw(st.integers(-30, -6))
    digits = draw(st.integers(0, 10**12))
    return f"{digits}e{exponent}" if form == "e" else f"{digits}E-{-exponent}"


def _places(value: Fraction) -> int:
    """The fractional digits an exact decimal fraction needs."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    return places


@st.composite
def boundary_claims(draw: st.DrawFn, bound_text: str | None = None) -> tuple[str, str]:
    """A claim (its JSON text, its bound written raw) and the bound's text."""
    text = bound_text or draw(st.sampled_from(NAMED_BOUNDS) | bound_texts())
    bound = Fraction(Decimal(text))
    last_digit = Fraction(1, 10 ** max(_places(bound), 1))
    step = draw(st.sampled_from([Fraction(0), Fraction(1, 10**9), last_digit, last_digit / 10]))
    age = bound + draw(st.sampled_from([-1, 0, 0, 1])) * step
    age = max(age, Fraction(0))
    at = NOW - age
    digits = max(_places(at), 2)
    mutation = text_of(at - 1, digits, 0)
    late = {
        "check_type": "state_readback",
        "target": "accounts/4471",
        "expected": {"zip": 94107},
        "observed_value": {"zip": draw(st.sampled_from([94107, 94110]))},
        "at": text_of(at, digits, draw(st.sampled_from([0, 330, -450]))),
        "covers": draw(st.sampled_from([["m1"], []])),
        "verifier": {"id": "ci", "kind": "independent"},
    }
    fresh = {**late, "observed_value": {"zip": 94107}, "at": NOW_TEXT, "covers": ["m1"]}
    items = draw(st.sampled_from([[late], [fresh, late], [late, fresh]]))
    requires = draw(st.sampled_from([[], ["state_readback"]]))
    doc = {
        "spec_version": "0.1",
        "task": {"id": "t"},
        "claimed_outcome": "done",
        "mutations": [{"id": "m1", "kind": "state_write", "target": "a", "at": mutation}],
        "evidence": items,
        "policy": {"requires": requires, "max_age_s": "BOUND"},
    }
    return json.dumps(doc).replace('"BOUND"', text), text


# ----------------------------------------------------------------------------------------------
# Every way in, against the reference.

OPTIONS = VerifyOptions(now=Instant.parse(NOW_TEXT))


def _check_findings(
    state: str, whys: list[str], expected: tuple[str, list[bool]], text: str, bound: str
) -> None:
    want_state, counts = expected
    assert state == want_state, (text, whys)
    doc = json.loads(text, parse_float=Decimal)
    for why, counting, item in zip(whys, counts, doc["evidence"], strict=True):
        stale = STALE.fullmatch(why)
        if counting:
            assert stale is None, why
            continue
        assert stale is not None, why  # the only way a drawn item fails to count
        age, printed = Decimal(stale["age"]), Decimal(stale["bound"])
        assert Fraction(age) == NOW - seconds_of(item["at"]), why
        assert printed == Decimal(bound), why
        assert age > printed, why


def _loaded(text: str) -> tuple[str, list[str]]:
    verdict = decide(parse_claim(text), OPTIONS)
    return verdict.state, [f.why for f in verdict.evidence]


def _validated(text: str) -> tuple[str, list[str]]:
    verdict = decide(validated(text), OPTIONS)
    return verdict.state, [f.why for f in verdict.evidence]


def _from_answer(answer: bytes) -> tuple[str, list[str]]:
    verdict = json.loads(answer)["verdict"]
    return verdict["state"], [f["why"] for f in verdict["evidence"]]


def _batch(text: str) -> tuple[str, list[str]]:
    return _from_answer(bulk.Batch(OPTIONS).answer(1, text.encode()))


def _batch_loaded(text: str) -> tuple[str, list[str]]:
    return _from_answer(bulk.Batch(OPTIONS)._answer_loaded(1, text.encode()))


PATHS: dict[str, Callable[[str], tuple[str, list[str]]]] = {
    "loader": _loaded,
    "validating loader": _validated,
    "batch reader": _batch,
    "batch loader": _batch_loaded,
}


def _issue_case(bound: str = "0.3", age: Fraction | None = None) -> tuple[str, str]:
    """A fresh match, and a contradicting reading ``age`` s old (exactly ``bound`` by default)."""
    at = NOW - (Fraction(Decimal(bound)) if age is None else age)
    digits = max(_places(at), 9)
    doc = {
        "spec_version": "0.1",
        "task": {"id": "t"},
        "claimed_outcome": "done",
        "mutations": [{"id": "m1", "kind": "w", "target": "a", "at": text_of(at - 1, digits, 0)}],
        "evidence": [
            {
                "check_type": "state_readback",
                "target": "a",
                "expected": {"zip": 94107},
                "observed_value": {"zip": observed},
                "at": text_of(when, digits, 0),
                "covers": ["m1"],
                "verifier": {"id": "ci", "kind": "independent"},
            }
            for observed, when in ((94107, NOW), (94110, at))
        ],
        "policy": {"requires": [], "max_age_s": "BOUND"},
    }
    return json.dumps(doc).replace('"BOUND"', bound), bound


@settings(max_examples=300, deadline=None)
@given(boundary_claims())
@example(_issue_case())
def test_every_path_agrees_with_the_reference(drawn: tuple[str, str]) -> None:
    text, bound = drawn
    expected = reference(text, NOW)
    for name, path in PATHS.items():
        state, whys = path(text)
        try:
            _check_findings(state, whys, expected, text, bound)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.parametrize("bound", ["0.3", "3e-1", "0.1", "2.675", "1e-9", "0.30000000000000004"])
def test_a_contradiction_exactly_as_old_as_the_bound_refutes(bound: str) -> None:
    text, _ = _issue_case(bound)
    assert reference(text, NOW) == ("refuted", [True, True])
    for name, path in PATHS.items():
        state, whys = path(text)
        assert (name, state) == (name, "refuted"), whys


@pytest.mark.parametrize("bound", ["0.3", "1.0000000000000000000000000001", "1e-9"])
def test_one_nanosecond_or_one_digit_older_is_stale_and_says_so(bound: str) -> None:
    exact = Fraction(Decimal(bound))
    for over in (Fraction(1, 10**9), Fraction(1, 10 ** (_places(exact) + 1))):
        text, _ = _issue_case(bound, exact + over)
        expected = reference(text, NOW)
        assert expected == ("verified", [True, False])
        for path in PATHS.values():
            state, whys = path(text)
            _check_findings(state, whys, expected, text, bound)


# ----------------------------------------------------------------------------------------------
# The caller's policy: a policy file, and the team's configuration.


@settings(max_examples=100, deadline=None)
@given(boundary_claims())
def test_a_policy_file_is_read_exactly(drawn: tuple[str, str]) -> None:
    text, bound = drawn
    doc = json.loads(text)
    del doc["policy"]
    bare = json.dumps(doc)
    override = '{"id": "team", "requires": [], "max_age_s": BOUND}'.replace("BOUND", bound)
    expected = reference(bare, NOW, override)
    applied = AppliedPolicy(source="file", policy=parse_policy(override))
    options = VerifyOptions(now=OPTIONS.now, policy=applied)
    verdict = decide(parse_claim(bare), options)
    _check_findings(verdict.state, [f.why for f in verdict.evidence], expected, bare, bound)
    answer = _from_answer(bulk.Batch(options).answer(1, bare.encode()))
    _check_findings(*answer, expected, bare, bound)


@pytest.mark.parametrize("bound", ["0.3", "3e-1", "2.675", "1e-9", "0.1000000000000000055511151"])
def test_the_configured_policy_is_read_exactly(bound: str) -> None:
    config = parse_config(f"[policy]\nrequires = []\nmax_age_s = {bound}\n")
    applied = config.applied_policy()
    assert applied is not None
    assert applied.max_age_s == Decimal(bound)
    text, _ = _issue_case(bound)
    options = VerifyOptions(now=OPTIONS.now, policy=applied)
    assert decide(parse_claim(text), options).state == "refuted"


# ----------------------------------------------------------------------------------------------
# The command line, end to end.


@pytest.mark.parametrize("bound", ["0.3", "3e-1", "2.675"])
def test_verify_and_verify_jsonl_refute_at_the_bound(
    bound: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, _ = _issue_case(bound)
    claim, lines = tmp_path / "claim.json", tmp_path / "claims.jsonl"
    claim.write_text(text)
    lines.write_text(text + "\n" + text + "\n")
    capsys.readouterr()
    assert run(["verify", str(claim), "--now", NOW_TEXT, "--json"]) == 1  # refuted
    assert json.loads(capsys.readouterr().out)["verdict"]["state"] == "refuted"
    assert run(["verify", "--jsonl", str(lines), "--now", NOW_TEXT]) == 0
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [a["verdict"]["state"] for a in answers] == ["refuted", "refuted"]


# ----------------------------------------------------------------------------------------------
# What is refused, and what is written back.


@pytest.mark.parametrize("bound", ["-1e-400", "-0.000000000000000000001"])
def test_a_bound_below_zero_however_small_is_refused(bound: str) -> None:
    text, _ = _issue_case("0.3")
    text = text.replace('"max_age_s": 0.3', f'"max_age_s": {bound}')
    with pytest.raises(InvalidInput, match="max_age_s"):
        parse_claim(text)
    answer = json.loads(bulk.Batch(OPTIONS).answer(1, text.encode()))
    assert (answer["state"], answer["path"]) == ("invalid", "policy.max_age_s")


def test_the_last_of_two_bounds_is_the_one_read() -> None:
    text, _ = _issue_case("0.3")
    doubled = text.replace('"max_age_s": 0.3', '"max_age_s": 0.29, "max_age_s": 0.3')
    for name, path in PATHS.items():
        assert (name, path(doubled)[0]) == (name, "refuted")


def test_a_tiny_bound_is_decided_without_expanding_it() -> None:
    # 1e-100000000 written out would be a hundred million digits; no age lies below it but 0.
    text, _ = _issue_case("0.3")
    tiny = text.replace('"max_age_s": 0.3', '"max_age_s": 1e-100000000')
    for path in PATHS.values():
        state, whys = path(tiny)
        assert state == "verified"
        assert whys[1].endswith("policy max_age_s is 1E-100000000 (rule 5)"), whys[1]


def test_a_large_claim_is_read_exactly_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A claim of a mebibyte or more is read in pieces (to fit in memory): its bound too is the
    decimal it writes. 22 digits name a bound no float holds; the float nearest it is shorter
    than the contradicting reading's age, which then went unread and the claim verified."""
    bound = "0.3000000000000000000001"
    text, _ = _issue_case(bound)
    doc = json.loads(text.replace(f'"max_age_s": {bound}', '"max_age_s": "BOUND"'))
    doc["task"]["description"] = "x" * LARGE_CLAIM_BYTES
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps(doc).replace('"BOUND"', bound))
    capsys.readouterr()
    assert run(["verify", str(claim), "--now", NOW_TEXT, "--json"]) == 1  # refuted
    assert json.loads(capsys.readouterr().out)["verdict"]["state"] == "refuted"
