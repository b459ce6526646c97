"""Hiding a write from change detection, played for real against real git repositories.

Each test first shows the attack's raw effect (git, as the agent's own tools run it, does not
report the write), then that donegate's snapshot sees the write anyway.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from donegate import gitlisting
from donegate.workspace import Snapshot, WorkspaceState, diff
from donegate.workspace import snapshot as snapshot_module
from tests.workspace.conftest import APP, compiled, git, write

EVIL = "import sys\nsys.modules['app'] = None\n"


def changes(before: Snapshot, after: Snapshot) -> list[tuple[str, str]]:
    return [(w.path, w.change) for w in diff(before, after)]


def porcelain(repo: Path, *config: str) -> str:
    """What the agent's own ``git status`` reports (its config, its excludes, its monitor)."""
    return git(repo, *config, "status", "--porcelain", "--untracked-files=all")


# -- ignore rules ------------------------------------------------------------------------------


def test_a_file_hidden_by_info_exclude_is_seen(repo: Path) -> None:
    before = Snapshot.take(repo)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("helper.py\n")
    write(repo, "helper.py", EVIL)
    assert porcelain(repo) == ""  # git does not list it
    assert changes(before, Snapshot.take(repo, previous=before)) == [("helper.py", "added")]


def test_a_self_ignoring_gitignore_does_not_hide_importable_code(repo: Path) -> None:
    before = Snapshot.take(repo)
    write(repo, "src/plugins/.gitignore", "*\n")
    write(repo, "src/plugins/helper.py", EVIL)
    write(repo, "src/plugins/sitecustomize.py", EVIL)
    write(repo, "src/plugins/notes.txt", "noise\n")
    assert porcelain(repo) == ""
    assert changes(before, Snapshot.take(repo, previous=before)) == [
        ("src/plugins/helper.py", "added"),
        ("src/plugins/sitecustomize.py", "added"),
    ]


def test_a_gitignored_pth_file_and_protected_globs_are_seen(repo: Path) -> None:
    before = Snapshot.take(repo, watch=["fixtures/**"])
    write(repo, ".gitignore", "build/\n*.log\n*.pth\nfixtures/\n")
    git(repo, "commit", "-qam", "ignore more")
    before = Snapshot.take(repo, watch=["fixtures/**"])
    write(repo, "evil.pth", "import os; os.environ['X'] = '1'\n")
    write(repo, "fixtures/expected.json", "[]\n")
    assert porcelain(repo) == ""
    after = Snapshot.take(repo, previous=before, watch=["fixtures/**"])
    assert changes(before, after) == [("evil.pth", "added"), ("fixtures/expected.json", "added")]


def test_tracked_code_under_a_default_ignored_directory_is_seen(repo: Path) -> None:
    write(repo, "venv/tool.py", "VALUE = 1\n")
    write(repo, "node_modules/shim.js", "module.exports = 1\n")
    git(repo, "add", "-f", "venv/tool.py", "node_modules/shim.js")
    git(repo, "commit", "-qm", "vendored")
    before = Snapshot.take(repo)
    assert {"venv/tool.py", "node_modules/shim.js"} <= set(before.entries)
    write(repo, "venv/tool.py", "VALUE = 2\n")
    write(repo, "venv/untracked.txt", "noise\n")  # untracked under venv/: still noise
    assert changes(before, Snapshot.take(repo, previous=before)) == [("venv/tool.py", "modified")]
    assert diff(Snapshot.from_head(repo), before) == []  # HEAD's view agrees


# -- git's stat cache and index ----------------------------------------------------------------


