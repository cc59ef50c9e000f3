"""Python harness of the jcode mobile core.

- :mod:`jcode_mobile.binding`: the ctypes binding (:class:`App`, errors, versions, tree helpers)
- :mod:`jcode_mobile.library`: the loaded library (loading it, its answers, versions and schema), under both
- :mod:`jcode_mobile.schema`: the runtime schema put to work (output checks, typed helpers)
- :mod:`jcode_mobile.fake_gateway`: a fake jcode server and a host that executes effects
- :mod:`jcode_mobile.mirror`: a copy of the state kept current from the change feed
- :mod:`jcode_mobile.tree_mirror`: a copy of the semantic tree kept current from its operations
- :mod:`jcode_mobile.render`: the semantic tree as plain text
- :mod:`jcode_mobile.demo`: ``python -m jcode_mobile.demo``, a scripted session
"""

from .binding import (
    App,
    JcodeMobileError,
    abi_version,
    encode_input,
    find_node,
    iter_nodes,
    last_error,
    library_path,
    load_library,
    version,
)

__all__ = [
    "App",
    "JcodeMobileError",
    "abi_version",
    "encode_input",
    "find_node",
    "iter_nodes",
    "last_error",
    "library_path",
    "load_library",
    "version",
]
