"""The MCP server: testdata/recall-controls.json through its `recall` tool (an in-process
MCP client session, the server's calls going over HTTP to real `taisce serve`
processes), then the console script `taisce-mcp` over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from taisce_client.mcp_server import build_server

from taisce.domain.controls import CONTROLS
from tests.clients.conftest import FixtureServers
from tests.clients.fixture_cases import CASES, arguments
from tests.integration.test_cli_credentials import _environ as clean_environ
from tests.recall_fixture import check_answer, check_error
from tests.server import LocalServer

pytestmark = pytest.mark.anyio

# The recall tool names every recall control as an argument of its own.
TOOL_CONTROLS = set(CONTROLS)
MCP_BIN = Path(sys.executable).parent / "taisce-mcp"
# One MCP server per suite (each test still opens its own client session).
_SERVERS: dict[str, MCPServer] = {}


def recall_arguments(case: dict[str, Any]) -> dict[str, Any]:
    """The tool's arguments for a case: controls it does not name go in more_controls."""
    question, controls = arguments(case)
    named = {k: v for k, v in controls.items() if k in TOOL_CONTROLS}
    more = {k: v for k, v in controls.items() if k not in TOOL_CONTROLS}
    return {"question": question, **named, **({"more_controls": more} if more else {})}


def structured(result: CallToolResult) -> dict[str, Any]:
    """The tool's structured content, checked against its text (the same JSON, or the
    error in one line)."""
    data = result.structured_content
    assert isinstance(data, dict), result
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        assert "\n" not in text and data["error"]["message"] in text
    else:
        assert json.loads(text) == data
    return data


@pytest.mark.parametrize(("suite_name", "case"), CASES)
async def test_recall_tool(fixture_servers: FixtureServers, suite_name: str, case: dict) -> None:
    suite = fixture_servers.suite(suite_name)
    if suite_name not in _SERVERS:
        _SERVERS[suite_name] = build_server(suite.url, suite.secret)
    async with Client(_SERVERS[suite_name]) as session:
        result = await session.call_tool("recall", recall_arguments(case))
    data = structured(result)
    if result.is_error:
        check_error(case["expect"], data["status"], data["error"])
    else:
        check_answer(case["expect"], data, suite.memory)


async def test_the_tools_store_recall_and_report_refusals(server: LocalServer) -> None:
    mcp = build_server(server.url, server.new_credential("mcp-tools"))
    async with Client(mcp) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"remember", "add_facts", "recall", "forget"}
        schema = tools["recall"].input_schema
        assert schema["required"] == ["question"]
        assert schema["properties"]["hops"]["type"] == "integer"
        assert "source_roles" in tools["recall"].description

        stored = await session.call_tool(
            "add_facts",
            {
                "facts": [
                    {
                        "subject": "Atlas",
                        "predicate": "works at",
                        "object": "Acme Corp",
                        "source_role": "user",
                        "id": "mt1",
                    },
                    {
                        "subject": "Acme Corp",
                        "predicate": "is based in",
                        "object": "Dublin",
                        "source_role": "tool",
                        "id": "mt2",
                    },
                ]
            },
        )
        assert structured(stored) == {"ids": ["mt1", "mt2"]}
        said = await session.call_tool(
            "remember", {"messages": [{"role": "user", "content": "Atlas likes tea.", "id": "mm1"}]}
        )
        assert structured(said) == {"ids": ["mm1"]}

        answer = structured(
            await session.call_tool(
                "recall",
                {"question": "Where is Atlas?", "hops": 2, "source_roles": ["user", "tool"]},
            )
        )
        assert [f["id"] for f in answer["facts"]] == ["mt1", "mt2"]
        assert answer["facts"][1]["path"] == ["Atlas", "Acme Corp"]

        refused = await session.call_tool(
            "add_facts",
            {
                "facts": [
                    {
                        "subject": "A",
                        "predicate": "b",
                        "object": "c",
                        "source_role": "user",
                        "valid_from": "not a time",
                    }
                ]
            },
        )
        assert refused.is_error
        assert structured(refused)["error"]["code"] == "invalid_request"

        # A common word is no subject: refused by the API, nothing masked.
        common = await session.call_tool("forget", {"subject": "the"})
        assert common.is_error and structured(common)["error"]["code"] == "invalid_request"
        assert "common words" in structured(common)["error"]["message"]
        forgotten = await session.call_tool("forget", {"subject": "Atlas"})
        again = structured(await session.call_tool("recall", {"question": "Where is Atlas?"}))
    assert not forgotten.is_error, forgotten
    assert structured(forgotten)["erased"]["facts"] >= 1, structured(forgotten)
    assert again["facts"] == []


