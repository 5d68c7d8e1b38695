"""Search and the index: chunks cut from the files, the SQLite index (FTS5 + vectors), the
everyday-text baseline and hybrid search with cut-offs."""
