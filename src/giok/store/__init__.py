"""The files and their grammar: MEMORY.md and the `## `-section files, the workspace and the
home, git, the intent journal, the reference log and the write trace. The source of truth."""
