"""Checks the emulator's Blockfrost answers against Blockfrost's official schema: the
json-schema.json of npm @blockfrost/openapi (tools/node_modules/@blockfrost/openapi), one
schema per path and status. OpenAPI 3.0's `nullable: true` becomes JSON Schema's
`"type": [T, "null"]` before validating with the `jsonschema` package."""

import json
from pathlib import Path

import jsonschema

DEFAULT_SCHEMA = Path(__file__).resolve().parent.parent / "node_modules/@blockfrost/openapi/json-schema.json"


def _nullable_to_json_schema(node):
    if isinstance(node, list):
        return [_nullable_to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _nullable_to_json_schema(v) for k, v in node.items()}
    if node.pop("nullable", False):
        if "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            node["type"] = types + ["null"]
        if "enum" in node:
            node["enum"] = list(node["enum"]) + [None]
        if "type" not in node and "enum" not in node:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


class ResponseValidator:
    def __init__(self, schema_path: Path = DEFAULT_SCHEMA):
        self.spec = json.loads(Path(schema_path).read_text())
        self._validators: dict = {}

    def _validator(self, template: str, status: int):
        key = (template, status)
        if key not in self._validators:
            schema = self.spec.get(template, {}).get("response", {}).get(str(status))
            self._validators[key] = None if schema is None else jsonschema.Draft7Validator(_nullable_to_json_schema(schema))
        return self._validators[key]

    def check(self, template: str | None, status: int, body) -> str | None:
        """None when the body validates (or the spec has no schema for it), else the error."""
        if template is None:
            return None
        if template not in self.spec:
            return f"path {template} is not in the Blockfrost spec"
        validator = self._validator(template, status)
        if validator is None:
            return None
        error = next(iter(sorted(validator.iter_errors(body), key=lambda e: list(e.path))), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"{where or '(root)'}: {error.message}"[:500]
