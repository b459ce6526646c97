"""Small real projects for each test runner, and the toolchains they need.

The npm packages are installed once into ``~/.cache/donegate-tests/node-<hash of package.json>``
and linked into each project; a toolchain that cannot be had skips its tests with the reason.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_PACKAGES = {"name": "donegate-runner-fixture", "private": True}
NODE_DEV = {"vitest": "^3.2.0", "jest": "^29.7.0"}


def node_modules() -> Path:
    """A cached ``node_modules`` holding Vitest and Jest; skip if npm cannot install them."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed")
    manifest = json.dumps({**NODE_PACKAGES, "devDependencies": NODE_DEV}, sort_keys=True)
    key = hashlib.sha256(manifest.encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    home = cache / "donegate-tests" / f"node-{key}"
    done = home / "node_modules" / ".donegate-complete"
    home.mkdir(parents=True, exist_ok=True)
    # Test processes running side by side (xdist, or two checkouts) install one at a time: a
    # second npm in the same directory would remove what the first one is still installing.
    with (home.parent / f"node-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            (home / "package.json").write_text(manifest)
            install = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=home,
                capture_output=True,
                text=True,
                check=False,
            )
            if install.returncode != 0:
                pytest.skip(f"npm could not install vitest and jest: {install.stderr[-500:]}")
            done.write_text("")
    return home / "node_modules"


def need(tool: str, why: str) -> str:
    """The path of ``tool``, or skip saying how CI gets it."""
    found = shutil.which(tool)
    if found is None:
        pytest.skip(f"{tool} is not installed ({why})")
    return found


VITEST = {
    "package.json": '{"name": "calc", "private": true, "type": "module"}\n',
    "src/sum.test.js": """
        import { describe, test, expect } from 'vitest';
        describe('sum', () => {
          test('adds', () => { expect(1 + 2).toBe(3); });
          test.skip('later', () => {});
        });
    """,
}
VITEST_FAILING = """
    import { describe, test, expect } from 'vitest';
    describe('sum', () => {
      test('adds', () => { expect(1 + 2).toBe(4); });
    });
"""

JEST = {
    "package.json": '{"name": "calc", "private": true}\n',
    "src/sum.test.js": """
        describe('sum', () => {
          test('adds', () => { expect(1 + 2).toBe(3); });
          test.skip('later', () => {});
        });
    """,
}
JEST_FAILING = """
    describe('sum', () => {
      test('adds', () => { expect(1 + 2).toBe(4); });
    });
"""

NODE = {
    "test/sum.test.js": """
        const { describe, test } = require('node:test');
        const assert = require('node:assert');
        describe('sum', () => {
          test('adds', () => { assert.strictEqual(1 + 2, 3); });
          test('later', { skip: true }, () => {});
        });
    """,
}
NODE_FAILING = """
    const { describe, test } = require('node:test');
    const assert = require('node:assert');
    describe('sum', () => {
      test('adds', () => { assert.strictEqual(1 + 2, 4); });
    });
"""

GO = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "sum/sum.go": "package sum\n\nfunc Add(a, b int) int { return a + b }\n",
    "sum/sum_test.go": """
        package sum

        import "testing"

        func TestAdd(t *testing.T) {
        \tt.Run("small", func(t *testing.T) {
        \t\tif Add(1, 2) != 3 {
        \t\t\tt.Fatal("1 + 2")
        \t\t}
        \t})
        }

        func TestLater(t *testing.T) { t.Skip("later") }
    """,
}
GO_FAILING = """
    package sum

    import "testing"

    func TestAdd(t *testing.T) {
    \tif Add(1, 2) != 4 {
    \t\tt.Fatal("1 + 2 is not 4")
    \t}
    }
"""

CARGO = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": """
        pub fn add(a: i32, b: i32) -> i32 {
            a + b
        }

        #[cfg(test)]
        mod tests {
            use super::*;

            #[test]
            fn adds() {
                assert_eq!(add(1, 2), 3);
            }

            #[test]
            #[ignore]
            fn later() {}
        }
    """,
}
CARGO_FAILING = """
    pub fn add(a: i32, b: i32) -> i32 {
        a + b
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn adds() {
            assert_eq!(add(1, 2), 4);
        }
    }
"""
