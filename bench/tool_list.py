"""What ``tools/list`` and the server's ``instructions`` cost a model, in bytes and tokens.

A host puts the whole tool listing (and the server's instructions) into the model's context
on every turn, so its size is a recurring cost: every word of a description is paid again and
again. Issue 10 asked for descriptions a model can act on without our docs, and for the cost
to stay bounded; this measures both sides.

Measured through the MCP SDK itself (an in-process ``Client`` on ``build_server``, the
``tools/list`` result serialised as the SDK puts it on the wire, compact JSON). The baseline,
measured in the same run, is the bare minimum a host needs to call the tools: every tool's
name and input schema with all descriptions and titles removed. The RATIO is what the
descriptions, titles and annotations cost on top of that floor. Tokens are approximated as
UTF-8 bytes / 4 (no tokenizer is installed; for English and JSON the rule is within ~20%).

Targets (ours): the listing ≤ 242 approximate tokens **per listed tool** and ≤ 3.5× the bare
schemas; the instructions ≤ 1,000 approximate tokens. The per-tool budget is issue 10's
total, 8,000 tokens for its 33 tools (the size measured then plus about 10% headroom),
divided by those 33: a new tool family (issue 15's nine managed-agent tools) brings its own
budget and must not cost more per tool than the tools before it, while the ratio still bounds
descriptions against the schemas. The rows also carry the listing's size before issue 10
(measured at commit 55d892b with this script) for comparison: the descriptions grew, the
duplicate ``annotations.title`` went.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
import benchkit
from benchkit import Result
from mcp import Client

from orchestrator.core.tool import ToolContext
from orchestrator.mcp_server import build_server

#: approximate tokens per listed tool: issue 10's 8,000 for 33 tools, per tool (rounded down)
LISTING_TOKENS_PER_TOOL = 242
LISTING_RATIO_TARGET = 3.5
INSTRUCTIONS_TOKENS_TARGET = 1_000
#: ``tools/list`` bytes at commit 55d892b, before issue 10 (this script's serialisation).
BEFORE_ISSUE_10_BYTES = 28_222


def approx_tokens(size: int) -> int:
    """Approximate tokens of ``size`` UTF-8 bytes of English or JSON (bytes / 4)."""
    return round(size / 4)


def _bare(value: Any) -> Any:
    """``value`` without any ``description`` or ``title`` key, at any depth."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k not in ("description", "title")}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def measure() -> tuple[int, int, int, int]:
    """(listing bytes, bare schemas bytes, instructions bytes, tools listed), through the
    SDK."""

    async def body() -> tuple[int, int, int, int]:
        async with Client(build_server(context=ToolContext.from_env({})), mode="legacy") as c:
            listed = await c.list_tools()
            instructions = c.instructions or ""
        wire = listed.model_dump(by_alias=True, exclude_none=True, mode="json")
        bare = [{"name": t["name"], "inputSchema": _bare(t["inputSchema"])} for t in wire["tools"]]
        return _size(wire), _size({"tools": bare}), len(instructions.encode()), len(bare)

    return anyio.run(body)


def run(args: argparse.Namespace) -> list[Result]:
    """One measurement: the sizes are deterministic."""
    listing, bare, instructions, count = measure()
    tokens = approx_tokens(listing)
    ratio = listing / bare
    budget = LISTING_TOKENS_PER_TOOL * count
    return [
        Result(
            name=f"tools/list size ({count} tools)",
            value=float(listing),
            unit="bytes",
            baseline_name="names + input schemas without descriptions",
            baseline_value=float(bare),
            ratio=ratio,
            target=f"<= {LISTING_TOKENS_PER_TOOL} tokens per tool ({budget}) and "
            f"<= {LISTING_RATIO_TARGET:g}x bare",
            passed=tokens <= budget and ratio <= LISTING_RATIO_TARGET,
            details={
                "approx tokens": str(tokens),
                "per tool": f"{tokens / count:.0f}",
                "before issue 10": f"{BEFORE_ISSUE_10_BYTES} bytes "
                f"({listing / BEFORE_ISSUE_10_BYTES:.2f}x now)",
            },
        ),
        Result(
            name="initialize instructions size",
            value=float(instructions),
            unit="bytes",
            baseline_name="tools/list size",
            baseline_value=float(listing),
            ratio=instructions / listing,
            target=f"<= {INSTRUCTIONS_TOKENS_TARGET} tokens",
            passed=approx_tokens(instructions) <= INSTRUCTIONS_TOKENS_TARGET,
            details={"approx tokens": str(approx_tokens(instructions))},
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
