"""The gate over a workspace, for any host: all that the host adapters' hook calls reach.

``on_start`` (a session starts, or the person sends a prompt), ``on_tool_use`` (a tool reported
what it wrote or ran) and ``on_stop`` (the agent wants to stop). Each imports what its event
needs, when it needs it: a tool call's journal entry stays cheap, and a stop that changed nothing
never imports the claim models or the collectors.
"""

from __future__ import annotations

from pathlib import Path

from donegate.session.event import HookAnswer, HookEvent, ToolUse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from donegate.session.stop import StopResult

__all__ = ["HookAnswer", "HookEvent", "ToolUse", "on_start", "on_stop", "on_tool_use"]


def on_stop(event: HookEvent, state_dir: Path) -> StopResult:
    """Decide a stop: the whole pipeline (:func:`donegate.session.stop.decide_stop`).

    A subagent's stop is gated under its own session key (``<session>#agent-<id>``), with its
    own budgets, so it never spends the parent's; it starts from the parent's root, pinned
    configuration and baseline, and the parent's own stop is still judged on every write.
    """
    from donegate.session.layout import Layout, subagent_session
    from donegate.session.stop import decide_stop

    if event.subagent is not None:
        event = event._replace(session_id=subagent_session(event.session_id, event.subagent))
    return decide_stop(event, Layout(state_dir))


def on_start(event: HookEvent, state_dir: Path) -> str | None:
    """Session start or a new prompt: pin the root and configuration, take the baseline; what
    the person should hear (the tree moved after a verified stop; files that judge the agent
    changed while it did not work, now counted as the person's), if anything.

    A later prompt in the same session keeps the first baseline: the agent's unverified writes
    from an earlier turn stay writes.
    """
    from donegate.session.layout import Layout, locked
    from donegate.session.workspace import Workspace

    layout = Layout(state_dir)
    with locked(layout.lock(event.session_id)):
        space = Workspace.open(layout, event)
        settings = space.settings()
        _, changed = space.look()
        # A host that hands the agent the reason of a block as its next prompt: no person spoke.
        if event.prompt and not space.is_sent_back(event.prompt):
            space.remember_prompt(event.prompt)
            space.open_turn()
    if not changed:
        return None
    from donegate.session import drift, handover

    said = [drift.note(state_dir, space.root, changed), handover.note(settings, changed)]
    return "\n".join(s for s in said if s) or None


def on_tool_use(event: HookEvent, state_dir: Path) -> str | None:
    """Journal what a tool reported writing or running (the snapshot stays the truth); what the
    person should hear (the agent called donegate itself: :mod:`donegate.session.boxed`)."""
    from donegate.session.layout import Layout
    from donegate.session.workspace import Workspace
    from donegate.workspace.journal import FILE_NAME, Journal

    use = event.tool_use
    if use is None:
        return None
    layout = Layout(state_dir)
    space = Workspace.open(layout, event)
    # The journal's file is all a tool call needs: not the settings (a pin, donegate.toml, and
    # the authorship record when the file differs), which every tool call would otherwise read.
    # A subagent's call is its session's (its parent's stop judges every write) and its own.
    sessions = [event.session_id]
    if event.subagent is not None:
        from donegate.session.layout import subagent_session

        sessions.append(subagent_session(event.session_id, event.subagent))
    for session in sessions:
        journal = Journal(layout.session(space.root, session) / FILE_NAME)
        for path in use.paths or (None,):
            journal.record(use.tool, path=_relative(path, space.root), command=use.command)
    return _called_donegate(use, [layout.session(space.root, s) for s in sessions])


def _called_donegate(use: ToolUse, sessions: list[Path]) -> str | None:
    from donegate.session import boxed

    how = boxed.seen(use)
    if how is None:
        return None
    told = [boxed.record(session, use, how) for session in sessions]
    return told[0]


def _relative(path: str | None, root: Path) -> str | None:
    if path is None:
        return None
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            return candidate.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return path
    return candidate.as_posix()
