""" "Now", overridable with $GIOK_NOW (ISO date or date-time) so days can be simulated, and
within one call by `frozen(when)` (time travel reads the past as if it were then)."""

import contextlib
import contextvars
import datetime as dt
from collections.abc import Iterator

from giok import settings
from giok.errors import InvalidInput
from giok.text.lazy import lazy

_DASHES = str.maketrans({"–": "-", "—": "-", "‒": "-", "−": "-"})
_DATE_RE = lazy(r"^\d{4}-\d{2}-\d{2}$")
_FROZEN: contextvars.ContextVar[dt.datetime | None] = contextvars.ContextVar("giok_frozen", default=None)


def now() -> dt.datetime:
    """The current local time, or the time `frozen` holds, or $GIOK_NOW when set."""
    held = _FROZEN.get()
    if held is not None:
        return held
    raw = settings.now_override()
    if not raw:
        return dt.datetime.now().replace(microsecond=0)
    try:
        value = dt.datetime.fromisoformat(raw.translate(_DASHES))
    except ValueError:
        raise InvalidInput(f"GIOK_NOW={raw!r} is not an ISO date or date-time") from None
    return value.replace(tzinfo=None)


def today() -> dt.date:
    return now().date()


def parse_date(text: str) -> dt.date:
    """Parse YYYY-MM-DD, tolerating en/em dashes as publishing tools write them."""
    cleaned = text.strip().translate(_DASHES)
    if not _DATE_RE.match(cleaned):
        raise InvalidInput(f"invalid date {text!r}: expected YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(cleaned)
    except ValueError:
        raise InvalidInput(f"invalid date {text!r}: no such day") from None


def simulated() -> bool:
    """True when $GIOK_NOW sets the clock (commits are then dated by it too)."""
    return bool(settings.now_override())


@contextlib.contextmanager
def frozen(when: dt.datetime) -> Iterator[None]:
    """Within the block (this thread or task only), now() is `when`."""
    token = _FROZEN.set(when.replace(tzinfo=None, microsecond=0))
    try:
        yield
    finally:
        _FROZEN.reset(token)
