"""The edges over the library: CLI, MCP server, memory tools for agent SDKs, Claude Code hooks,
doctor, import and export. Nothing below imports these."""
