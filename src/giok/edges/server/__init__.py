"""`giok serve`: MCP over streamable HTTP, a JSON API and a web page over one giok home."""
