"""``must_pass`` tests of runners other than pytest run a second time in the same process, where
the runner can: ``go test`` (``-count=2``) and ``node --test`` (each test file loaded again in
its own process, the modules it tests kept). A counter that hands a test the expected value only
on the first call passes a plain run; it does not pass both. Played with the real toolchains.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.checks import runner_projects as rp
from tests.checks.support import collect_one, detail, only, state, write

GO_COUNTER = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    # The first call answers right; later ones do not: only the test's first run sees 3.
    "sum/sum.go": (
        "package sum\n\nvar calls int\n\n"
        "func Add(a, b int) int {\n\tcalls++\n\tif calls == 1 {\n\t\treturn a + b\n\t}\n"
        "\treturn 0\n}\n"
    ),
    "sum/sum_test.go": """
        package sum

        import "testing"

        func TestAdd(t *testing.T) {
        \tif Add(1, 2) != 3 {
        \t\tt.Fatal("1 + 2")
        \t}
        }

        func TestOther(t *testing.T) {}
    """,
}
GO_HONEST = {**GO_COUNTER, "sum/sum.go": "package sum\n\nfunc Add(a, b int) int { return a + b }\n"}

NODE_COUNTER_CJS = {
    "src/sum.js": """
        let calls = 0;
        module.exports.add = (a, b) => { calls += 1; return calls === 1 ? a + b : 0; };
    """,
    "test/sum.test.js": """
        const { describe, test } = require('node:test');
        const assert = require('node:assert');
        const { add } = require('../src/sum.js');
        describe('sum', () => {
          test('adds', () => { assert.strictEqual(add(1, 2), 3); });
        });
    """,
}
NODE_COUNTER_ESM = {
    "package.json": '{"name": "calc", "private": true, "type": "module"}\n',
    "src/sum.js": """
        let calls = 0;
        export const add = (a, b) => { calls += 1; return calls === 1 ? a + b : 0; };
    """,
    "test/sum.test.js": """
        import { describe, test } from 'node:test';
        import assert from 'node:assert';
        import { add } from '../src/sum.js';
        describe('sum', () => {
          test('adds', () => { assert.strictEqual(add(1, 2), 3); });
        });
    """,
}
NODE_HONEST = {
    **NODE_COUNTER_CJS,
    "src/sum.js": "module.exports.add = (a, b) => a + b;\n",
}


def check(command: list[str], must_pass: list[str] = (), env: str = "") -> str:  # type: ignore[assignment]
    return f"""
        [[checks]]
        check_type = "test_run"
        command = {json.dumps(command)}
        must_pass = {json.dumps(list(must_pass))}
        timeout_s = 300
        {env}
    """


def _go() -> list[str]:
    # -count=1 as teams write it (no cached result): donegate's second run still happens.
    return [rp.need("go", "CI installs Debian's golang-go in .ci/run"), "test", "-count=1", "./..."]


def _node() -> list[str]:
    return [rp.need("node", "Node 20 is part of the machine's toolchains"), "--test"]


def test_go_a_counter_passes_once_and_not_when_run_again(tmp_path: Path) -> None:
    root = write(tmp_path, GO_COUNTER)
    assert state(collect_one(check(_go()), root, "sum/sum.go")) == "verified"  # the cheat works
    done = collect_one(check(_go(), ["TestAdd"]), root, "sum/sum.go")
    item = only(done)
    assert state(done) == "unverified"
    assert detail(item)["must_pass"] == {"TestAdd": "did not pass when run twice"}
    assert "TestAdd (did not pass when run twice)" in str(detail(item)["why_not_counted"])
    assert detail(item)["passed_only_once"] == ["example.com/calc/sum.TestAdd"]


def test_go_honest_code_passes_both_and_counts_one_run(tmp_path: Path) -> None:
    root = write(tmp_path, GO_HONEST)
    done = collect_one(check(_go(), ["TestAdd"], 'env = { GOFLAGS = "-count=1" }'), root, "x")
    item = only(done)
    assert detail(item)["must_pass"] == {"TestAdd": "passed"}
    counts = {"passed": 2, "failed": 0, "errors": 0, "skipped": 0}
    assert item.observed_value == {"exit_code": 0, **counts}
    assert state(done) == "verified"


@pytest.mark.parametrize("files", [NODE_COUNTER_CJS, NODE_COUNTER_ESM], ids=["cjs", "esm"])
def test_node_a_counter_passes_once_and_not_when_run_again(
    tmp_path: Path, files: dict[str, str]
) -> None:
    root = write(tmp_path, files)
    assert state(collect_one(check(_node()), root, "src/sum.js")) == "verified"
    done = collect_one(check(_node(), ["sum > adds"]), root, "src/sum.js")
    item = only(done)
    assert state(done) == "unverified"
    assert detail(item)["must_pass"] == {"sum > adds": "did not pass when run twice"}


def test_node_honest_code_passes_both_and_counts_one_run(tmp_path: Path) -> None:
    root = write(tmp_path, NODE_HONEST)
    done = collect_one(check(_node(), ["sum > adds"]), root, "src/sum.js")
    item = only(done)
    assert detail(item)["must_pass"] == {"sum > adds": "passed"}
    counts = {"passed": 1, "failed": 0, "errors": 0, "skipped": 0}
    assert item.observed_value == {"exit_code": 0, **counts}
    assert state(done) == "verified"
