"""Tests marked ``xdist_group`` run on one worker (``--dist loadgroup``): the real
servers, which start once, and the tests that read one shared run. xdist names a
grouped test ``<node id>@<group>`` by setting the node id where pytest up to 8 keeps
it; pytest 9 keeps it elsewhere, so every grouped test would go to any worker. The name
xdist chose is set again where this pytest reads it."""

from __future__ import annotations

import pytest

try:
    from _pytest.nodeid import NodeId
except ImportError:  # pytest before 9: xdist's name is the node id already
    NodeId = None  # type: ignore[assignment,misc]


@pytest.hookimpl(trylast=True)  # after xdist has named the grouped tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if NodeId is None:
        return
    for item in items:
        named = vars(item).get("_nodeid")
        if isinstance(named, str) and named != item.nodeid:
            item._id = NodeId.parse(named)
