"""The Model Context Protocol interface: agents search, inject, recall and record knowledge,
search memory and drive missions as MCP tools (``swarmq mcp``), and the agents' configs learn
where the server is (``swarmq mcp install``)."""
