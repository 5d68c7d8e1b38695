"""Regular expressions compiled on first use.

giok's modules declare ~190 patterns at module level; compiling them all at import cost most of
a short command's start (`giok hook UserPromptSubmit` runs once per prompt), though each command
uses a few. `lazy(pattern, flags)` takes `re.compile`'s arguments and returns an object with
`re.Pattern`'s methods that compiles on its first call; `.pattern` and `.flags` are read without
compiling, so a pattern built from another one's source stays lazy too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, AnyStr


class LazyPattern:
    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.search(string, *args)

    def match(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.match(string, *args)

    def fullmatch(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, *args)

    def findall(self, string: str, *args: int) -> list[Any]:
        return self.compiled.findall(string, *args)

    def finditer(self, string: str, *args: int) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, *args)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled.subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    @property
    def groupindex(self) -> Any:
        return self.compiled.groupindex

    @property
    def groups(self) -> int:
        return self.compiled.groups

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags!r})"


def lazy(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """`re.compile(pattern, flags)`, compiled when first used."""
    if not isinstance(pattern, str):
        raise TypeError("lazy patterns are str patterns")
    return LazyPattern(pattern, int(flags))
