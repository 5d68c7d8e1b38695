"""Cross-view bus: fan-out, replies, the loop rule, diaries, concurrency, transports, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from giok import Workspace
from giok.errors import InvalidInput, LoopRefused, NotFound, WorkspaceError
from giok.lifecycle.crossview import TAG, TRANSPORTS, Bus, Transport, register_transport

AGENTS = ("zeon", "sion", "mion", "sano")


@pytest.fixture
def family(tmp_path, giok_home):
    return {name: Workspace.init(tmp_path / name, name=name, lang="ko", home=giok_home)[0] for name in AGENTS}


@pytest.fixture
def bus(giok_home):
    return Bus(giok_home)


def quiet_diaries(home):
    home.update(lambda c: c.setdefault("crossview", {}).update(diary=False))


def test_post_fans_out_to_every_sibling_and_lands_in_inboxes(family, bus):
    m = bus.send("글감 발굴: 기억 에세이", "sion")
    assert m["kind"] == "post"
    assert m["id"] == "cv-000001"
    assert m["recipients"] == ["mion", "sano", "zeon"]
    assert m["rendered"] == f"{TAG} sion: 글감 발굴: 기억 에세이"
    for name in ("zeon", "mion", "sano"):
        [got] = bus.inbox(name)
        assert got["id"] == m["id"]
        assert got["acked"] is None
    assert bus.inbox("sion") == []


def test_post_to_some_and_ack(family, bus):
    quiet_diaries(bus.home)
    m1 = bus.send("one", "zeon", to=["sion"])
    m2 = bus.send("two", "zeon", to=["sion", "mion"])
    assert [m["id"] for m in bus.inbox("sion", unread=True)] == [m1["id"], m2["id"]]
    assert bus.ack("sion", [m1["id"]]) == [m1["id"]]
    assert bus.ack("sion", [m1["id"]]) == []  # idempotent
    assert [m["id"] for m in bus.inbox("sion", unread=True)] == [m2["id"]]
    assert bus.ack("sion") == [m2["id"]]
    assert bus.inbox("sion", unread=True) == []
    assert len(bus.inbox("sion")) == 2
    with pytest.raises(NotFound, match="cv-000001 in sano's inbox"):
        bus.ack("sano", ["cv-000001"])


def test_bad_senders_and_recipients(family, bus):
    with pytest.raises(WorkspaceError, match="unknown workspace 'ghost'"):
        bus.send("hi", "ghost")
    with pytest.raises(WorkspaceError, match="unknown workspace 'ghost'"):
        bus.send("hi", "zeon", to=["ghost"])
    with pytest.raises(InvalidInput, match="to itself"):
        bus.send("hi", "zeon", to=["zeon"])
    with pytest.raises(InvalidInput, match="invalid workspace name"):
        bus.send("hi", "../etc")
    with pytest.raises(InvalidInput, match="empty"):
        bus.send("   ", "zeon")
    with pytest.raises(InvalidInput, match="limit is 4096"):
        bus.send("x" * 5000, "zeon")
    assert bus.stats() == {"posts": 0, "replies": 0, "deliveries": 0}


def test_reply_goes_to_the_original_sender_only(family, bus):
    quiet_diaries(bus.home)
    post = bus.send("브리핑 준비됐어?", "zeon")
    answer = bus.reply(post["id"], "네, 데이터 검증 끝", "mion")
    assert answer["kind"] == "reply"
    assert answer["recipients"] == ["zeon"]
    assert answer["rendered"] == f"{TAG} mion ↩ {post['id']}: 네, 데이터 검증 끝"
    assert [m["id"] for m in bus.inbox("zeon")] == [answer["id"]]
    assert [m["id"] for m in bus.inbox("sion")] == [post["id"]]  # not fanned out


def test_loop_rule_refusals(family, bus):
    quiet_diaries(bus.home)
    post = bus.send("시온: 새 글감", "sion")
    answer = bus.reply(post["id"], "좋아", "zeon")
    with pytest.raises(LoopRefused, match="reply to a reply"):
        bus.reply(answer["id"], "고마워", "sion")
    with pytest.raises(LoopRefused, match="original sender only"):
        bus.send("모두에게", "zeon", to=["mion"], reply_to=post["id"])
    with pytest.raises(InvalidInput, match="sion did not receive"):
        bus.reply(post["id"], "내 글에 내가", "sion")
    with pytest.raises(NotFound, match="no cross-view message cv-999999"):
        bus.reply("cv-999999", "?", "zeon")
    # relaying a relay: the rendered, tagged text, or the same text again from a recipient
    with pytest.raises(LoopRefused, match="relay of a relay"):
        bus.send(post["rendered"], "zeon")
    with pytest.raises(LoopRefused, match="zeon received this text as cv-000001"):
        bus.send("시온:  새 글감", "zeon", to=["mion"])
    assert bus.stats() == {"posts": 1, "replies": 1, "deliveries": 4}
    bus.send("시온: 새 글감", "sion", to=["zeon"])  # its own words again: a new post, allowed


def auto_round(bus, answer: Callable[[int, str, dict], object]) -> tuple[int, int]:
    """Every agent (the i-th, `name`) answers every unread message it has with
    `answer(i, name, message)`, then acks it. Returns (sent, refused)."""
    sent = refused = 0
    for i, name in enumerate(AGENTS):
        for message in bus.inbox(name, unread=True):
            try:
                answer(i, name, message)
                sent += 1
            except LoopRefused:
                refused += 1
            bus.ack(name, [message["id"]])
    return sent, refused


def auto_reply_round(bus) -> tuple[int, int]:
    """Every agent replies to every unread message it has; returns (sent, refused)."""
    return auto_round(
        bus, lambda _i, name, message: bus.reply(message["id"], f"{name} got {message['id']}", name)
    )


def test_four_agents_auto_replying_to_everything_stay_bounded(family, bus):
    """The seed's loop: four agents that answer everything they receive. Each post may
    cause at most (n-1) relays + (n-1) replies = 2(n-1) deliveries; then it stops."""
    for name in AGENTS:
        bus.send(f"{name}의 아침 체크인", name)
    rounds, refused = 0, 0
    while True:
        sent, refusals = auto_reply_round(bus)
        refused += refusals
        rounds += 1
        if not sent and not refusals:
            break
        assert rounds < 10, "the auto-reply loop did not settle"
    n, posts = len(AGENTS), len(AGENTS)
    stats = bus.stats()
    assert stats == {
        "posts": posts,
        "replies": posts * (n - 1),
        "deliveries": posts * 2 * (n - 1),
    }  # 4, 12, 24
    assert refused == posts * (n - 1)  # each reply's receiver tried to answer it and was refused
    assert rounds == 3
    # delivered messages became memory: zeon's diary holds the 3 posts and 3 replies it received
    diary = family["zeon"].read_text(family["zeon"].diary_path())
    assert diary.count(TAG) == 2 * (n - 1)
    assert f"{TAG} sion: sion의 아침 체크인 (cv-000002)" in diary


def test_diary_can_be_switched_off_per_workspace(family, bus, giok_home):
    giok_home.update(lambda c: c["workspaces"]["mion"].update(crossview={"diary": False}))
    m = bus.send("조용히", "zeon", to=["sion", "mion"])
    assert m["transports"]["local"]["diary"] == ["sion"]
    assert m["transports"]["local"]["diary_off"] == ["mion"]
    assert "조용히" in family["sion"].read_text(family["sion"].diary_path())
    assert "조용히" not in family["mion"].read_text(family["mion"].diary_path())
    [got] = bus.inbox("sion")
    assert got["diary"].endswith(f"{TAG} zeon: 조용히 ({m['id']})")
    log = family["sion"].log(5)
    assert log[0]["message"].startswith("diary:")


def test_boot_shows_a_message_once_as_unread_until_acked(family, bus):
    """A message reaches the recipient's boot once, in its own section, until acked; the diary
    note stays searchable but is not injected beside it; the sender's boot does not show it."""
    from giok.lifecycle.boot import build as boot

    m = bus.send("글감 발굴: 기억 에세이", "sion")
    zeon = family["zeon"]
    assert f"({m['id']})" in zeon.read_text(zeon.diary_path())  # the note is written
    text = boot(zeon, record=False).text
    assert text.count("글감 발굴: 기억 에세이") == 1
    assert "## 읽지 않은 메시지" in text and f"({m['id']})" in text
    assert "글감 발굴" not in boot(family["sion"], record=False).text
    bus.ack("zeon", [m["id"]])
    assert "글감 발굴" not in boot(zeon, record=False).text
    assert "글감 발굴" in boot(family["mion"], record=False).text  # mion has not acked


