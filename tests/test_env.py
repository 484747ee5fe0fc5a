import pytest
from django.core.exceptions import ImproperlyConfigured

from perfhub.env import env_bool, env_int, env_list


def test_env_bool_reads_common_spellings_and_refuses_junk(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG") is True
    monkeypatch.setenv("X_FLAG", "0")
    assert env_bool("X_FLAG", True) is False
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        env_bool("X_FLAG")


def test_env_int_accepts_underscores_and_refuses_junk(monkeypatch):
    monkeypatch.setenv("X_NUM", "2_147_483_648")
    assert env_int("X_NUM", 1) == 2 * 1024**3
    monkeypatch.delenv("X_NUM")
    assert env_int("X_NUM", 7) == 7
    monkeypatch.setenv("X_NUM", "2GB")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("X_NUM", 1)


def test_env_list_splits_and_trims(monkeypatch):
    monkeypatch.setenv("X_LIST", " a.example, b.example ,,")
    assert env_list("X_LIST") == ["a.example", "b.example"]