def same_size_edit_with_mtime_restored(path: Path) -> None:
    st = path.stat()
    text = path.read_text()
    path.write_text(text.replace("a + b", "a - b"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_same_size_edit_with_the_mtime_put_back_is_seen(repo: Path) -> None:
    git(repo, "config", "core.trustctime", "false")
    git(repo, "config", "core.checkStat", "minimal")
    app = repo / "src" / "app.py"
    os.utime(app, ns=(10**18, 10**18))  # long ago enough not to be racily clean for git
    git(repo, "update-index", "--refresh")
    before = Snapshot.take(repo)
    before = Snapshot(repo, before.taken_at, "git", "sha1", before.entries, 2**62)
    same_size_edit_with_mtime_restored(app)
    assert porcelain(repo) == ""  # git's stat cache says unchanged
    assert changes(before, Snapshot.take(repo, previous=before)) == [("src/app.py", "modified")]


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_index_flags_that_make_git_look_away_do_not_hide_an_edit(repo: Path, flag: str) -> None:
    before = Snapshot.take(repo)
    git(repo, "update-index", flag, "src/app.py")
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    assert porcelain(repo) == ""
    assert changes(before, Snapshot.take(repo, previous=before)) == [("src/app.py", "modified")]


def test_a_forged_index_entry_does_not_hide_an_edit(repo: Path) -> None:
    before = Snapshot.take(repo)
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    old_blob = git(repo, "rev-parse", "HEAD:src/app.py").strip()
    # The index now claims the old blob; the agent commits nothing.
    git(repo, "update-index", "--cacheinfo", f"100644,{old_blob},src/app.py")
    git(repo, "update-index", "--assume-unchanged", "src/app.py")
    assert "src/app.py" not in git(repo, "diff", "--name-only")
    after = Snapshot.take(repo, previous=before)
    assert changes(before, after) == [("src/app.py", "modified")]
    assert after.entries["src/app.py"].digest != old_blob


def test_a_clean_filter_that_shows_git_the_old_content_is_not_run(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "filter-ran"
    original = tmp_path / "original.py"
    shutil.copy(repo / "src" / "app.py", original)
    before = Snapshot.take(repo)
    git(repo, "config", "filter.hide.clean", f"touch {marker}; cat {original}")
    write(repo, ".gitattributes", "src/app.py filter=hide\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    before = Snapshot.take(repo)
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))  # same size: git reads it
    assert porcelain(repo) == ""  # the filter fed git the old bytes
    assert marker.exists()
    marker.unlink()
    after = Snapshot.take(repo, previous=before)
    assert changes(before, after) == [("src/app.py", "modified")]
    assert not marker.exists()


# -- programs named by the repository, and where git looks --------------------------------------


def test_an_fsmonitor_program_is_never_run_and_hides_nothing(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "fsmonitor-ran"
    monitor = tmp_path / "monitor.sh"
    # A v2 monitor that says "nothing changed since your token" and leaves a marker behind.
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\nprintf 'token\\0'\n")
    monitor.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(monitor))
    git(repo, "config", "core.fsmonitorHookVersion", "2")
    git(repo, "config", "core.untrackedCache", "true")
    git(repo, "status")
    assert marker.exists()  # the agent's git runs the agent's program
    marker.unlink()
    state_dir = tmp_path / "state"
    state = WorkspaceState(state_dir, repo, "s1")
    state.take_baseline()
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    assert [w.path for w in state.writes_since_verified()] == ["src/app.py"]
    assert Snapshot.from_head(repo).entries
    assert gitlisting.has_head(repo)
    assert not marker.exists()


def test_no_program_named_by_the_repository_config_is_run(repo: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()

    def program(name: str) -> str:
        script = tmp_path / f"{name}.sh"
        script.write_text(f'#!/bin/sh\ntouch {markers / name}\ncat "$@" 2>/dev/null\n')
        script.chmod(0o755)
        return str(script)

    settings = {
        "core.fsmonitor": program("fsmonitor"),
        "core.pager": program("pager"),
        "core.sshCommand": program("ssh"),
        "core.hooksPath": str(tmp_path),
        "credential.helper": program("credential"),
        "diff.external": program("external"),
        "diff.x.textconv": program("textconv"),
        "filter.x.clean": program("clean"),
        "filter.x.smudge": program("smudge"),
        "filter.x.process": program("process"),
        "core.alternateRefsCommand": program("alternate"),
    }
    (tmp_path / "post-index-change").write_text(f"#!/bin/sh\ntouch {markers / 'hook'}\n")
    (tmp_path / "post-index-change").chmod(0o755)
    for key, value in settings.items():
        git(repo, "config", key, value)
    write(repo, ".gitattributes", "* diff=x filter=x\n")
    git(repo, "-c", "filter.x.process=", "-c", "filter.x.clean=cat", "add", ".gitattributes")
    git(repo, "-c", "filter.x.process=", "-c", "filter.x.clean=cat", "commit", "-qm", "attrs")
    git(repo, "-c", "filter.x.process=", "-c", "filter.x.clean=cat", "status")
    assert (markers / "fsmonitor").exists()  # the agent's git runs the agent's programs
    for marker in markers.iterdir():
        marker.unlink()
    state = WorkspaceState(tmp_path / "state", repo, "s1")
    state.baseline()  # HEAD's tree (ls-tree)
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    writes = state.classified_since_verified()  # listing, walk, old text from git (cat-file)
    assert [(c.write.path, c.kind) for c in writes] == [("src/app.py", "source")]
    assert gitlisting.has_head(repo)
    assert gitlisting.run(repo, "show", "HEAD:.gitattributes") is not None  # the pinned config
    assert sorted(p.name for p in markers.iterdir()) == []


def test_core_worktree_pointed_at_a_decoy_is_not_followed(repo: Path, tmp_path: Path) -> None:
    decoy = tmp_path / "decoy"
    shutil.copytree(repo, decoy, ignore=shutil.ignore_patterns(".git"))
    before = Snapshot.take(repo)
    git(repo, "config", "core.worktree", str(decoy))
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    assert git(repo, "rev-parse", "--show-toplevel").strip() == str(decoy)
    assert porcelain(repo) == ""
    gitlisting.toplevel.cache_clear()
    assert gitlisting.toplevel(repo / "src") == repo
    assert changes(before, Snapshot.take(repo, previous=before)) == [("src/app.py", "modified")]


def test_git_variables_in_the_environment_are_not_honoured(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = tmp_path / "decoy"
    shutil.copytree(repo, decoy)
    before = Snapshot.take(repo)
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(decoy))
    monkeypatch.setenv("GIT_INDEX_FILE", str(decoy / ".git" / "index"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.parent))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.worktree")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(decoy))
    assert git(repo, "status", "--porcelain") == ""  # git, so told, looks at the decoy
    assert changes(before, Snapshot.take(repo, previous=before)) == [("src/app.py", "modified")]


def test_a_repository_owned_by_another_user_is_still_listed(repo: Path) -> None:
    before = Snapshot.take(repo)
    shutil.chown(repo, user="nobody")
    for path in repo.rglob("*"):
        shutil.chown(path, user="nobody")
    if os.geteuid() != 0 or porcelain_fails(repo) is False:
        pytest.skip("git trusts this repository here: nothing to show")
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    after = Snapshot.take(repo, previous=before)
    assert after.origin == "git"
    assert changes(before, after) == [("src/app.py", "modified")]


def porcelain_fails(repo: Path) -> bool:
    done = subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    return done.returncode != 0 and b"dubious ownership" in done.stderr


def test_a_gitfile_pointing_at_a_decoy_repository_hides_nothing(repo: Path, tmp_path: Path) -> None:
    before = Snapshot.take(repo)
    decoy = tmp_path / "decoy"
    shutil.copytree(repo, decoy)
    write(decoy, "src/app.py", APP.replace("a + b", "a * b"))
    write(decoy, "src/extra.py", EVIL)
    git(decoy, "add", "-A")
    git(decoy, "commit", "-qm", "the decoy already has the edits")
    shutil.rmtree(repo / ".git")
    (repo / ".git").write_text(f"gitdir: {decoy / '.git'}\n")
    write(repo, "src/app.py", APP.replace("a + b", "a * b"))
    write(repo, "src/extra.py", EVIL)
    assert porcelain(repo) == ""
    assert changes(before, Snapshot.take(repo, previous=before)) == [
        ("src/app.py", "modified"),
        ("src/extra.py", "added"),
    ]


# -- nested repositories and submodules --------------------------------------------------------


def test_a_nested_repository_is_descended(repo: Path) -> None:
    before = Snapshot.take(repo)
    git(repo, "init", "-q", "vendor")
    write(repo, "vendor/helper.py", EVIL)
    assert porcelain(repo) == "?? vendor/\n"  # one opaque line, no file
    after = Snapshot.take(repo, previous=before)
    assert changes(before, after) == [("vendor/helper.py", "added")]
    write(repo, "vendor/helper.py", EVIL + "# again\n")
    assert changes(after, Snapshot.take(repo, previous=after)) == [("vendor/helper.py", "modified")]


def test_a_submodule_is_descended(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    write(lib, "lib.py", "VALUE = 1\n")
    git(lib, "add", "-A")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "ext")
    git(repo, "commit", "-qm", "submodule")
    before = Snapshot.take(repo)
    assert "ext/lib.py" in before.entries
    assert diff(Snapshot.from_head(repo), before) == []
    write(repo, "ext/lib.py", "VALUE = 2\n")
    assert porcelain(repo, "-c", "diff.ignoreSubmodules=all") == ""
    assert changes(before, Snapshot.take(repo, previous=before)) == [("ext/lib.py", "modified")]


# -- symlinks ---------------------------------------------------------------------------------


def test_a_symlink_leaving_the_tree_carries_its_targets_content(repo: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "outside/helper.py", "VALUE = 1\n")
    os.symlink(outside, repo / "src" / "helper.py")
    before = Snapshot.take(repo)
    assert before.entries["src/helper.py"].digest.startswith("link:")
    state = WorkspaceState(tmp_path / "state", repo, "s1")
    state.mark_verified(before)
    write(tmp_path, "outside/helper.py", "VALUE = 2\n")  # the link itself is untouched
    assert changes(before, Snapshot.take(repo, previous=before)) == [("src/helper.py", "modified")]


def test_files_reached_through_a_symlinked_directory_are_seen(repo: Path, tmp_path: Path) -> None:
    write(tmp_path, "outside/pkg/helper.py", "VALUE = 1\n")
    os.symlink(tmp_path / "outside" / "pkg", repo / "pkg")
    before = Snapshot.take(repo)
    assert "pkg/helper.py" in before.entries
    assert porcelain(repo) == "?? pkg\n"  # git sees one symlink, not the code behind it
    write(tmp_path, "outside/pkg/helper.py", "VALUE = 2\n")
    write(tmp_path, "outside/pkg/conftest.py", EVIL)
    assert changes(before, Snapshot.take(repo, previous=before)) == [
        ("pkg/conftest.py", "added"),
        ("pkg/helper.py", "modified"),
    ]


def test_a_symlinked_directory_too_large_to_read_through_cannot_be_verified(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "LINKED_LIMIT", 3)
    for n in range(5):
        write(tmp_path, f"big/m{n}.py", "x = 1\n")
    state = WorkspaceState(tmp_path / "state", repo, "s1")
    state.take_baseline()
    os.symlink(tmp_path / "big", repo / "big")
    [classified] = state.classified_since_verified()
    assert classified.write.path == "big"
    assert "unverifiable" in classified.flags
    state.mark_verified(state.snapshot())
    assert state.writes_since_verified() != []  # never settles: the stop cannot verify


def test_a_symlink_inside_the_tree_is_its_target_text(repo: Path) -> None:
    os.symlink("app.py", repo / "src" / "alias.py")
    os.symlink("src", repo / "source")
    snap = Snapshot.take(repo)
    assert snap.entries["src/alias.py"].kind == "symlink"
    assert not snap.entries["src/alias.py"].digest.startswith("link:")
    assert "source/app.py" not in snap.entries  # seen once, at its own path
    assert snap.entries["source"].kind == "symlink"


# -- bytecode ---------------------------------------------------------------------------------


def test_planted_bytecode_is_seen_and_real_bytecode_is_noise(repo: Path, tmp_path: Path) -> None:
    before = Snapshot.take(repo)
    compiled(repo, "src/app.py")  # what Python itself writes: noise
    assert changes(before, Snapshot.take(repo, previous=before)) == []
    # Bytecode of another source under the real source's name, newer than the source.
    other = write(tmp_path, "other/app.py", APP.replace("a + b", "a * b") + "\n\n# pad\n")
    pyc = compiled(repo, "src/app.py")
    subprocess.run(["python3", "-m", "py_compile", str(other)], check=True)
    planted = next((tmp_path / "other" / "__pycache__").glob("app.*.pyc"))
    shutil.copy(planted, pyc)
    # A sourceless module, importable where it lies, and bytecode with no source at all.
    shutil.copy(planted, repo / "src" / "helper.pyc")
    shutil.copy(planted, pyc.with_name("ghost.cpython-311.pyc"))
    (repo / ".git" / "info" / "exclude").write_text("*.pyc\n")
    assert porcelain(repo) == ""
    after = Snapshot.take(repo, previous=before)
    assert changes(before, after) == [
        ("src/__pycache__/app.cpython-311.pyc", "added"),
        ("src/__pycache__/ghost.cpython-311.pyc", "added"),
        ("src/helper.pyc", "added"),
    ]


# -- files that are not files, names that are not UTF-8 ---------------------------------------


def test_special_files_are_recorded_by_kind_and_never_opened(repo: Path) -> None:
    before = Snapshot.take(repo)
    os.mkfifo(repo / "src" / "pipe.py")  # opening it for reading would hang
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(repo / "src" / "sock.py"))
    try:
        after = Snapshot.take(repo, previous=before)
    finally:
        server.close()
    assert after.entries["src/pipe.py"].kind == "fifo"
    assert after.entries["src/pipe.py"].digest == "special:fifo"
    assert after.entries["src/sock.py"].kind == "socket"
    state = WorkspaceState(repo.parent / "state", repo, "s1")
    state.mark_verified(before)
    flags = {c.write.path: c.flags for c in state.classify_writes(diff(before, after), after)}
    assert flags == {"src/pipe.py": ("special-file",), "src/sock.py": ("special-file",)}
    assert changes(before, after) == [("src/pipe.py", "added"), ("src/sock.py", "added")]


def test_a_tracked_file_swapped_for_a_fifo_is_a_write_not_a_hang(repo: Path) -> None:
    before = Snapshot.take(repo)
    (repo / "src" / "app.py").unlink()
    os.mkfifo(repo / "src" / "app.py")
    after = Snapshot.take(repo, previous=before)
    assert after.entries["src/app.py"].digest == "special:fifo"
    assert changes(before, after) == [("src/app.py", "modified")]


def test_a_device_node_is_recorded_as_such(repo: Path) -> None:
    try:
        os.mknod(repo / "null.py", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    entry = Snapshot.take(repo).entries["null.py"]
    assert (entry.kind, entry.digest) == ("device", f"special:device:{os.makedev(1, 3)}")


def test_a_file_name_that_is_not_utf8_is_carried_faithfully(repo: Path, tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")
    state = WorkspaceState(tmp_path / "state", repo, "s1")
    state.take_baseline()
    (repo / name).write_bytes(b"VALUE = 1\n")
    current = state.snapshot()
    again = Snapshot.from_json(json.loads(current.dumps()))
    assert again == current
    assert again.fingerprint == current.fingerprint
    [classified] = state.classified_since_verified(current=current)
    assert (classified.write.path, classified.write.change, classified.kind) == (
        name,
        "added",
        "source",
    )
    assert os.fsencode(classified.write.path) == b"caf\xe9.py"
    json.dumps(classified.write.to_json())  # no crash on the way to a receipt
    state.mark_verified(current)
    (repo / name).write_bytes(b"VALUE = 2\n")
    [modified] = state.classified_since_verified()
    assert (modified.write.change, modified.kind) == ("modified", "source")