def test_concurrent_senders_in_separate_processes_lose_nothing(family, bus):
    quiet_diaries(bus.home)
    script = (
        "import sys; from giok.lifecycle.crossview import Bus\n"
        "b = Bus()\n"
        "for i in range(15): b.send(f'{sys.argv[1]} msg {i}', sys.argv[1], to=['zeon'])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, name]) for name in ("sion", "mion", "sano")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    inbox = bus.inbox("zeon", limit=1000)
    assert len(inbox) == 45
    assert len({m["id"] for m in inbox}) == 45
    assert sorted(int(m["id"][3:]) for m in inbox) == list(range(1, 46))


@pytest.fixture
def telegram(giok_home, telegram_api):
    bot = telegram_api.bot(chat_id="-100777")
    giok_home.update(
        lambda c: c.update(crossview={"transports": ["local", "telegram"], "diary": False, "telegram": bot})
    )
    return telegram_api


def test_telegram_transport_posts_to_the_group(family, bus, telegram):
    post = bus.send("단톡방에 올림", "sion")
    assert post["transports"]["telegram"] == {"ok": True, "chat_id": "-100777", "message_id": 101}
    [call] = telegram.requests
    assert call["path"] == "/bot123:SECRET/sendMessage"
    assert call["body"] == {"chat_id": "-100777", "text": f"{TAG} sion: 단톡방에 올림"}
    answer = bus.reply(post["id"], "확인", "zeon")
    assert telegram.requests[1]["body"]["reply_parameters"]["message_id"] == 101
    assert bus.get(answer["id"]).transports["telegram"]["ok"] is True


def test_telegram_failure_keeps_the_local_delivery_and_hides_the_token(family, bus, telegram):
    telegram.fail = (400, "Bad Request: chat not found for {path}")
    post = bus.send("실패해도 로컬은 간다", "sion")
    outcome = post["transports"]["telegram"]
    assert outcome["ok"] is False
    assert "chat not found" in outcome["error"]
    assert "SECRET" not in outcome["error"]
    assert len(bus.inbox("zeon")) == 1


def test_telegram_needs_its_settings(family, bus, giok_home, monkeypatch):
    giok_home.update(lambda c: c.update(crossview={"transports": ["telegram"]}))
    assert "chat_id" in bus.send("x", "zeon")["transports"]["telegram"]["error"]
    giok_home.update(lambda c: c.update(crossview={"transports": ["nope"]}))
    with pytest.raises(InvalidInput, match="unknown cross-view transport 'nope'"):
        bus.send("y", "zeon")


def test_a_registered_transport_plugin_is_used(family, bus, giok_home):
    seen = []

    @register_transport
    class Recorder(Transport):
        name = "recorder"

        def deliver(self, message, bus):
            seen.append((message.id, tuple(message.recipients), self.settings["label"]))
            return {"ok": True}

    try:
        giok_home.update(
            lambda c: c.update(crossview={"transports": ["recorder"], "recorder": {"label": "L"}})
        )
        m = bus.send("플러그인", "zeon", to=["sano"])
        assert seen == [(m["id"], ("sano",), "L")]
        assert m["transports"] == {"recorder": {"ok": True}}
    finally:
        TRANSPORTS.pop("recorder", None)


def test_cli_send_inbox_ack(family, cli):
    r = cli("crossview", "send", "CLI에서 보냄", "--from", "zeon", "--to", "sion,mion", "--json")
    assert r.exit_code == 0, r.output
    sent = json.loads(r.output)
    assert sent["recipients"] == ["sion", "mion"]
    r = cli("-w", "sion", "crossview", "inbox", "--unread", "--json")
    data = json.loads(r.output)
    assert [m["id"] for m in data["messages"]] == [sent["id"]]
    r = cli("crossview", "send", "답장", "-w", "sion", "--reply-to", sent["id"])
    assert r.exit_code == 0
    assert "→ zeon" in r.output
    r = cli("crossview", "ack", "-w", "sion", "--all", "--json")
    assert json.loads(r.output)["acked"] == [sent["id"]]
    r = cli("crossview", "inbox", "-w", "sion")
    assert r.output.startswith(f"  {sent['id']}")


def test_cli_errors_are_one_line(family, cli):
    r = cli("crossview", "send", "x", "--from", "zeon", "--to", "sion", "--all")
    assert r.exit_code == 2
    assert r.output.strip() == "Error: give --to or --all, not both"
    r = cli("crossview", "send", "x", "--from", "zeon", "--reply-to", "cv-000001", "--all")
    assert r.exit_code == 2
    assert "loop rule" in r.output
    r = cli("crossview", "send", "x", "--from", "zeon", "--reply-to", "cv-000042")
    assert r.exit_code == 4
    assert r.output.strip() == "Error: no cross-view message cv-000042"
    r = cli("crossview", "ack", "-w", "zeon")
    assert r.exit_code == 2
    assert "--all" in r.output


def auto_post_round(bus) -> tuple[int, int]:
    """Every agent re-posts (a new post, no reply_to) whatever it received: a "Re: …" copy, or
    the tagged line with something in front. Returns (sent, refused)."""

    def repost(i: int, name: str, message: dict) -> object:
        return bus.send(f"Re: {message['text']}" if i % 2 == 0 else f"FYI {message['rendered']}", name)

    return auto_round(bus, repost)


def test_four_agents_auto_posting_copies_of_what_they_receive_stay_bounded(family, bus):
    """Not replying but posting anew ("Re: …", "FYI [단톡방 크로스뷰] …") must not fan out again."""
    quiet_diaries(bus.home)
    for name in AGENTS:
        bus.send(f"{name}의 아침 체크인", name)
    rounds = 0
    while True:
        sent, _ = auto_post_round(bus)
        rounds += 1
        if not sent:
            break
        assert rounds < 6, f"the auto-post loop did not settle: {bus.stats()}"
    n = len(AGENTS)
    assert bus.stats() == {"posts": n, "replies": 0, "deliveries": n * (n - 1)}


@pytest.mark.parametrize(
    "text",
    [
        "FYI [단톡방 크로스뷰] sion: 시온: 새 글감",
        "fyi [Cross-View] sion said something",
        "Re: 시온: 새 글감",
        "RE:   시온 —  새 글감!!",
        "as sion said, 시온: 새 글감. thoughts?",
    ],
)
def test_relays_that_wrap_a_received_message_are_refused(family, bus, text):
    quiet_diaries(bus.home)
    bus.send("시온: 새 글감", "sion")
    with pytest.raises(LoopRefused, match="relay of a relay"):
        bus.send(text, "zeon")


def test_a_short_received_word_does_not_block_ordinary_posts(family, bus):
    quiet_diaries(bus.home)
    post = bus.send("새 글감 있어?", "sion")
    bus.reply(post["id"], "좋아", "zeon")
    assert bus.send("좋아하는 글감 목록 정리함", "sion")["kind"] == "post"
    assert bus.send("오늘은 좋아 보이는 주제가 많다", "sion")["kind"] == "post"
    with pytest.raises(LoopRefused):
        bus.send("좋아", "sion")


def test_the_diary_note_is_tagged_in_the_recipients_language(tmp_path, giok_home, bus):
    """A Korean workspace's diary reads [단톡방 크로스뷰], an English one's [cross-view]."""
    ko = Workspace.init(tmp_path / "nuri", name="nuri", lang="ko", home=giok_home)[0]
    en = Workspace.init(tmp_path / "wren", name="wren", lang="en", home=giok_home)[0]
    bus.send("standup moved to 10:00", "nuri", to=["wren"])
    bus.send("알겠어요", "wren", to=["nuri"])
    assert "[cross-view] nuri: standup moved to 10:00" in en.read_text(en.diary_path())
    assert TAG not in en.read_text(en.diary_path())
    assert f"{TAG} wren: 알겠어요" in ko.read_text(ko.diary_path())
