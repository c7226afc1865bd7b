"""Local stand-ins for a Gemini endpoint and an OpenAI-compatible one: validate every request, replay scripted turns.

Both speak the real wire format (the google-genai client and LiteLLM talk to them unmodified
through a base-URL override) on 127.0.0.1 and record each problem a real service would reject
or mis-handle. A turn is decided by a *script*: per role, a function of the request as it
arrived on the wire. The default for every role is the offline policy model fed only that
wire request, so a run that answers proves the request carried every bit of state the role
decides from; scenarios override single roles to misbehave.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from agents.hoprag_agent.offline_model import HopragPolicyLlm

ROLE = re.compile(r'internal name is "(\w+)"')

#: The OpenAPI 3.0 subset the Gemini API documents for ``FunctionDeclaration.parameters`` (Schema).
GEMINI_SCHEMA_KEYS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
                      "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
                      "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
GEMINI_BODY_KEYS = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings",
                    "cachedContent"}
FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
PART_KINDS = {"text", "functionCall", "functionResponse", "inlineData", "fileData", "executableCode",
              "codeExecutionResult"}


@dataclass
class Wire:
    """One model request as it arrived, reduced to what a role decides from."""

    role: str
    system: str
    contents: list[types.Content]
    tools: list[str]
    body: dict[str, Any]


#: A scripted turn: parts (``types.Part``), or a raw Gemini candidate dict (e.g. a MALFORMED_FUNCTION_CALL).
Turn = list[types.Part] | dict[str, Any]
Script = dict[str, Callable[[Wire], Turn]]


def offline_turn(wire: Wire) -> list[types.Part]:
    """What the offline policy model does with exactly this wire request."""
    request = LlmRequest.model_construct(
        model="hoprag-offline", contents=wire.contents,
        config=types.GenerateContentConfig(system_instruction=wire.system, labels={"adk_agent_name": wire.role}),
        tools_dict={name: None for name in wire.tools})

    async def first() -> types.Content:
        async for response in HopragPolicyLlm().generate_content_async(request):
            return response.content
        raise AssertionError("the offline model yielded nothing")

    return list(asyncio.run(first()).parts or [])


def call(name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def text(value: str) -> types.Part:
    return types.Part(text=value)


def responses(wire: Wire, name: str | None = None) -> list[dict[str, Any]]:
    """Every function response the request carries (optionally of one tool), oldest first."""
    return [p.function_response.response or {} for c in wire.contents for p in (c.parts or [])
            if p.function_response and (name is None or p.function_response.name == name)]


def last_is_response(wire: Wire) -> bool:
    return bool(wire.contents) and any(p.function_response for p in wire.contents[-1].parts or [])


class _Fake:
    """A threaded HTTP server on 127.0.0.1:0 that validates and answers JSON POSTs."""

    def __init__(self, script: Script | None = None):
        self.script = script or {}
        self.requests: list[Wire] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                status, answer = fake._handle(self.path, dict(self.headers), body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "_Fake":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _decide(self, wire: Wire) -> Turn:
        with self._lock:
            self.requests.append(wire)
        return self.script.get(wire.role, offline_turn)(wire)

    def roles(self) -> list[str]:
        return [w.role for w in self.requests]

    def _handle(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError


# --------------------------------------------------------------------------- Gemini


def gemini_schema_problems(schema: Any, where: str) -> list[str]:
    """Where ``schema`` leaves the Schema subset the Gemini API accepts for function parameters."""
    if not isinstance(schema, dict):
        return [f"{where}: schema must be an object"]
    schema = {_camel(k): v for k, v in schema.items()}
    problems = [f"{where}: field {k!r} is not in Gemini's Schema subset" for k in schema if k not in GEMINI_SCHEMA_KEYS]
    kind = schema.get("type")
    if kind is not None and kind not in GEMINI_TYPES:
        problems.append(f"{where}: type {kind!r} is not a Gemini Type")
    if kind is None and "anyOf" not in schema:
        problems.append(f"{where}: no type")
    for name, sub in (schema.get("properties") or {}).items():
        problems += gemini_schema_problems(sub, f"{where}.properties.{name}")
    if "items" in schema:
        problems += gemini_schema_problems(schema["items"], f"{where}.items")
    for i, sub in enumerate(schema.get("anyOf") or []):
        problems += gemini_schema_problems(sub, f"{where}.anyOf[{i}]")
    missing = set(schema.get("required") or []) - set(schema.get("properties") or {})
    if missing:
        problems.append(f"{where}: required names undeclared properties {sorted(missing)}")
    return problems


JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def json_schema_problems(schema: Any, where: str, root: bool = False) -> list[str]:
    """Where a ``parametersJsonSchema`` breaks what the Gemini API documents: an object schema of typed
    properties, ``required`` naming declared ones, no external ``$ref`` and no ``$schema`` dialect switch."""
    if not isinstance(schema, dict):
        return [f"{where}: schema must be an object"]
    problems = []
    if root and schema.get("type") != "object":
        problems.append(f"{where}: the parameters must be an object schema")
    if "$schema" in schema or str(schema.get("$ref", "#")).split("#")[0]:
        problems.append(f"{where}: $schema / external $ref are not supported")
    kinds = schema.get("type")
    for kind in kinds if isinstance(kinds, list) else [kinds] if kinds else []:
        if kind not in JSON_TYPES:
            problems.append(f"{where}: type {kind!r} is not a JSON Schema type")
    if not kinds and not {"anyOf", "oneOf", "$ref", "enum"} & set(schema):
        problems.append(f"{where}: untyped schema")
    for name, sub in (schema.get("properties") or {}).items():
        problems += json_schema_problems(sub, f"{where}.properties.{name}")
    if isinstance(schema.get("items"), dict):
        problems += json_schema_problems(schema["items"], f"{where}.items")
    for key in ("anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(key) or []):
            problems += json_schema_problems(sub, f"{where}.{key}[{i}]")
    missing = set(schema.get("required") or []) - set(schema.get("properties") or {})
    if missing:
        problems.append(f"{where}: required names undeclared properties {sorted(missing)}")
    return problems


def _camel(key: str) -> str:
    """Proto JSON accepts a field's proto name and its lowerCamelCase name alike; compare by the latter."""
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def gemini_request_problems(body: dict[str, Any]) -> list[str]:
    """What the Gemini API would reject in a ``generateContent`` body, or what breaks function calling."""
    problems = [f"body: unknown field {k!r}" for k in body if _camel(k) not in GEMINI_BODY_KEYS]
    system = " ".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
    if not system.strip():
        problems.append("systemInstruction: missing or empty")
    names: list[str] = []
    for t, tool in enumerate(body.get("tools") or []):
        for d, decl in enumerate(tool.get("functionDeclarations") or []):
            where = f"tools[{t}].functionDeclarations[{d}]"
            decl = {_camel(k): v for k, v in decl.items()}
            unknown = set(decl) - {"name", "description", "parameters", "parametersJsonSchema", "response",
                                   "responseJsonSchema", "behavior"}
            if unknown:
                problems.append(f"{where}: unknown fields {sorted(unknown)}")
            name = decl.get("name", "")
            names.append(name)
            if not FUNCTION_NAME.fullmatch(name):
                problems.append(f"{where}: invalid function name {name!r}")
            if not decl.get("description"):
                problems.append(f"{where}: {name} has no description")
            if "parameters" in decl and "parametersJsonSchema" in decl:
                problems.append(f"{where}: both parameters and parametersJsonSchema")
            if "parameters" in decl:
                problems += gemini_schema_problems(decl["parameters"], f"{where}.parameters")
            if "parametersJsonSchema" in decl:
                problems += json_schema_problems(decl["parametersJsonSchema"], f"{where}.parametersJsonSchema", True)
            if "responseJsonSchema" in decl:
                problems += json_schema_problems(decl["responseJsonSchema"], f"{where}.responseJsonSchema")
    if len(names) != len(set(names)):
        problems.append(f"tools: duplicate function names {names}")
    contents = body.get("contents") or []
    if not contents:
        problems.append("contents: empty")
    elif contents[0].get("role") != "user":
        problems.append("contents[0]: must be a user turn")
    pending: list[str] = []  # function calls of the previous model turn still owed a response
    for i, content in enumerate(contents):
        role, parts = content.get("role"), content.get("parts") or []
        if role not in ("user", "model"):
            problems.append(f"contents[{i}]: role {role!r}")
        if not parts:
            problems.append(f"contents[{i}]: no parts")
        for j, part in enumerate(parts):
            kinds = [k for k in part if k in PART_KINDS]
            if len(kinds) != 1:
                problems.append(f"contents[{i}].parts[{j}]: expected exactly one data field, got {sorted(part)}")
        calls = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
        answered = [p["functionResponse"]["name"] for p in parts if "functionResponse" in p]
        if calls and role != "model" or answered and role != "user":
            problems.append(f"contents[{i}]: function parts in a {role} turn")
        if pending and sorted(answered) != sorted(pending):
            problems.append(f"contents[{i}]: calls {pending} answered by {answered}")
        if answered and not pending:
            problems.append(f"contents[{i}]: function responses {answered} with no call before them")
        pending = calls
    return problems


