"""The tool contract is pinned: ``tools/list`` (names, descriptions, input and output schemas) as a
real client sees it must equal the snapshot, so any contract change is a visible diff.

To accept a deliberate change: ``HOPRAG_UPDATE_SNAPSHOT=1 pytest tests/test_tool_contract.py``,
then review the diff of ``tests/snapshots/tools_list.json`` and update the tools table in ``docs/tools.md``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp_client import http_client, run

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"


async def _listed(url: str) -> list[dict]:
    async with http_client(url, "engineering", mode="legacy") as client:
        tools = await client.list_tools()
    return [{"name": t.name, "description": t.description, "inputSchema": t.input_schema,
             "outputSchema": t.output_schema,
             "annotations": t.annotations.model_dump(exclude_none=True) if t.annotations else None}
            for t in sorted(tools.tools, key=lambda t: t.name)]


def test_tools_list_matches_the_pinned_contract(http_server):
    listed = json.dumps(run(_listed(http_server.url)), indent=2, sort_keys=True) + "\n"
    if os.environ.get("HOPRAG_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(listed, encoding="utf-8")
    assert listed == SNAPSHOT.read_text(encoding="utf-8"), "tools/list changed: review and update the snapshot"


def test_the_snapshot_names_every_documented_tool():
    """Negative control on the snapshot itself: it is not empty and holds every tool the docs' tools table lists."""
    pinned = {t["name"] for t in json.loads(SNAPSHOT.read_text(encoding="utf-8"))}
    page = (Path(__file__).parent.parent / "docs" / "tools.md").read_text(encoding="utf-8")
    assert pinned and all(f"| `{name}` |" in page for name in pinned)


def test_fetch_metadata_is_typed_provenance_plus_the_documents_own_keys():
    """``fetch``'s ``metadata``: trusted and updated as before, the source file's ``path`` and every other
    front-matter key as one JSON object (``front_matter``), each always present."""
    fetch = next(t for t in json.loads(SNAPSHOT.read_text(encoding="utf-8")) if t["name"] == "fetch")
    metadata = fetch["outputSchema"]["$defs"]["DocMetadata"]
    assert metadata["required"] == ["trusted", "updated", "path", "front_matter"]
    assert metadata["properties"]["front_matter"]["type"] == "object"
    assert {"string", "null"} == {branch["type"] for branch in metadata["properties"]["path"]["anyOf"]}


def test_every_input_schema_is_closed_and_every_optional_argument_nullable():
    """What OpenAI strict mode needs to keep a tool strict: objects closed (``additionalProperties: false``),
    and -- as it makes every argument required -- each optional one nullable with a null default."""
    for tool in json.loads(SNAPSHOT.read_text(encoding="utf-8")):
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool["name"]
        for name, prop in schema["properties"].items():
            if name in schema.get("required", []):
                assert "default" not in prop and prop.get("type") != "null", (tool["name"], name)
            else:
                assert prop["default"] is None, (tool["name"], name)
                assert prop["type"][-1] == "null" and "anyOf" not in prop, (tool["name"], name)


def test_descriptions_are_single_paragraphs_and_name_the_trust_mark():
    """No source indentation or hard line breaks; every tool returning document text says what its mark means."""
    tools = {t["name"]: t for t in json.loads(SNAPSHOT.read_text(encoding="utf-8"))}
    for name, tool in tools.items():
        assert "\n" not in tool["description"] and "  " not in tool["description"], name
    for name in ("search", "fetch", "graph_hops"):
        assert "untrusted_text" in tools[name]["description"], name
    assert "withheld" in tools["grep"]["description"]