async def test_the_tools_act_for_the_sessions_user_or_their_own(server: LocalServer) -> None:
    secret = server.new_credential("mcp-users")
    fact = {"subject": "Zed", "predicate": "likes", "object": "tea", "source_role": "user"}
    question = {"question": "What does Zed like?"}
    async with Client(build_server(server.url, secret, user="ana")) as ana:
        tools = (await ana.list_tools()).tools
        assert all("user" in t.input_schema["properties"] for t in tools)
        assert not structured(await ana.call_tool("add_facts", {"facts": [fact]})).get("error")
        mine = structured(await ana.call_tool("recall", question))
        assert [f["object"] for f in mine["facts"]] == ["tea"]
        # A call's own user wins over the session's.
        theirs = structured(await ana.call_tool("recall", {**question, "user": "bo"}))
        assert theirs["facts"] == []
    async with Client(build_server(server.url, secret)) as shared:
        assert structured(await shared.call_tool("recall", question))["facts"] == []
        seen = structured(await shared.call_tool("recall", {**question, "user": "ana"}))
        assert [f["object"] for f in seen["facts"]] == ["tea"]


def _environ(server: LocalServer, secret: str) -> dict[str, str]:
    return {**clean_environ(), "TAISCE_URL": server.url, "TAISCE_API_KEY": secret}


async def test_taisce_mcp_over_stdio(server: LocalServer) -> None:
    secret = server.new_credential("mcp-stdio")
    with server.client(secret) as http:
        facts = [
            {
                "subject": "Orla",
                "predicate": "keeps",
                "object": "bees",
                "object_kind": "value",
                "source_role": "user",
                "id": "ms1",
            }
        ]
        assert http.post("/v1/facts", json={"facts": facts}).status_code == 201
    params = StdioServerParameters(command=str(MCP_BIN), env=_environ(server, secret))
    async with Client(params) as session:
        answer = structured(await session.call_tool("recall", {"question": "What about Orla?"}))
        assert [f["id"] for f in answer["facts"]] == ["ms1"]
        refused = await session.call_tool("recall", {"question": "Orla", "hops": "two"})
        assert refused.is_error
        assert structured(refused)["error"]["control"] == "hops"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_taisce_mcp_over_streamable_http(server: LocalServer) -> None:
    secret = server.new_credential("mcp-http")
    port = _free_port()
    process = subprocess.Popen(
        [str(MCP_BIN), "--transport", "streamable-http", "--port", str(port)],
        env=_environ(server, secret),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "taisce-mcp did not start listening"
                time.sleep(0.1)
        async with Client(url) as session:
            said = await session.call_tool(
                "remember", {"messages": [{"role": "user", "content": "Hello.", "id": "mh1"}]}
            )
            assert structured(said) == {"ids": ["mh1"]}
            refused = await session.call_tool("recall", {"question": "x", "max_characters": 0})
            assert structured(refused)["error"] == {
                "code": "invalid_recall_controls",
                "control": "max_characters",
                "message": structured(refused)["error"]["message"],
            }
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_taisce_mcp_without_a_credential_says_so_in_one_line() -> None:
    done = subprocess.run(
        [str(MCP_BIN)], env=clean_environ(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "taisce-mcp: no credential: set TAISCE_API_KEY or pass --api-key"
    ]


async def test_an_unreachable_api_is_a_tool_error_that_says_so() -> None:
    async with Client(build_server("http://127.0.0.1:9", "tsk_x")) as session:
        result = await session.call_tool("recall", {"question": "Atlas"})
    assert result.is_error
    error = structured(result)["error"]
    assert error["code"] == "unavailable" and "http://127.0.0.1:9" in error["message"]
