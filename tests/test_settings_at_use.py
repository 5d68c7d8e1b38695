"""What giok.settings reads at its use, not once at the entry point: an API key named by
configuration, and the environment git runs with (docs/architecture.md, "Settings")."""

from __future__ import annotations

import pytest

from giok.errors import ProviderError
from giok.providers import llm
from giok.store import git


def test_a_key_exported_after_the_workspace_opened_is_the_key_sent(ws, monkeypatch):
    monkeypatch.delenv("GIOK_TEST_JUDGE_KEY", raising=False)
    judge = llm.client({"provider": "openai", "model": "m", "api_key_env": "GIOK_TEST_JUDGE_KEY"})
    with pytest.raises(ProviderError, match="GIOK_TEST_JUDGE_KEY"):
        judge.key()
    monkeypatch.setenv("GIOK_TEST_JUDGE_KEY", " sk-later \n")
    assert judge.key() == "sk-later"


def test_git_runs_with_the_environment_as_it_is_now(tmp_path, monkeypatch):
    git.init(tmp_path)
    monkeypatch.delenv("GIT_AUTHOR_NAME", raising=False)
    monkeypatch.delenv("GIT_AUTHOR_EMAIL", raising=False)
    assert not git.has_identity(tmp_path)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Later Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "later@example.org")
    assert git.has_identity(tmp_path)
    assert git.run(tmp_path, "var", "GIT_AUTHOR_IDENT").stdout.startswith("Later Author <later@example.org>")