#: ``TaskType`` values the Gemini API's embedding requests accept.
EMBED_TASKS = {"TASK_TYPE_UNSPECIFIED", "RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY",
               "CLASSIFICATION", "CLUSTERING", "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY"}
EMBED_REQUEST_KEYS = {"model", "content", "taskType", "title", "outputDimensionality"}
#: The Gemini API's limit on requests per ``batchEmbedContents`` call.
EMBED_BATCH_LIMIT = 100
EMBED_DIM = 48


def embed_request_problems(model: str, request: Any, where: str) -> list[str]:
    """What the Gemini API would reject in one ``EmbedContentRequest`` sent to ``models/{model}``."""
    if not isinstance(request, dict):
        return [f"{where}: not an object"]
    problems = [f"{where}: unknown field {k!r}" for k in request if k not in EMBED_REQUEST_KEYS]
    if request.get("model") not in (None, f"models/{model}"):
        problems.append(f"{where}.model {request.get('model')!r} is not the path's models/{model}")
    parts = (request.get("content") or {}).get("parts")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) and set(p) == {"text"} for p in parts):
        problems.append(f"{where}.content.parts: expected text parts")
    if "taskType" in request and request["taskType"] not in EMBED_TASKS:
        problems.append(f"{where}.taskType {request['taskType']!r} is not a TaskType")
    if "title" in request and request.get("taskType") != "RETRIEVAL_DOCUMENT":
        problems.append(f"{where}.title is only for RETRIEVAL_DOCUMENT")
    return problems


