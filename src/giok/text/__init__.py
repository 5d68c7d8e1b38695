"""Text analysis below everything else: search terms (`terms`) and the LLM token counter
(`token_count`). Imports nothing of giok but `errors`."""
