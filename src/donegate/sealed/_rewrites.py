"""pytest's rewrite of a run's test modules, made by the run's own pytest when it is not donegate's.

A run reads bytecode only from donegate's store (see :mod:`donegate.sealed._bytecode`), and the
store keeps only what donegate compiled itself: never a ``.pyc`` the run wrote, which the code
under test could have forged (a test module with its assertions taken out, read at the next
run). Test modules are compiled by pytest's assertion rewriter, whose output depends on its
version; donegate's own pytest compiles them when it is the run's version. A project pinning
another pytest (Flask's suite: 23 modules, half a second to rewrite) paid that at every stop,
while the same command run directly reads its cache.

So, after a run that counted, the run's own pytest rewrites what the run had to rewrite, in a
process of donegate's: the run's interpreter with ``-I -S`` (no ``site``, so no ``.pth`` line
and no ``sitecustomize`` runs; no working directory on the path, so nothing of the tree is
imported), only the environment's ``site-packages`` added, in the checks' sandbox (nothing
writable, no network). It imports pytest's own package and its dependencies, which the stop's
environment digest vouches for (an edit there voids the run, and a void run learns nothing);
it reads each source, and prints its digest with the bytecode pytest would write for it.
donegate keeps that bytecode only for the bytes it reads itself, under their digest.

Only where the machine can make the sandbox, and only for a kept copy (see ``Place.lasting``):
elsewhere the store keeps nothing of a run's tree.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from donegate.record import Record
from donegate.sealed import _isolation

# Run as ``python -I -S -c``: reads source paths, one a line, from standard input; prints for
# each a JSON line [path, pytest version, sha256 of the bytes read, the .pyc pytest would write,
# in hex], or [path, null] when it cannot.
_CHILD = r"""
import ast, hashlib, importlib.util, inspect, io, json, os, sys, sysconfig
home = os.path.dirname(os.path.dirname(sys.executable))
venv = os.path.isfile(os.path.join(home, "pyvenv.cfg"))  # without site, sys.prefix is the base's
sys.path.append(sysconfig.get_path("purelib", vars={"base": home} if venv else None))
from _pytest._version import version
from _pytest.assertion import rewrite
takes_hash = "source_hash" in inspect.signature(rewrite._write_pyc_fp).parameters
for line in sys.stdin:
    path = line.rstrip("\n")
    try:
        with open(path, "rb") as f:
            data = f.read()
            st = os.fstat(f.fileno())
        tree = ast.parse(data, filename=path)
        rewrite.rewrite_asserts(tree, data, path, None)
        code = compile(tree, path, "exec", dont_inherit=True)
        out = io.BytesIO()
        rewrite._write_pyc_fp(out, importlib.util.source_hash(data) if takes_hash else st, code)
        said = [path, version, hashlib.sha256(data).hexdigest(), out.getvalue().hex()]
    except Exception:
        said = [path, None]
    print(json.dumps(said), flush=True)
"""


class Rewritten(Record):
    """One test module as the run's pytest compiles it: the source, pytest's version, the
    sha256 of the bytes it read, and the ``.pyc`` it would write."""

    source: str
    version: str
    digest: str
    pyc: bytes


def interpreter(argv: Sequence[str], env: dict[str, str], cwd: Path) -> str | None:
    """The Python a run's command starts: itself, or the one its ``#!`` line names; None for
    anything else (a shim, ``make``, a shell command)."""
    from donegate.workspace.interpreter import _head, _python_named, _shebang_python

    program = _isolation.program(argv[0], env.get("PATH"), cwd) if argv else None
    if program is None:
        return None
    if _python_named(Path(program).name) and not _head(Path(program)).startswith(b"#!"):
        return program
    named = _shebang_python(_head(Path(program)))
    if named is None or not os.path.isabs(named):
        return None
    return named if not _head(Path(named)).startswith(b"#!") else None


def rewritten(
    python: str, sources: Sequence[str], visible: Sequence[Path], timeout_s: float
) -> Iterator[Rewritten]:
    """What ``python``'s pytest makes of ``sources``, for as many as it gets through within
    ``timeout_s``; nothing where the checks' sandbox cannot be made."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8"}
    argv = [python, "-I", "-S", "-c", _CHILD]
    boxed = _isolation.wrap(argv, _isolation.Isolation(), [], visible, env, Path("/"))
    if boxed.by is None:
        return
    try:
        child = subprocess.Popen(
            boxed.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd="/",
        )
    except OSError:
        return
    text = "".join(f"{s}\n" for s in sources if "\n" not in s).encode()
    try:
        out, _ = child.communicate(text, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()  # what it printed before: whole lines count, others not
    for line in out.splitlines():
        found = _read(line)
        if found is not None and found.source in sources:
            yield found


def _read(line: bytes) -> Rewritten | None:
    try:
        said = json.loads(line)
        source, version, digest, pyc = said
        if not all(isinstance(x, str) for x in said):
            return None
        return Rewritten(source, version, digest, bytes.fromhex(pyc))
    except (ValueError, TypeError):
        return None