def hashed_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words point alike (enough to rank by)."""
    import hashlib

    out = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        out[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    return out


class FakeGemini(_Fake):
    """``POST /v1beta/models/{model}:generateContent`` as the Gemini Developer API answers it, and its
    embedding endpoints ``:embedContent`` and ``:batchEmbedContents`` (vectors: :func:`hashed_vector`)."""

    PATH = re.compile(r"/(v1beta|v1)/models/([^:/]+):generateContent")
    EMBED = re.compile(r"/(v1beta|v1)/models/([^:/]+):(embedContent|batchEmbedContents)")

    def __init__(self, script: Script | None = None):
        super().__init__(script)
        self.embedded: list[dict[str, Any]] = []  # every embedding request as it arrived

    def _embed(self, model: str, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.embedded.append(body)
        requests = body.get("requests") if method == "batchEmbedContents" else [body]
        if not isinstance(requests, list) or not requests:
            self.problems.append(f"{method}: no requests")
            return 400, {"error": {"code": 400, "message": "requests: required", "status": "INVALID_ARGUMENT"}}
        if method == "batchEmbedContents" and (set(body) - {"requests"}):
            self.problems.append(f"{method}: unknown fields {sorted(set(body) - {'requests'})}")
        if len(requests) > EMBED_BATCH_LIMIT:
            self.problems.append(f"{method}: {len(requests)} requests, over the limit of {EMBED_BATCH_LIMIT}")
            return 400, {"error": {"code": 400, "message": "at most 100 requests can be in one batch",
                                   "status": "INVALID_ARGUMENT"}}
        problems = [p for i, r in enumerate(requests) for p in embed_request_problems(model, r, f"requests[{i}]")]
        if problems:
            self.problems += problems
            return 400, {"error": {"code": 400, "message": problems[0], "status": "INVALID_ARGUMENT"}}
        vectors = [{"values": hashed_vector(" ".join(p["text"] for p in r["content"]["parts"]),
                                            int(r.get("outputDimensionality") or EMBED_DIM))} for r in requests]
        return 200, {"embeddings": vectors} if method == "batchEmbedContents" else {"embedding": vectors[0]}

    def _handle(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not {k.lower() for k in headers} & {"x-goog-api-key", "authorization"}:
            self.problems.append("request carries no API key")
        embedding = self.EMBED.fullmatch(path.split("?")[0])
        if embedding:
            return self._embed(embedding[2], embedding[3], body)
        match = self.PATH.fullmatch(path.split("?")[0])
        if not match:
            self.problems.append(f"unexpected path {path}")
            return 404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}}
        system = " ".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
        role = (ROLE.search(system) or [None, "?"])[1]
        self.problems += [f"{role}: {p}" for p in gemini_request_problems(body)]
        wire = Wire(role, system, [types.Content.model_validate(c) for c in body.get("contents") or []],
                    [d["name"] for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []], body)
        turn = self._decide(wire)
        candidate = turn if isinstance(turn, dict) else {
            "content": {"role": "model", "parts": [p.model_dump(mode="json", by_alias=True, exclude_none=True)
                                                   for p in turn]},
            "finishReason": "STOP", "index": 0}
        return 200, {"candidates": [candidate], "modelVersion": match[2],
                     "usageMetadata": {"promptTokenCount": len(json.dumps(body)) // 4, "candidatesTokenCount": 8,
                                       "totalTokenCount": len(json.dumps(body)) // 4 + 8}}


# --------------------------------------------------------------------------- OpenAI-compatible


def openai_request_problems(body: dict[str, Any]) -> list[str]:
    """What an OpenAI-compatible chat server would reject, or what breaks tool calling."""
    problems = []
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "system" or not messages[0].get("content"):
        problems.append("messages[0]: the system instruction must come first")
    names = []
    for t, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") or {}
        names.append(fn.get("name"))
        if tool.get("type") != "function" or not FUNCTION_NAME.fullmatch(fn.get("name") or ""):
            problems.append(f"tools[{t}]: expected a function tool with a valid name")
        params = fn.get("parameters")
        if not isinstance(params, dict) or params.get("type") != "object":
            problems.append(f"tools[{t}]: {fn.get('name')} parameters must be a JSON Schema object")
    owed: dict[str, str] = {}
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"messages[{i}]: role {role!r}")
        if role == "tool":
            if m.get("tool_call_id") not in owed:
                problems.append(f"messages[{i}]: tool result for unknown call {m.get('tool_call_id')!r}")
            owed.pop(m.get("tool_call_id"), None)
            continue
        if owed:
            problems.append(f"messages[{i}]: calls {sorted(owed.values())} got no tool result before this")
            owed = {}
        for c in m.get("tool_calls") or []:
            owed[c.get("id")] = c["function"]["name"]
            try:
                json.loads(c["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                problems.append(f"messages[{i}]: arguments of {c['function']['name']} are not JSON")
    if owed:
        problems.append(f"end: calls {sorted(owed.values())} got no tool result")
    return problems


def _openai_contents(messages: list[dict[str, Any]]) -> list[types.Content]:
    """The conversation as Gemini-style contents (for the offline policy); tool results threaded by call id."""
    contents, names = [], {}
    for m in messages:
        if m["role"] == "assistant":
            parts = [text(m["content"])] if m.get("content") else []
            for c in m.get("tool_calls") or []:
                names[c["id"]] = c["function"]["name"]
                parts.append(call(c["function"]["name"], **json.loads(c["function"].get("arguments") or "{}")))
            contents.append(types.Content(role="model", parts=parts))
        elif m["role"] == "tool":
            try:
                result = json.loads(m["content"])
            except (TypeError, json.JSONDecodeError):
                result = {"result": m["content"]}
            part = types.Part.from_function_response(name=names.get(m["tool_call_id"], "?"), response=result)
            if contents and contents[-1].role == "user" and contents[-1].parts[0].function_response:
                contents[-1].parts.append(part)
            else:
                contents.append(types.Content(role="user", parts=[part]))
        elif m["role"] == "user":
            body = m["content"] if isinstance(m["content"], str) else " ".join(
                c.get("text", "") for c in m["content"] if isinstance(c, dict))
            contents.append(types.Content(role="user", parts=[text(body)]))
    return contents


class FakeOpenAI(_Fake):
    """``POST /v1/chat/completions`` as an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1) answers it."""

    def _handle(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.split("?")[0] != "/v1/chat/completions":
            self.problems.append(f"unexpected path {path}")
            return 404, {"error": {"message": f"no route {path}"}}
        if body.get("stream"):
            self.problems.append("streaming was requested; hoprag ask runs without it")
        messages = body.get("messages") or []
        system = messages[0].get("content", "") if messages and messages[0].get("role") == "system" else ""
        system = system if isinstance(system, str) else " ".join(c.get("text", "") for c in system)
        role = (ROLE.search(system) or [None, "?"])[1]
        self.problems += [f"{role}: {p}" for p in openai_request_problems(body)]
        wire = Wire(role, system, _openai_contents(messages),
                    [t["function"]["name"] for t in body.get("tools") or []], body)
        turn = self._decide(wire)
        if isinstance(turn, dict):  # a raw assistant message (e.g. tool arguments that are not JSON)
            message = turn
        else:
            calls = [{"id": f"call_{len(self.requests)}_{i}", "type": "function",
                      "function": {"name": p.function_call.name, "arguments": json.dumps(p.function_call.args or {})}}
                     for i, p in enumerate(turn) if p.function_call]
            words = "".join(p.text or "" for p in turn if p.text)
            message = {"role": "assistant", "content": words or None, **({"tool_calls": calls} if calls else {})}
        return 200, {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
                     "model": body.get("model"),
                     "choices": [{"index": 0, "message": message,
                                  "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                     "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": 8,
                               "total_tokens": len(json.dumps(body)) // 4 + 8}}



class HashEmbedder:
    """A test embedder (:class:`hoprag.embed.Embedder`) of :func:`hashed_vector`: fast, deterministic, offline."""

    def __new__(cls, dim: int = EMBED_DIM):
        from hoprag.embed import Embedder

        class _Hash(Embedder):
            name, identity, min_similarity = "hash", f"hash/test/{dim}", 0.1

            def _embed(self, texts: list[str], query: bool) -> Any:
                return [hashed_vector(t, dim) for t in texts]

        made = _Hash()
        made.dim = dim
        return made
