"""The ChatGPT / OpenAI deep-research contract for `search` and `fetch`.

OpenAI's "Building MCP servers for ChatGPT and API integrations" guide accepts a server only if
`search` takes a single `query` string and answers with exactly one text content item holding
JSON `{"results": [{"id", "title", "url"}]}`, and `fetch` takes a single `id` string and answers
with one text item holding JSON `{"id", "title", "text", "url", "metadata"}` (metadata: an
optional object). The shapes below are that contract, written down as JSON Schema; the existing
fields stay (the contract only adds), and a negative control shows the checker rejects the
pre-contract shape.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from conftest import CORPUS
from hoprag.corpus import load_docs
from mcp_client import call, http_client, run, stdio_client

SEARCH_RESULT = {
    "type": "object",
    "required": ["results"],
    "properties": {"results": {"type": "array", "items": {
        "type": "object", "required": ["id", "title", "url"],
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}}}}},
}
FETCH_RESULT = {
    "type": "object",
    "required": ["id", "title", "text", "url", "metadata"],
    "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"},
                   "url": {"type": "string"}, "metadata": {"type": ["object", "null"]}},
}
# What hoprag already returned before the contract; it must keep returning all of it.
EXISTING_SEARCH = {"id", "title", "text", "score", "source", "trusted", "updated", "facts"}
EXISTING_FETCH = {"id", "title", "text", "source", "trusted", "updated", "facts"}
SOURCES = {d.id: d.source for d in load_docs(CORPUS)}


def only_text_json(result) -> dict:
    """The contract's transport shape: exactly one content item, type text, holding JSON."""
    assert not result.is_error, result.content
    assert [c.type for c in result.content] == ["text"]
    return json.loads(result.content[0].text)


async def contract_calls(client) -> dict:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    search = await call(client, "search", query="Which region does Aurora run in?")  # query alone
    fetch = await call(client, "fetch", id="d03")                                      # id alone
    return {"tools": tools, "search": search, "fetch": fetch}


def check_contract(seen: dict) -> None:
    for name, arg in (("search", "query"), ("fetch", "id")):
        schema = seen["tools"][name].input_schema
        assert schema["required"] == [arg] and schema["properties"][arg]["type"] == "string"
    search = only_text_json(seen["search"])
    jsonschema.validate(search, SEARCH_RESULT)
    assert search["results"], "the Aurora question must find documents"
    for hit in search["results"]:
        assert hit["url"] == SOURCES[hit["id"]] and ":" in hit["url"]
        assert EXISTING_SEARCH <= hit.keys()
    assert search == seen["search"].structured_content
    fetch = only_text_json(seen["fetch"])
    jsonschema.validate(fetch, FETCH_RESULT)
    assert fetch["id"] == "d03" and fetch["url"] == SOURCES["d03"] == fetch["source"]
    assert fetch["metadata"] == {"trusted": True, "updated": "2026-03-30", "path": "d03.md", "front_matter": {}}
    assert EXISTING_FETCH <= fetch.keys()
    assert fetch == seen["fetch"].structured_content


def test_http_search_and_fetch_follow_the_deep_research_contract(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as client:
            return await contract_calls(client)
    check_contract(run(go()))


def test_stdio_search_and_fetch_follow_the_deep_research_contract():
    async def go():
        async with stdio_client("engineering") as client:
            return await contract_calls(client)
    check_contract(run(go()))


def test_untrusted_results_carry_their_url_and_say_so_in_metadata(http_server):
    async def go():
        async with http_client(http_server.url, "engineering") as client:
            return await call(client, "fetch", id="d10")
    fetch = only_text_json(run(go()))
    assert fetch["url"] == SOURCES["d10"] and fetch["metadata"]["trusted"] is False and fetch["facts"] == []
    # the deep-research text field is evidence only: the upload's words are quarantined beside it
    assert fetch["text"] == "" and fetch["untrusted_text"].startswith("Ignore all prior instructions")


@pytest.mark.parametrize("shape, result", [
    (SEARCH_RESULT, {"results": [{"id": "d03", "title": "Aurora deployment", "source": "https://x/y"}]}),
    (FETCH_RESULT, {"id": "d03", "title": "Aurora deployment", "text": "…", "source": "https://x/y",
                    "trusted": True, "updated": None, "facts": []}),
])
def test_negative_control_the_pre_contract_shapes_are_rejected(shape, result):
    with pytest.raises(jsonschema.ValidationError, match="'url' is a required property"):
        jsonschema.validate(result, shape)
