"""giok serve: the web page in a real headless browser (Debian's chromium driven by
Playwright): sign in from the #token= URL, see entries with their layer and expiry, search,
remember → it appears, forget with a reason and a confirmation → it is gone, mark a task done."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest

from serve_support import serve_fixture

CHROMIUM = os.environ.get("GIOK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("no chromium (apt-get install -y chromium) for the browser test", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


srv = serve_fixture("serve-web")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, srv):
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.goto(f"{srv.url}/#token={srv.tokens['zeon-owner']}")  # as `giok web` makes: an owner's
    pg.locator("section.layer").first.wait_for()
    yield pg
    context.close()


def row(page, text):
    return page.locator("tr", has_text=text)


def test_sign_in_from_the_url_shows_entries_with_layer_and_expiry(page):
    assert "token=" not in page.url  # the fragment is dropped from the address bar
    coffee = row(page, "dark roast coffee")
    assert coffee.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M90"
    assert coffee.locator(".expiry").inner_text() == "in 90 days"
    assert coffee.locator(".age").inner_text() == "0 days old"
    korean = row(page, "서준은 매주 금요일에 배포한다")
    assert korean.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M365"
    assert page.locator("#ws-title").inner_text() == "zeon"
    assert [b.inner_text() for b in page.locator("nav button").all()] == ["zeon"]


def test_search_shows_scored_results(page):
    page.click("#tabs button[data-tab=search]")
    page.fill("#search-q", "금요일 배포")
    page.click("#search-form button[type=submit]")
    first = page.locator("#search-results li").first
    first.wait_for()
    assert "금요일" in first.inner_text()
    assert float(first.locator(".score").inner_text()) > 0
    assert "noise floor" in page.locator("#search-cut").inner_text()


def test_remember_appears_and_forget_with_confirm_removes_it(page, srv):
    page.fill("#remember-text", "The design review happens on Wednesdays")
    page.select_option("#remember-layer", "M90")
    page.click("#remember-form button[type=submit]")
    entry = row(page, "design review happens on Wednesdays")
    entry.wait_for()
    assert entry.locator("xpath=ancestor::section[@data-layer]").get_attribute("data-layer") == "M90"
    assert "design review" in srv.workspaces["zeon"].path("MEMORY.md").read_text()

    entry.locator("button.forget").click()  # cancel first: nothing happens
    page.locator("#forget-dialog").wait_for()
    page.click("#forget-dialog button[value=cancel]")
    assert entry.count() == 1

    entry.locator("button.forget").click()
    page.fill("#forget-reason", "a test entry")
    page.click("#forget-confirm")
    entry.wait_for(state="detached")
    assert "design review" not in srv.workspaces["zeon"].path("MEMORY.md").read_text()


def test_mark_a_task_done_and_the_other_tabs(page):
    page.click("#tabs button[data-tab=work]")
    task = page.locator("#tasks li", has_text="Write the release notes")
    task.locator("button.done").click()
    page.locator("#tasks li", has_text="[done]").wait_for()
    assert task.locator("button.done").count() == 0
    page.click("#tabs button[data-tab=boot]")
    page.fill("#boot-budget", "300")
    page.click("#boot-form button[type=submit]")
    page.locator("#boot-left li", has_text="M30").wait_for()
    assert "of 300 tokens" in page.locator("#boot-used").inner_text()
    page.click("#tabs button[data-tab=timeline]")
    page.locator("#diff span.add").first.wait_for()
    assert page.locator("#commits li").count() >= 3


def test_review_tab_resolves_an_item(page, srv):
    from giok.lifecycle.distill import distill

    zeon = srv.workspaces["zeon"]
    zeon.remember("The weekly demo is recorded")
    zeon.remember("The weekly demo is not recorded")
    distill(zeon)
    page.click("#tabs button[data-tab=review]")
    item = page.locator("#review li[data-item]", has_text="weekly demo")
    item.wait_for()
    item.locator("button.resolve[data-choice=both]").click()
    page.locator("#review li.muted", has_text="nothing to review").wait_for()
    assert "(resolved)" in zeon.path("state/review.md").read_text()


def test_a_wrong_token_shows_the_sign_in_form(browser, srv):
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(f"{srv.url}/#token=giok_0000_wrong")
    pg.locator("#login-error").wait_for()
    pg.wait_for_function("document.getElementById('login-error').textContent.length > 0")
    assert "invalid" in pg.locator("#login-error").inner_text()
    assert pg.locator("#app").is_hidden()
    pg.fill("#token-input", srv.tokens["zeon-read"])
    pg.click("#login-form button[type=submit]")
    pg.locator("section.layer").first.wait_for()
    assert pg.locator("#remember-form").is_hidden()  # a read token: no write controls
    assert pg.locator("button.forget").count() == 0
    assert pg.locator('#tabs button[data-tab="timeline"]').is_hidden()  # the history: owner tokens only
    assert pg.locator('#tabs button[data-tab="review"]').is_hidden()
    context.close()


def test_the_date_control_shows_the_past(page):
    page.fill("#at", "2000-01-01")  # before the first commit: one clear error, the page stays
    page.locator("#status", has_text="no history before").wait_for()
    page.fill("#at", dt.date.today().isoformat())
    page.locator("#ws-title", has_text="as of").wait_for()
    assert page.locator("#remember-form").is_hidden()  # the past is read-only
    assert row(page, "dark roast coffee").count() == 1


# -- the layout, read as a person would at a desktop's and a phone's width --------------------
LONG = (
    "The release checklist covers the changelog, the migration notes for every workspace, "
    "the age of each open task, the review of expiring entries and the sign-off by the on-call "
    "engineer, who checks the dashboards, the error budget and the rollback plan before anything ships"
)
LONG_KO = (
    "배포 전에는 변경 기록과 모든 작업 공간의 이전 안내를 확인하고, 열린 작업의 나이와 곧 만료되는 "
    "기억을 검토한 뒤, 당직 엔지니어가 대시보드와 오류 예산과 되돌리기 계획을 확인하고 승인한다"
)

# How many lines a range's glyphs sit on: its boxes sorted top-down, a box starting below the
# bottom of the line so far starts a new line (boxes of one line differ a little in top and height
# when a run falls back to another font).
LINE_COUNT = """const lineCount = (range) => {
  const boxes = [...range.getClientRects()].filter((x) => x.width > 0).sort((a, b) => a.top - b.top);
  let lines = 0, bottom = -Infinity;
  for (const b of boxes) {
    if (b.top >= bottom - 2) { lines += 1; bottom = b.bottom; } else bottom = Math.max(bottom, b.bottom);
  }
  return lines;
};"""

# Every whitespace-separated word under the matched elements whose glyphs sit on more than one
# line: a word broken mid-word ("ag|e", "workspac|e", one letter per line).
BROKEN_WORDS = (
    """(selector) => {"""
    + LINE_COUNT
    + """
  const broken = [];
  for (const root of document.querySelectorAll(selector)) {
    if (!root.getClientRects().length) continue;  // not rendered (a hidden tab)
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/\\S+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        if (lineCount(r) > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""
)

# How many lines each matched element's text takes.
LINES = (
    """(selector) => {"""
    + LINE_COUNT
    + """
  return [...document.querySelectorAll(selector)].map((cell) => {
    const r = document.createRange();
    r.selectNodeContents(cell);
    return [cell.className, cell.textContent, lineCount(r)];
  });
}"""
)

OVERLAPS = """() => {
  const hits = [];
  for (const tr of document.querySelectorAll("section.layer tr[data-id]")) {
    const cells = [...tr.children].map((td) => [td.className, td.getBoundingClientRect()]);
    for (const [i, [a, ra]] of cells.entries())
      for (const [b, rb] of cells.slice(i + 1))
        if (ra.width && rb.width && ra.left < rb.right - 1 && rb.left < ra.right - 1 &&
            ra.top < rb.bottom - 1 && rb.top < ra.bottom - 1) hits.push([tr.dataset.id, a, b]);
  }
  return hits;
}"""

SHORT_CELLS = ", ".join(
    f"section.layer {c}" for c in ["th", "td.age", "td.expiry", "td.refs", "td.scope", "td.meta"]
)


@pytest.fixture(scope="module")
def crowded(srv):
    """Long entries (English and Korean) beside short ones, and an M0 entry replaced by a newer one."""
    zeon = srv.workspaces["zeon"]
    zeon.remember(LONG, layer="M90", force=True)
    zeon.remember(LONG_KO, layer="M365", force=True)
    zeon.diary(LONG)
    old = zeon.remember("Production backups are kept in the Frankfurt bucket", layer="M0", force=True).entry
    new = zeon.remember(
        "Production backups moved to the Seoul bucket", layer="M0", force=True, supersedes=old.id
    ).entry
    assert old is not None and new is not None
    assert f"superseded_by: {new.id}" in zeon.path("MEMORY.md").read_text() or new.id in (
        zeon.path("MEMORY.md").read_text()
    )
    return old.id, new.id


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_layout_reads_at_desktop_and_phone_width(browser, srv, crowded, tmp_path, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.goto(f"{srv.url}/#token={srv.tokens['zeon-owner']}")
    row(pg, "release checklist covers").wait_for()
    row(pg, "배포 전에는 변경 기록과").wait_for()
    pg.screenshot(path=str(tmp_path / f"memory-{width}.png"), full_page=True)

    # the header: the name on one line, every item's words whole
    assert pg.evaluate(LINES, "header h1") == [["", "giok", 1]]
    assert pg.evaluate(BROKEN_WORDS, "header") == []
    # the memory table: each short column on one line, no word of any cell broken (Korean too)
    lines = pg.evaluate(LINES, SHORT_CELLS)
    assert len(lines) > 10
    assert [c for c in lines if c[2] > 1] == []
    assert pg.evaluate(BROKEN_WORDS, "section.layer table, nav, #tabs") == []
    # the text column takes the room the short ones leave
    text_width = pg.locator("tr", has_text="release checklist covers").locator("td.text").bounding_box()
    assert text_width is not None and text_width["width"] > 0.35 * width
    # no two cells of a row on top of each other
    assert pg.evaluate(OVERLAPS) == []
    # and nothing is wider than the window: no sideways scrolling of the page
    assert pg.evaluate("document.documentElement.scrollWidth") <= width
    # nor on the other tabs (each waits on what it loads)
    for name, loaded in [
        ("search", "#search-form"),
        ("boot", "#boot-sections tr"),
        ("work", "#tasks li"),
        ("diary", "#diary-items li"),
        ("timeline", "#diff span.add"),
        ("distill", "#distills li"),
        ("review", "#review li"),
    ]:
        pg.click(f"#tabs button[data-tab={name}]")
        pg.locator(loaded).first.wait_for()
        pg.screenshot(path=str(tmp_path / f"{name}-{width}.png"), full_page=True)
        assert pg.evaluate("document.documentElement.scrollWidth") <= width, name
        assert pg.evaluate(BROKEN_WORDS, f"#tab-{name} :is(h3, th, td, button, label, .meta)") == [], name
    context.close()


def test_a_superseded_entry_is_history_of_the_one_that_replaced_it(page, crowded, tmp_path):
    old_id, new_id = crowded
    page.reload()
    current = page.locator(f"section.layer tr[data-id={new_id}]")
    current.wait_for()
    # not listed as current, in any layer's table
    assert page.locator(f"section.layer tr[data-id={old_id}]").count() == 0
    assert "Frankfurt bucket" not in page.locator("#layers").inner_text()  # the history is folded
    m0 = page.locator("section[data-layer=M0]")
    assert m0.locator("h3").inner_text() == f"M0 · {m0.locator('tr[data-id]').count()}"
    # but reachable from the entry that replaced it
    history = current.locator("details.history")
    assert "replaces 1 earlier entry" in history.locator("summary").inner_text()
    old = history.locator(f"li.superseded[data-id={old_id}]")
    assert old.is_hidden()
    history.locator("summary").click()
    old.wait_for()
    assert "Frankfurt bucket" in old.inner_text()
    assert f"replaced by {new_id}" in old.inner_text()
    page.locator("section[data-layer=M0]").screenshot(path=str(tmp_path / "history.png"))


def test_a_diary_line_shows_its_time_once(page, srv):
    srv.workspaces["zeon"].diary("Paired on the flaky upload test")
    page.click("#tabs button[data-tab=diary]")
    item = page.locator("#diary-items li", has_text="Paired on the flaky upload test")
    item.wait_for()
    time = item.locator("b").inner_text().strip()
    assert item.inner_text() == f"{time} Paired on the flaky upload test"


def test_an_entry_whose_replacement_is_gone_is_listed_as_replaced(page, srv):
    zeon = srv.workspaces["zeon"]
    old = zeon.remember("The office wifi is called giok-guest", layer="M365", force=True).entry
    assert old is not None
    new = zeon.remember(
        "The office wifi is called giok-visitors", layer="M365", force=True, supersedes=old.id
    )
    assert new.entry is not None
    zeon.forget(new.entry.id, "wrong network name")
    page.reload()
    m365 = page.locator("section[data-layer=M365]")
    replaced = m365.locator("details.replaced")
    replaced.wait_for()
    assert m365.locator(f"tr[data-id={old.id}]").count() == 0  # not current
    assert replaced.locator("summary").inner_text() == "replaced · 1"
    replaced.locator("summary").click()
    item = replaced.locator(f"li.superseded[data-id={old.id}]")
    item.wait_for()
    assert "giok-guest" in item.inner_text()
    assert f"replaced by {new.entry.id}" in item.inner_text()
