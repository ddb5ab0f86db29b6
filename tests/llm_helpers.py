"""A local stand-in for an OpenAI-compatible chat-completions endpoint with structured output
(response_format json_schema, strict), for the tests of reading shareholder lists by an LLM: the
real model is a third party the tests cannot reach. It answers as the real endpoint does: the
completion object, 400 for a schema strict mode rejects, 404 for another path."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


def _schema_problem(node, path: str = "$") -> str | None:
    """What the real endpoint rejects in strict mode: objects without additionalProperties false or
    with properties left out of required."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            if node.get("additionalProperties") is not False:
                return f"{path}: 'additionalProperties' is required to be supplied and to be false"
            missing = set(node["properties"]) - set(node.get("required", []))
            if missing:
                return f"{path}: 'required' is required to include every property; missing {sorted(missing)}"
        for key, value in node.items():
            if problem := _schema_problem(value, f"{path}.{key}"):
                return problem
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if problem := _schema_problem(value, f"{path}[{index}]"):
                return problem
    return None


class FakeChatCompletions:
    """POST /v1/chat/completions; ``answer`` turns the request into the assistant's JSON text, or
    into an (HTTP status, body) pair for an error. ``requests`` are the bodies received, and
    ``api_keys`` the bearer tokens they came with. Serves while entered as a context manager."""

    def __init__(self, answer: Callable[[dict], str | tuple[int, dict]]) -> None:
        self.answer = answer
        self.requests: list[dict] = []
        self.api_keys: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.api_keys.append(self.headers.get("Authorization", "").removeprefix("Bearer "))
                status, payload = fake.respond(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeChatCompletions:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"Unknown path {path}", "type": "invalid_request_error"}}
        response_format = body.get("response_format") or {}
        json_schema = response_format.get("json_schema") or {}
        if response_format.get("type") != "json_schema" or not json_schema.get("name") or "schema" not in json_schema:
            return 400, {"error": {"message": "response_format must be a json_schema", "type": "invalid_request_error"}}
        if json_schema.get("strict") and (problem := _schema_problem(json_schema["schema"])):
            message = f"Invalid schema for response_format '{json_schema['name']}': {problem}"
            return 400, {"error": {"message": message, "type": "invalid_request_error", "param": "response_format"}}
        answer = self.answer(body)
        if isinstance(answer, tuple):
            return answer
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": answer, "refusal": None},
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 100, "total_tokens": 200},
        }


def user_text(body: dict) -> str:
    """What a request gave the model to read: its last (user) message."""
    return body["messages"][-1]["content"]


def answer_reading(answer: dict) -> Callable[[dict], str]:
    """A model that reads: it gives ``answer`` only if the list's names were sent to it."""

    def respond(body: dict) -> str:
        text = user_text(body)
        names = [holder.get("last_name") or holder["name"] for holder in answer["shareholders"]]
        return json.dumps(answer) if all(name in text for name in names) else json.dumps({"shareholders": []})

    return respond


SERVER_ERROR = (503, {"error": {"message": "overloaded", "type": "server_error"}})
