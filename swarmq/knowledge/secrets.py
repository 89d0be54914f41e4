"""Secret detection and redaction: credentials never enter knowledge, nor leave it.

A lesson learned from a transcript can carry whatever the session printed: an API key pasted
into a shell, a ``.env`` file read by a tool, a private key. Everything that writes or shows
knowledge (forge candidates, every add to a store, the injected block, ``lookup`` output, the
``knowledge audit --secrets`` rewrite) passes its text through :func:`redact`, which replaces
each secret with a marker naming its kind (``[REDACTED:aws-access-key]``), so the lesson keeps
its sense and the reader sees that something was removed. A text that is mostly secret has no
lesson left in it: :attr:`Redaction.mostly_secret` tells callers to refuse it.

``detect-secrets`` (Yelp) was considered: it is not in the pinned environment, and its plugins
scan files line by line with a baseline workflow, not a string to redact in place. The formats
below follow the same providers' documentation, each cited where it is defined; the generic
rules (assignments in ``.env``-like text) need a secret-sounding name and a value that is not
a placeholder, and for keys and tokens enough entropy, so prose and code identifiers pass.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MARKER = "[REDACTED:{kind}]"
REDACTED_KEY = "secrets_redacted"
"""The entry key listing the kinds of secret redacted from it (absent when none was)."""
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

MOSTLY_SECRET = 0.5
"""A text whose secrets cover at least this share of its non-space characters is refused."""
MIN_LESSON_LEFT = 15
"""Fewer readable characters than this left once the secrets are out: nothing to learn."""


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    """A text with its secrets replaced by markers, and what was found."""

    text: str
    findings: tuple[Finding, ...]
    mostly_secret: bool

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})

    @property
    def changed(self) -> bool:
        return bool(self.findings)


_B64 = r"A-Za-z0-9+/"
_FIXED: tuple[tuple[str, re.Pattern[str]], ...] = (
    # PEM private keys (RFC 7468 section 10 and OpenSSH's PROTOCOL.key): the block up to its END
    # line, or, cut off, as far as base64, spaces and escaped newlines go.
    (
        "private-key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[A-Za-z0-9+/=\s\\:,.-]{0,8000}?-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"|[A-Za-z0-9+/=\s\\]{0,8000})"
        ),
    ),
    # Anthropic API keys: https://docs.anthropic.com/en/api/overview (``sk-ant-api03-…``).
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}")),
    # OpenAI keys: https://platform.openai.com/docs/api-reference/authentication
    # (``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``); Stripe secret/restricted keys
    # (https://docs.stripe.com/keys): ``sk_live_…``, ``rk_live_…``.
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    # AWS access key ids: https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html
    # (``AKIA`` long-term, ``ASIA`` temporary; 20 upper-case letters and digits).
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    # GitHub tokens: https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b")),
    # Slack tokens: https://api.slack.com/concepts/token-types (``xoxb-``, ``xoxp-``, …).
    ("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    # Google API keys: https://cloud.google.com/docs/authentication/api-keys (``AIza`` + 35).
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    # npm tokens: https://docs.npmjs.com/about-access-tokens (``npm_`` + 36).
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    # JSON Web Tokens (RFC 7519): three base64url parts, the first two JSON objects (``eyJ``).
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # Basic credentials in a URL (RFC 3986 userinfo): ``scheme://user:password@host``.
    ("url-password", re.compile(r"(?<=://)[^\s:/@'\"]{1,64}:[^\s@/'\"]{3,128}(?=@)")),
)

# The AWS secret access key (40 base64 characters, same page as the access key id) has no
# prefix: it is found by its name, or anywhere in a text that also carries an access key id.
_AWS_SECRET_NAMED = re.compile(
    r"(?i)(?:aws_?secret(?:_?access)?_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
    rf"([{_B64}]{{40}})(?![{_B64}])"
)
_AWS_SECRET_BARE = re.compile(rf"(?<![{_B64}])([{_B64}]{{40}})(?![{_B64}=])")

_SECRET_NAME = r"[A-Za-z0-9_.-]{0,40}?(?:pass(?:word|wd)|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential|client[_-]?secret|key)[A-Za-z0-9_.-]{0,20}"
# ``NAME=value`` / ``NAME: value`` (``.env``, YAML, shell exports) and ``"name": "value"``.
_ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_])(?:export\s+)?[\"']?({_SECRET_NAME})[\"']?\s*(?:=|:)\s*"
    r"(\\\"[^\"\\\n]{4,200}\\\"|\"[^\"\n]{4,200}\"|'[^'\n]{4,200}'|[^\s\"',;`)}\]&\\]{4,200})"
)
"""The value quoted, quoted with JSON's escaped quotes (``KEY=\\"…\\"`` in a tool output kept as
a JSON string), or bare."""
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?[a-z_]+\)?s?|x+|\*+|\.+|"
    r"(?:your|my|the|some|example|sample|dummy|placeholder|changeme|change-me|redacted|none|null|"
    r"true|false|undefined|string|str|int|bool|required|optional|env|secret|password|token|"
    r"xxx|todo|tbd)[a-z0-9_-]*)$"
)
_CODE_VALUE = re.compile(
    r"[()\[\]{}]|^(?:os\.|process\.env|env\.|self\.|this\.|config\.|settings\.)"
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|^[:/~]|^\./|^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$"
)
_PASSWORD_NAME = re.compile(r"(?i)pass(?:word|wd)|pwd|secret")


_DEFAULT_PASSWORDS = frozenset({"guest", "admin", "root", "postgres", "pass", "user", "test"})


def _default_password(value: str) -> bool:
    """A documented default (RabbitMQ's ``guest:guest``) or a placeholder, not a secret."""
    return value.lower() in _DEFAULT_PASSWORDS or bool(_PLACEHOLDER.match(value))


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _assigned_secret(name: str, value: str) -> bool:
    """Whether ``value`` assigned to ``name`` looks like a real credential."""
    value = value.strip("\"'")
    if len(value) < 6 or _MARKER.search(value) or _PLACEHOLDER.match(value):
        return False
    if not value.isascii() or " " in value or _CODE_VALUE.search(value):
        return False  # prose, a path or code (a call, an attribute, a symbol, an identifier)
    if value.isalpha() and value[1:].islower():
        return False  # a plain word
    if _PASSWORD_NAME.search(name):
        return True
    return (
        len(value) >= 12
        and _entropy(value) >= 3.0
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


# Every pattern above needs one of these (a provider prefix, a PEM header, a URL's ``://``, or a
# secret-sounding name for an assignment or a named AWS secret): most texts have none, and one
# search spares them the dozen scans below.
_GATE = re.compile(
    r"-----BEGIN|sk-|sk_|rk_|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox|AIza|npm_|eyJ|://"
    r"|(?i:pass|pwd|secret|token|key|auth|credential)"
)


def _spans(text: str) -> list[Finding]:
    if _GATE.search(text) is None:
        return []
    found: list[Finding] = []
    for kind, pattern in _FIXED:
        found.extend(
            Finding(kind, m.start(), m.end())
            for m in pattern.finditer(text)
            if kind != "url-password" or not _default_password(m.group().partition(":")[2])
        )
    for match in _AWS_SECRET_NAMED.finditer(text):
        found.append(Finding("aws-secret-key", match.start(1), match.end(1)))
    if any(f.kind == "aws-access-key" for f in found):
        for match in _AWS_SECRET_BARE.finditer(text):
            value = match.group(1)
            if _entropy(value) >= 3.5 and any(c.isdigit() for c in value):
                found.append(Finding("aws-secret-key", match.start(1), match.end(1)))
    for match in _ASSIGNMENT.finditer(text):
        if _assigned_secret(match.group(1), match.group(2)):
            start, end = match.span(2)
            if text.startswith('\\"', start):
                start, end = start + 2, end - 2
            elif text[start] in "\"'":
                start, end = start + 1, end - 1
            found.append(Finding("secret-assignment", start, end))
    return found


def _merged(found: list[Finding]) -> list[Finding]:
    """Overlapping findings as one, the earliest (then longest) finding's kind kept."""
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.kind, last.start, max(last.end, f.end))
        else:
            out.append(f)
    return out


def redact(text: str) -> Redaction:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]`` (idempotent)."""
    findings = _merged(_spans(text)) if text else []
    if not findings:
        return Redaction(text, (), False)
    parts: list[str] = []
    at = 0
    for f in findings:
        parts.append(text[at : f.start])
        parts.append(MARKER.format(kind=f.kind))
        at = f.end
    parts.append(text[at:])
    out = "".join(parts)
    secret = sum(len("".join(text[f.start : f.end].split())) for f in findings)
    total = len("".join(text.split()))
    left = len(" ".join(_MARKER.sub(" ", out).split()))
    mostly = secret >= MOSTLY_SECRET * total or left < MIN_LESSON_LEFT
    return Redaction(out, tuple(findings), mostly)


def redacted(text: str) -> str:
    """Just the redacted text (display paths: the injected block, ``lookup`` output)."""
    return redact(text).text


def has_secret(text: str) -> bool:
    return bool(_spans(text))


def redact_fields(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """An entry's fields with every secret redacted and the kinds added to
    :data:`REDACTED_KEY`, or ``None`` when it holds none (then nothing changes)."""
    kinds: set[str] = set()

    def seen(found: Redaction) -> None:
        kinds.update(found.kinds)

    cleaned: Any = redact_strings(dict(data), seen)
    if not kinds:
        return None
    before = data.get(REDACTED_KEY)
    cleaned[REDACTED_KEY] = sorted(kinds | set(before if isinstance(before, list) else ()))
    return dict(cleaned)


def redact_strings(value: object, on: Callable[[Redaction], None] | None = None) -> object:
    """``value`` (JSON-like) with every string in it redacted; ``on`` sees each change."""
    if isinstance(value, str):
        result = redact(value)
        if result.changed and on is not None:
            on(result)
        return result.text
    if isinstance(value, list):
        return [redact_strings(v, on) for v in value]
    if isinstance(value, dict):
        return {k: redact_strings(v, on) for k, v in value.items()}
    return value
