"""Rebuild the stored conversation sets from their sources (not run by the bench or the tests).

    python bench/data/conversations/make.py friendsqa DEV_JSON TST_JSON
    python bench/data/conversations/make.py molweni TEST_JSON

The source files are read from the public repositories named in README.md, at the commits
named there (`git show COMMIT:dat/friendsqa_dev.json > …`). Output: NAME.json beside this
script, in the normalised shape the bench reads:

    {"name", "shape", "source", "licence", "commit", "conversations": [
        {"id", "sessions": [{"id", "date": null, "turns": [{"id", "speaker", "text"}]}],
         "questions": [{"id", "question", "evidence": [turn id, …], "answerable"}]}]}

The subset is chosen by a hash rule on ids only (never on results): see `keep`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SALT = "giok-conversations-1:"


def keep(key: str, out_of: int, drop: int) -> bool:
    """Deterministic subset: drop the ids whose salted hash falls in the first `drop` of `out_of`."""
    return hashlib.sha256((SALT + key).encode()).digest()[0] % out_of >= drop


def detok(text: str) -> str:
    """Undo the corpus tokenisation ("do n't", "it 's", "gon na", " ,") so a line reads as written."""
    text = " ".join(text.split())
    text = re.sub(r" (n't|'s|'re|'m|'ll|'ve|'d)\b", r"\1", text)
    text = re.sub(r"\b(gon|wan|got) (na|ta)\b", r"\1\2", text)
    text = re.sub(r" ([,.!?;:%)\]])", r"\1", text)
    return re.sub(r"([(\[]) ", r"\1", text)


def friendsqa(dev: str, tst: str) -> dict:
    """One conversation per episode, one session per scene (in scene order), one turn per
    utterance; a question's evidence is every utterance an annotator's answer lies in (the
    speaker of an utterance counts as in it)."""
    episodes: dict[str, list[dict]] = defaultdict(list)
    for path in (dev, tst):
        with open(path, encoding="utf-8") as f:
            for scene in json.load(f)["data"]:
                episodes[scene["title"].rsplit("_", 1)[0]].append(scene)
    conversations = []
    for episode in sorted(episodes):
        sessions, questions = [], []
        for scene in sorted(episodes[episode], key=lambda s: s["title"]):
            (para,) = scene["paragraphs"]
            sid = scene["title"]
            turns = []
            for u in para["utterances:"]:
                names = [{"#NOTE#": "", "#ALL#": "All"}.get(s, s) for s in u["speakers"]]
                turns.append(
                    {
                        "id": f"{sid}:{u['uid']}",
                        "speaker": " and ".join(n for n in names if n),
                        "text": detok(u["utterance"]),
                    }
                )
            sessions.append({"id": sid, "date": None, "turns": turns})
            for qa in para["qas"]:
                if not keep(qa["id"], 6, 1):
                    continue
                evidence = sorted({a["utterance_id"] for a in qa["answers"]})
                questions.append(
                    {
                        "id": qa["id"],
                        "question": detok(qa["question"]),
                        "evidence": [f"{sid}:{e}" for e in evidence],
                        "answerable": bool(evidence),
                    }
                )
        conversations.append({"id": episode, "sessions": sessions, "questions": questions})
    return {
        "name": "friendsqa",
        "shape": "multi-party TV dialogue (six main speakers and guests), scenes of an episode, no dates",
        "source": "emorynlp/FriendsQA dat/friendsqa_dev.json + dat/friendsqa_tst.json",
        "licence": "Apache-2.0",
        "commit": "9ce6c98a6acf13c87d96b6811e4409b5de43bdfe",
        "conversations": conversations,
    }


def molweni(test: str, per: int = 8) -> dict:
    """Ubuntu IRC help chats: the test dialogues in salted-hash order, `per` dialogues to a
    channel log (one session each); a question's evidence is the utterance its answer span
    starts in; an unanswerable question (is_impossible) has no evidence."""
    with open(test, encoding="utf-8") as f:
        dialogues = json.load(f)["data"]["dialogues"]
    order = sorted(
        range(len(dialogues)), key=lambda i: hashlib.sha256(f"{SALT}molweni-{i}".encode()).hexdigest()
    )
    conversations = []
    for start in range(0, len(order), per):
        cid = f"molweni-{start // per + 1:02d}"
        sessions, questions = [], []
        for i in order[start : start + per]:
            d = dialogues[i]
            sid = f"d{i:03d}"
            ctx, pos, spans, turns = d["context"], 0, [], []
            for n, e in enumerate(d["edus"]):
                seg = f"{e['speaker'].lower()}: {e['text'].lower()}"
                at = ctx.find(seg, pos)
                if at < 0:
                    raise SystemExit(f"dialogue {i}: utterance {n} not in its context")
                spans.append((at, at + len(seg)))
                pos = at + len(seg)
                turns.append({"id": f"{sid}:{n}", "speaker": e["speaker"], "text": detok(e["text"])})
            sessions.append({"id": sid, "date": None, "turns": turns})
            for qa in d["qas"]:
                if not keep(qa["id"], 5, 2):
                    continue
                evidence = sorted(
                    {n for a in qa["answers"] for n, (b, c) in enumerate(spans) if b <= a["answer_start"] < c}
                )
                questions.append(
                    {
                        "id": qa["id"],
                        "question": detok(qa["question"]),
                        "evidence": [f"{sid}:{n}" for n in evidence],
                        "answerable": not qa["is_impossible"] and bool(evidence),
                    }
                )
        conversations.append({"id": cid, "sessions": sessions, "questions": questions})
    return {
        "name": "molweni",
        "shape": "multi-party Ubuntu IRC help chats (nicknames, short technical turns), no dates",
        "source": "HIT-SCIR/Molweni MRC(withDiscourse)/test.json",
        "licence": "Apache-2.0",
        "commit": "2eb681d7e610ee3fda4ab3b4cc364554bd17ee67",
        "conversations": conversations,
    }


def main() -> None:
    name, *paths = sys.argv[1:]
    data = {"friendsqa": friendsqa, "molweni": molweni}[name](*paths)
    out = HERE / f"{name}.json"
    out.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", "utf-8")
    conv = data["conversations"]
    turns = sum(len(s["turns"]) for c in conv for s in c["sessions"])
    asked = [q for c in conv for q in c["questions"]]
    print(
        f"{out.name}: {len(conv)} conversations, {turns} turns, {len(asked)} questions "
        f"({sum(q['answerable'] for q in asked)} answerable)"
    )


if __name__ == "__main__":
    main()
