"""Properties of the verdict that no example list can cover: hypothesis tries to make it lie."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from donegate.claim import parse_claim
from donegate.instant import Instant
from donegate.policy import AppliedPolicy, Policy
from donegate.verdict import VerifyOptions, decide

EPOCH = datetime(2026, 8, 27, 18, 0, tzinfo=UTC)
CHECK_TYPES = ["test_run", "endpoint_health", "state_readback"]
OFFSETS = [UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-7, minutes=-30))]


def stamp(seconds: float, tz_index: int = 0) -> str:
    moment = (EPOCH + timedelta(seconds=seconds)).astimezone(OFFSETS[tz_index])
    return moment.isoformat()


@st.composite
def evidence_specs(draw: st.DrawFn, mutation_ids: list[str]) -> dict[str, Any]:
    observed = draw(st.sampled_from(["match", "contradict", "missing", "null"]))
    value = {"match": {"k": 1}, "contradict": {"k": 2}, "missing": {"other": 1}, "null": None}
    return {
        "check_type": draw(st.sampled_from(CHECK_TYPES)),
        "target": "t",
        "expected": {"k": 1},
        "observed_value": value[observed],
        "t": draw(st.integers(0, 400)),
        "tz": draw(st.integers(0, len(OFFSETS) - 1)),
        "covers": draw(st.lists(st.sampled_from(mutation_ids), unique=True))
        if mutation_ids
        else [],
        "verifier": {
            "id": "v",
            "kind": draw(
                st.sampled_from(["independent", "independent", "self_attested", "absent"])
            ),
        },
    }


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 3))
    mutation_ids = [f"m{i}" for i in range(n)]
    return {
        "mutations": [{"id": m, "t": draw(st.integers(0, 200))} for m in mutation_ids],
        "evidence": draw(st.lists(evidence_specs(mutation_ids), max_size=5)),
        "requires": draw(st.lists(st.sampled_from(CHECK_TYPES), unique=True, max_size=2)),
        "max_age_s": draw(st.one_of(st.none(), st.integers(0, 300))),
        "now": draw(st.integers(0, 600)),
    }


def build(s: dict[str, Any], shift: float = 0.0) -> tuple[dict[str, Any], Instant]:
    doc = {
        "spec_version": "0.1",
        "task": {"id": "t"},
        "claimed_outcome": "done",
        "mutations": [
            {"id": m["id"], "kind": "k", "target": "x", "at": stamp(m["t"] + shift)}
            for m in s["mutations"]
        ],
        "evidence": [
            {
                **{k: v for k, v in e.items() if k not in ("t", "tz")},
                "at": stamp(e["t"] + shift, e["tz"]),
            }
            for e in s["evidence"]
        ],
        "policy": {"id": "p", "requires": s["requires"], "max_age_s": s["max_age_s"]},
    }
    return doc, Instant.parse(stamp(s["now"] + shift))


def outcome(doc: dict[str, Any], now: Instant) -> tuple[str, list[str]]:
    verdict = decide(parse_claim(doc), VerifyOptions(now=now))
    return verdict.state, verdict.unmet


@settings(max_examples=300)
@given(scenarios(), st.randoms(use_true_random=False))
def test_evidence_order_does_not_matter(s: dict[str, Any], rng: Any) -> None:
    doc, now = build(s)
    shuffled = dict(doc, evidence=rng.sample(doc["evidence"], len(doc["evidence"])))
    assert outcome(doc, now) == outcome(shuffled, now)


@settings(max_examples=300)
@given(scenarios(), st.floats(-1e8, 1e8, allow_nan=False).map(round))
def test_shifting_every_timestamp_and_now_changes_nothing(s: dict[str, Any], shift: int) -> None:
    assert outcome(*build(s)) == outcome(*build(s, shift))


@settings(max_examples=300)
@given(scenarios(), st.sampled_from(["self_attested", "absent", "stale", "early"]), st.data())
def test_evidence_that_does_not_count_changes_nothing(
    s: dict[str, Any], kind: str, data: st.DataObject
) -> None:
    doc, now = build(s)
    extra = data.draw(evidence_specs([m["id"] for m in s["mutations"]]))
    extra, _ = build({**s, "evidence": [extra]})
    item = extra["evidence"][0]
    if kind in ("self_attested", "absent"):
        item["verifier"] = {"id": "agent", "kind": kind}
    elif kind == "stale":
        item["at"] = stamp(s["now"] - 10_000)
        doc["policy"]["max_age_s"] = s["max_age_s"] or 300
    else:
        item["at"] = stamp(-1)
        item["covers"] = [m["id"] for m in s["mutations"]][:1]
        if not item["covers"]:
            return
    before = outcome(doc, now)
    assert outcome(dict(doc, evidence=[*doc["evidence"], item]), now) == before


@settings(max_examples=300)
@given(scenarios(), st.data())
def test_removing_evidence_never_makes_a_claim_verified(
    s: dict[str, Any], data: st.DataObject
) -> None:
    """Removing evidence never verifies a claim, unless what goes is every contradiction.

    A refuted claim whose contradicting observations are withheld can verify: rule 6 lets the
    contradiction dominate, so hiding it is the one way to lie by omission. That is why donegate
    collects evidence itself rather than trusting a submitter to include all of it.
    """
    doc, now = build(s)
    claim = parse_claim(doc)
    verdict = decide(claim, VerifyOptions(now=now))
    if verdict.state == "verified" or not doc["evidence"]:
        return
    contradicting = {f.index for f in verdict.evidence if f.counts and f.outcome == "contradicts"}
    n = len(doc["evidence"])
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    fewer = [e for e, k in zip(doc["evidence"], keep, strict=True) if k]
    if verdict.state == "refuted" and not any(keep[i] for i in contradicting):
        return
    assert outcome(dict(doc, evidence=fewer), now)[0] != "verified"


@settings(max_examples=300)
@given(scenarios())
def test_verified_only_with_every_mutation_covered_by_an_independent_match(
    s: dict[str, Any],
) -> None:
    doc, now = build(s)
    claim = parse_claim(doc)
    verdict = decide(claim, VerifyOptions(now=now))
    if verdict.state != "verified":
        return
    counted = {f.index for f in verdict.evidence if f.counts and f.outcome == "match"}
    assert counted
    for mutation in claim.mutations:
        assert any(mutation.id in claim.evidence[i].covers for i in counted)
    for i in counted:
        assert claim.evidence[i].verifier.kind == "independent"


@settings(max_examples=200)
@given(scenarios())
def test_a_callers_policy_is_applied_entirely(s: dict[str, Any]) -> None:
    doc, now = build(s)
    strict = AppliedPolicy(source="file", policy=Policy(id="strict", requires=["never_observed"]))
    verdict = decide(parse_claim(doc), VerifyOptions(now=now, policy=strict))
    assert verdict.state != "verified"
    assert verdict.applied_policy == strict
