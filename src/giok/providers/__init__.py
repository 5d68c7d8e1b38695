"""Pluggable models: LLM providers (judges, summaries) and embedding providers, each with an
offline default and HTTP plugins."""
