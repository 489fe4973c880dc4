"""rl_reliable_logger.redaction.redact: one function hides every credential shape we know of."""

from __future__ import annotations

import pytest

from rl_reliable_logger.redaction import redact

KEY = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    "text, secret, kept",
    [
        ("http://alice:hunter2@mlflow.example:5000", "hunter2", "http://alice:***@mlflow.example:5000"),
        ("https://ghp_tok3n@github.com/o/r.git", "ghp_tok3n", "https://***@github.com/o/r.git"),
        ("postgresql://u:p%40ss@db/mlflow", "p%40ss", "postgresql://u:***@db/mlflow"),
        ("https://h/api?x=1&token=abc123&y=2", "abc123", "https://h/api?x=1&token=***&y=2"),
        ("https://h/f?access_token=s3cr3t", "s3cr3t", "access_token=***"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Signature=deadbeef99&X-Amz-Credential=AKIA/x",
            "deadbeef99",
            "X-Amz-Signature=***",
        ),
        ("https://acct.blob.core.windows.net/c?sv=2020&sig=Zm9vYmFy", "Zm9vYmFy", "sig=***"),
        ("failed: Authorization: Bearer eyJhbGciOi.abc.def", "eyJhbGciOi", "Bearer ***"),
        ("api_key='sk-live-123456'", "sk-live-123456", "api_key='***"),
        (f"wandb error: invalid key {KEY}", KEY, "invalid key ***"),
        (f"key local-{KEY} rejected", KEY, "key *** rejected"),
        ("machine api.wandb.ai login user password abcdefgh12", "abcdefgh12", "password ***"),
        ("machine h\n  login u\n  password secret99", "secret99", "password ***"),
        ("default login x password abcdef77", "abcdef77", "password ***"),
        # a password holding '@' is hidden up to the last '@' of the authority, not the first
        ("http://alice:p@ss@mlflow.example:5000/api", "ss@mlflow", "http://alice:***@mlflow.example:5000/api"),
        ("https://bob:a@b@c@wandb.example", "b@c", "https://bob:***@wandb.example"),
        ("see http://u:p@q@h1/x and http://v:w@x@h2/y", "q@h1", "http://u:***@h1/x and http://v:***@h2/y"),
    ],
)
def test_redacts(text, secret, kept):
    out = redact(text, environ={})
    assert secret not in out and kept in out


@pytest.mark.parametrize(
    "text",
    [
        "File 'timesteps.npy' is encrypted, password required for extraction",  # zipfile's words (issue 54)
        "FATAL: password authentication failed for user bob",
        "the password field is empty",
    ],
)
def test_the_word_password_in_a_sentence_is_no_secret(text):
    assert redact(text, environ={}) == text


def test_known_environment_secrets_are_removed_wherever_they_appear():
    env = {"WANDB_API_KEY": "zz-secret-zz", "MLFLOW_TRACKING_PASSWORD": "pw-9876", "MY_SERVICE_TOKEN": "tok-55555"}
    out = redact("key zz-secret-zz, pw pw-9876 and tok-55555 in a message", environ=env)
    assert "zz-secret-zz" not in out and "pw-9876" not in out and "tok-55555" not in out
    assert "<$WANDB_API_KEY>" in out and "<$MLFLOW_TRACKING_PASSWORD>" in out


def test_harmless_text_and_git_hashes_are_left_alone():
    env = {"FEATURE_TOKEN": "1"}  # too short to search for
    for text in (
        "sqlite:///tmp/mlflow.db",
        "http://127.0.0.1:5000/#/experiments/1/runs/abc",
        f"git commit {KEY}",
        "Token expired; Basic authentication failed 1",
        "DrQ(eps) / Pong run '3'",
        "mail bob@example.com about http://host/a@b",
    ):
        assert redact(text, environ=env) == text


def test_secret_names():
    from rl_reliable_logger.redaction import is_secret_name

    assert all(map(is_secret_name, ["api_key", "WANDB_API_KEY", "db-password", "token", "auth", "private_key"]))
    assert not any(map(is_secret_name, ["tokens_per_step", "lr", "keyboard", "author", "score", "monkey"]))
