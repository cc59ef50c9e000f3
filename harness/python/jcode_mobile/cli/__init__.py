"""The ``jcode-mobile`` command: a simulator driven from a shell.

- :mod:`.main`: argument parsing, exit codes, one-line errors;
- :mod:`.simulator`: the background simulator process (a real host behind a
  Unix socket) and the commands it answers;
- :mod:`.client`: how the command talks to it;
- :mod:`.checks`: the assertions (pure functions of state, tree and effects);
- :mod:`.oneshot`: ``jcode-mobile run``, a whole session in one process.

docs/SIMULATOR.md shows the workflow.
"""

from .main import main

__all__ = ["main"]
