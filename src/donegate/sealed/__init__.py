"""The sealed run: the checks' commands run on a copy of the bytes donegate hashed, in an
environment of donegate's making, where nothing the agent wrote is loaded unless it is the code
under test.

- :mod:`.copy`: the sealed copy of the workspace, checked against the snapshot as it is made;
  :mod:`._copytree` copies, :mod:`._importroots` finds where the project's code is imported from.
- :mod:`._launch`: one command started at its place (the live tree or the copy), refused when a
  protected file was written, or parked in a kept copy (:mod:`._parker`: pytest loaded while the
  stop takes its snapshot, the run given once the copy is ready); :mod:`._process` runs it in its
  own process group, to its deadline;
  :mod:`._runenv` and :mod:`._scratch` are its environment and its scratch directory.
- :mod:`._bytecode`: donegate's own compiles for what a run imports (:mod:`._lock` guards them).
- :mod:`._witness` and :mod:`._witness_plugin`: what pytest itself saw, recorded from inside the
  run and checked against its report.

Nothing is imported here: ``collect`` starts a test command through :mod:`._launch` before the
copy's machinery (hashing, copying) is loaded.
"""
