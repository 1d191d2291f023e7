"""The MCP tools over Streamable HTTP (``herdr-orchestrator mcp --http HOST:PORT``).

Why a package of its own: stdio needs nothing but the SDK, while a network listener needs a
token, TLS, and a guard in front of the SDK's transport. The pieces are split so ``cli`` can
parse and check the options without importing the web stack:

* :mod:`.settings` — the options, the token file, and what is refused before anything listens;
* :mod:`.guard` — the checks every HTTP request passes before the SDK sees it;
* :mod:`.serve` — the SDK's Streamable HTTP app behind the guard, served by uvicorn.
"""
