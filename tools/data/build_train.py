"""Build tools/data/judgement_train.json and change_train.json from raw/*.txt.

Raw judgement lines:  LAYER TYPE KIND | text     (TYPE '-' = null, for drop)
Raw change lines:     T|F|D || old || new   (T change, F no change, D duplicate)
                      "# kind: NAME" tags the change lines below it (raw/c_traps.txt)
Written by hand, independently of src/ (the keyword rules) and of the eval sets.
"""

import collections
import glob
import json
import os
import re
import sys
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"preference", "fact", "workflow", "episode", "lesson", "decision"}
LAYERS = {"drop", "M30", "M90", "M365", "M0"}
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def lang_of(text):
    """Return (lang, mixed). lang is the language carrying the sentence's grammar:
    whitespace tokens with Hangul (weighted 1.5, since Korean attaches particles and
    endings to words) against purely Latin tokens."""
    toks = text.split()
    ko = sum(1 for t in toks if HANGUL.search(t))
    en = sum(1 for t in toks if LATIN_WORD.search(t) and not HANGUL.search(t))
    if ko == 0:
        return "en", False
    if en == 0:
        return "ko", False
    return ("ko" if ko * 1.5 >= en else "en"), True


def norm_type_kind(layer, typ, kind):
    if typ == "-":
        return None, kind
    if typ == "constraint":
        return "decision", "constraint"
    if typ == "style":
        return "preference", "style"
    if typ == "health":
        return ("fact" if layer == "M0" else "episode"), "health"
    return typ, kind


def build_judgement(pattern="j_*.txt"):
    """The labelled sentences of raw/j_*.txt (what is written down); with "x_*.txt", those said
    in a chat (chat_train.json, for the chat heads)."""
    items, seen = [], set()
    for path in sorted(glob.glob(os.path.join(HERE, "raw", pattern))):
        source = Path(path).stem[2:]  # raw/j_trivia.txt -> "trivia" (train_judgement.py --written-weight)
        for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            head, sep, text = line.partition(" | ")
            parts = head.split()
            if not sep or len(parts) != 3:
                sys.exit(f"{path}:{n}: bad line {line!r}")
            layer, typ, kind = parts
            typ, kind = norm_type_kind(layer, typ, kind)
            assert layer in LAYERS, (path, n, layer)
            assert (typ is None) == (layer == "drop"), (path, n, line)
            assert typ is None or typ in TYPES, (path, n, typ)
            text = text.strip()
            if text in seen:
                sys.exit(f"{path}:{n}: duplicate text {text!r}")
            seen.add(text)
            lang, mixed = lang_of(text)
            it = {"text": text, "lang": lang, "layer": layer, "type": typ, "kind": kind, "source": source}
            if mixed:
                it["mixed"] = True
            items.append(it)
    return items


def build_change():
    items, seen = [], set()
    for path in sorted(glob.glob(os.path.join(HERE, "raw", "c_*.txt"))):
        kind = None
        for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
            line = line.rstrip("\n")
            if line.startswith("# kind:"):
                kind = line.partition(":")[2].strip()
                continue
            if not line.strip() or line.startswith("#"):
                continue
            parts = [x.strip() for x in line.split(" || ")]
            if len(parts) != 3 or parts[0] not in ("T", "F", "D"):
                sys.exit(f"{path}:{n}: bad line {line!r}")
            flag, old, new = parts[0], parts[1].strip(), parts[2].strip()
            if (old, new) in seen:
                sys.exit(f"{path}:{n}: duplicate pair")
            seen.add((old, new))
            lang, mixed = lang_of(old + " " + new)
            it = {"old": old, "new": new, "change": flag == "T", "lang": lang}
            if flag == "D":
                it["duplicate"] = True
            if kind:
                it["kind"] = kind
            if mixed:
                it["mixed"] = True
            items.append(it)
    return items


def dump(name, about, items):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump({"about": about, "items": items}, f, ensure_ascii=False, indent=1)
        f.write("\n")


J_ABOUT = (
    "Training data for giok's learned judgement classifier: keep/drop, memory layer "
    "(drop, M30, M90, M365, M0) and type (preference, fact, workflow, episode, lesson, "
    "decision; null for drop) of a sentence an agent might store. Hand-written to make "
    "importance come from meaning, not trigger words. lang is the language of the "
    "sentence's grammar; mixed=true marks Korean/English code-mixing. Rules and "
    "constraints are typed decision (kind constraint); style instructions are typed "
    "preference (kind style); preferences carry a topic kind (food, music, tool, travel, hobby, "
    "shopping); lessons are M90. Built by tools/data/build_train.py "
    "from tools/data/raw/."
)
C_ABOUT = (
    "Training pairs for giok's change detector: change=true when `new` gives a new value "
    "to the same subject+attribute (slot) as `old`, however phrased. change=false for "
    "homonyms, other people, other attributes, additions, temporary vs lasting states, "
    "unrelated sentences sharing words; duplicate=true marks paraphrases of the same "
    "value (not a change). Built by tools/data/build_train.py from tools/data/raw/."
)

X_ABOUT = (
    "Training data for giok's chat heads (judgement voice 'chat', read by the watchdog's flush): "
    "what a user types to an assistant, labelled like judgement_train.json: asides, moods, the "
    "weather, small costs and chat markers as drop; points worth keeping said in the same chat "
    "voice in their layers. Built by tools/data/build_train.py from tools/data/raw/x_*.txt."
)

if __name__ == "__main__":
    j = build_judgement()
    dump("judgement_train.json", J_ABOUT, j)
    x = build_judgement("x_*.txt")
    dump("chat_train.json", X_ABOUT, x)
    c = build_change()
    if c:
        dump("change_train.json", C_ABOUT, c)
    C = collections.Counter
    print("judgement", len(j))
    print(" lang ", dict(C(i["lang"] for i in j)), "mixed", sum(1 for i in j if i.get("mixed")))
    print(" layer", dict(C(i["layer"] for i in j)))
    print(" type ", dict(C(str(i["type"]) for i in j)))
    print(" kind ", dict(C(i["kind"] for i in j).most_common()))
    print("chat", len(x), dict(C(i["layer"] for i in x)), dict(C(i["lang"] for i in x)))
    print("change", len(c))
    if c:
        print(" lang ", dict(C(i["lang"] for i in c)), "mixed", sum(1 for i in c if i.get("mixed")))
        print(
            " change", dict(C(i["change"] for i in c)), "duplicate", sum(1 for i in c if i.get("duplicate"))
        )
        print(" kind ", dict(C(i["kind"] for i in c if i.get("kind"))))
