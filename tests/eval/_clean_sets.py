"""The clean (held-apart) labelled sets and the checks every one of them passes: its labels load
with the repo's own loaders and fit their files, and its users are named in no other evaluation
file, so a figure on it is a reading on data nothing was tuned on.

One row of ``FORGE_SETS`` or ``REPLAY_SETS`` per set; ``test_clean_sets.py`` runs each check on
each row. The checks were first written one file per set (``test_heldout7_h6_sets.py``,
``test_heldout8_h7_sets.py``, ``test_heldout9_h8_sets.py``, ``test_heldout10_h9_sets.py``,
``test_heldout11_sets.py``, ``test_heldout12_sets.py``, ``test_heldout13_sets.py``; later sets
came as rows); each check one of those files made is made here on its set, and where a check held
on every set it is now made on every set.

To add a set: a ``ForgeSet`` row in FORGE_SETS or a ``ReplaySet`` row (``twin``: its day's split).
A blind label review of a forge split is its row's ``qa`` (the corrected copy's file name). A
forge split gathered from heldout32 on lists every lesson of what it keeps (balanced by more
users and cuts, never by dropping one), says ``self_contained=True`` and has a blind second
labelling (``second=True``); ``tools/label_agreement.py forge`` reads it with both.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.eval.forge import LabelledSession, Lesson
from swarmq.eval.forge import load_labels as load_forge_labels
from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import Match, Project
from swarmq.eval.replay_labels import load_labels as load_replay_labels
from swarmq.transcripts.detect import detect_format
from swarmq.transcripts.reader import open_transcript

REPO = Path(__file__).resolve().parents[2]
EVAL = REPO / "eval"
SECRET_PREFIXES = ("ghp_", "github_pat_", "pplx-", "tvly-", "figd_", "AIza", "PRIVATE KEY-----")
"""Literals of credentials that must not be left in any set's sessions (SOURCES-*.md say which
ones were replaced by ``[REDACTED]``)."""
HELDOUT12_SECRETS = ("ghp_", "github_pat_", "eyJhbGci", "re_fC9", "superpassword", "@gmail.com")
"""Starts of what the heldout12 split and the h10 replay set (collected together) replaced: the n8n
JWT and Gmail addresses (SOURCES-heldout12.md), the Resend key and the Postgres password of h10's
`.env` (SOURCES-h10.md); the list of their first, per-set test, checked on both."""


def other_evaluation_files(ours: set[Path]) -> list[Path]:
    """Every labels and sources file of eval/ but ``ours``, and the quality report (it names the
    repositories forge's rules were studied on)."""
    found = [
        *EVAL.glob("*/labels*.yaml"),
        *EVAL.glob("*/SOURCES*.md"),
        REPO / "docs" / "QUALITY.md",
    ]
    return sorted(p for p in found if p not in ours)


_SQUASHED = str.maketrans("", "", "\n #>*-")


def _squash(text: str) -> str:
    return text.lower().translate(_SQUASHED)


@functools.cache
def _forge_labels(path: Path) -> tuple[LabelledSession, ...]:
    """A forge labels file, loaded once per process: each set's check reads every other set's."""
    return tuple(load_forge_labels(path))


@functools.cache
def _squashed_file(path: Path) -> str:
    """A file's squashed text, read once per process: every set's check asks of the same files
    (the quality report among them, hundreds of kilobytes) for each of its names."""
    return _squash(path.read_text(encoding="utf-8"))


def named_anywhere(owner: str, paths: list[Path]) -> list[Path]:
    """Files that name ``owner`` (case-insensitively, also when a line break, a comment or quote
    marker or a hyphen falls inside the name)."""
    needle = _squash(owner)
    return [p for p in paths if needle in _squashed_file(p)]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def session_text(path: Path) -> str:
    """Every string of the session's records, decoded (a label's words are read in the text the
    agent and the tools wrote, not in its JSON escaping)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(s for line in lines if line.strip() for s in _strings(json.loads(line)))


@dataclass(frozen=True)
class ForgeSet:
    """A held-apart forge split: ``eval/forge/labels-<name>.yaml`` and ``SOURCES-<name>.md``."""

    name: str
    """``heldout7``: the files' suffix."""
    formats: Mapping[str, int]
    """Sessions per transcript format (their sum is the number of sessions)."""
    repos: int
    """Public repositories the sessions come from."""
    lessons: int
    """Labelled lessons, all sessions together."""
    tool_errors: int
    """Of those, lessons of kind ``tool-error``."""
    without_lessons: int
    """Sessions labelled ``none``."""
    max_bytes: int
    """The sessions' files together stay under this size."""
    missing_word: tuple[str, str]
    """A session of the split and a word it never says: the words check can fail on this set."""
    accounts: tuple[str, ...] = ()
    """Account names inside the sessions' paths and records besides the repositories' owners."""
    redacted: Mapping[str, int] = field(default_factory=dict)
    """Session file → how many ``[REDACTED]`` markers SOURCES says it holds."""
    secrets: tuple[str, ...] = ()
    """Literals of this set's replaced secrets (besides ``SECRET_PREFIXES``) that must be gone,
    from the files as written and from the text their records decode to."""
    quarter_per_user: bool = False
    """No user holds more than a quarter of the lessons (a rule of the split's selection)."""
    self_contained: bool = False
    """Every lesson's own sentence holds all of its ``words``, so the word rule credits a
    candidate that says the lesson rather than one that quotes strings the lesson does not say
    (an output's count, a user's exact phrasing): asked of the splits gathered after heldout31,
    whose predecessors' own sentences held their words for 33-75 % of lessons
    (``tools/label_agreement.py self``)."""
    second: bool = False
    """An independent, blind second labelling of the same sessions is at
    ``eval/forge/second/labels-<name>-second.yaml`` (``tools/label_agreement.py pair`` and
    ``forge`` read it): it holds the same sessions, and its lessons, like the splits gathered
    after heldout31, hold their own words."""
    qa: str | None = None
    """The file name of a blind label review's corrected copy of the labels
    (``labels-<name>-qa.yaml``, its changes listed in SOURCES), or None. The original stays as it
    was committed before forge ran; the copy holds the same sessions, and its lessons differ only
    by rewording and by splits, so it is checked like the original and against it."""

    @property
    def labels(self) -> Path:
        return EVAL / "forge" / f"labels-{self.name}.yaml"

    @property
    def qa_labels(self) -> Path | None:
        return None if self.qa is None else EVAL / "forge" / self.qa

    def own_labels(self) -> set[Path]:
        """Its labels file and, when it has one, the review's copy: files that hold its sessions."""
        return {self.labels} if self.qa_labels is None else {self.labels, self.qa_labels}

    @property
    def sources(self) -> Path:
        return EVAL / "forge" / f"SOURCES-{self.name}.md"

    @property
    def second_labels(self) -> Path:
        return EVAL / "forge" / "second" / f"labels-{self.name}-second.yaml"

    def sessions(self) -> list[LabelledSession]:
        return list(_forge_labels(self.labels))


@dataclass(frozen=True)
class ReplaySet:
    """A held-apart replay set: ``eval/replay/labels-<name>.yaml``, ``SOURCES-<name>.md`` and the
    histories under ``histories-<name>/``."""

    name: str
    """``h6``: the files' suffix."""
    projects: tuple[str, ...]
    """The held-apart projects' ids, in the labels' order."""
    recurrences: int
    """Labelled recurrences, all mistakes of all projects together."""
    owners: tuple[str, ...]
    """The set's user first, then account names inside its paths and records."""
    twin: str | None
    """The forge split collected the same day (its files may name this set's user to say it is
    not in it), or None."""
    max_bytes: int
    """The histories' files together stay under this size."""
    min_mistakes: int = 1
    """Mistakes each project has at least."""
    secrets: tuple[str, ...] = ()
    """Literals of the secrets SOURCES says were replaced in the histories, which must be gone
    (``SECRET_PREFIXES`` is not applied: h8's SOURCES keeps a `tvly-` placeholder); a row with
    none gets no secrets check."""
    redacted: int = 0
    """``[REDACTED]`` markers SOURCES says the histories hold, all files together."""
    missing_word: str | None = None
    """A word none of the set's sessions says; a row that names one has every ``match`` group
    checked against its sessions' text (the sets labelled before that check have none)."""

    @property
    def labels(self) -> Path:
        return EVAL / "replay" / f"labels-{self.name}.yaml"

    @property
    def sources(self) -> Path:
        return EVAL / "replay" / f"SOURCES-{self.name}.md"

    @property
    def history(self) -> Path:
        return EVAL / "replay" / f"histories-{self.name}"

    def held_apart(self) -> tuple[Project, ...]:
        return load_replay_labels(self.labels).select("held-apart")


FORGE_SETS = (
    ForgeSet(
        "heldout7",
        formats={"claude-code": 12, "codex-rollout": 5},
        repos=9,
        lessons=29,
        tool_errors=22,
        without_lessons=4,
        max_bytes=2_200_000,
        missing_word=("cc-adrian-plugins-none.jsonl", "schtasks"),
    ),
    ForgeSet(
        "heldout8",
        formats={"claude-code": 5, "codex-rollout": 1},
        repos=3,
        lessons=12,
        tool_errors=8,
        without_lessons=2,
        max_bytes=1_400_000,
        missing_word=("cc-zorrik-spot-check-none.jsonl", "libasound2t64"),
    ),
    ForgeSet(
        "heldout9",
        formats={"claude-code": 17, "codex-rollout": 4},
        repos=8,
        lessons=41,
        tool_errors=18,
        without_lessons=3,
        max_bytes=3_200_000,
        missing_word=("cc-cgd-gemini-none.jsonl", "schtasks"),
    ),
    ForgeSet(
        "heldout10",
        formats={"claude-code": 13, "codex-rollout": 8},
        repos=11,
        lessons=34,
        tool_errors=14,
        without_lessons=3,
        max_bytes=3_000_000,
        missing_word=("cc-omega-refusal-none.jsonl", "libasound2t64"),
        redacted={"cc-bvt-desinstalador-quotes.jsonl": 20},
    ),
    ForgeSet(
        "heldout11",
        formats={"claude-code": 9, "codex-rollout": 7},
        repos=6,
        lessons=16,
        tool_errors=11,
        without_lessons=3,
        max_bytes=3_000_000,
        missing_word=("cc-gym-help-none.jsonl", "index.lock"),
        # `zeus`, `teamspace` and `tvi` are left out: Lightning AI Studio's generic account and
        # path, and a string found inside squashed words, all disclosed in SOURCES-heldout11.md
        accounts=("tiagoyokoyama", "AceTheDactyl", "acead", "asauafth"),
        redacted={"cc-eq-perplexity-401.jsonl": 34, "cx-avc-tsx-eperm.jsonl": 6},
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout12",
        formats={"claude-code": 14, "codex-rollout": 4},
        repos=10,
        lessons=22,
        tool_errors=14,
        without_lessons=3,
        max_bytes=3_000_000,
        missing_word=("cc-capsule-hi-none.jsonl", "dubious ownership"),
        # the generic accounts (`zak`, `nick`, `admin`, `apple`, `claude-user`) are left out, as
        # SOURCES-heldout12.md discloses
        accounts=("Parker", "moxa", "Niraj", "namma", "ryoryo"),
        redacted={
            "cx-twstock-ps5-n8n.jsonl": 7,
            "cc-dropbox-git-missing.jsonl": 10,
            "cc-vasp-auto-approve.jsonl": 4,
            "cc-buildroot-ci-rev.jsonl": 2,
        },
        secrets=HELDOUT12_SECRETS,
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout13",
        formats={"claude-code": 7, "codex-rollout": 10},
        repos=11,
        lessons=24,
        tool_errors=18,
        without_lessons=3,
        max_bytes=2_200_000,
        missing_word=("cc-kusta-mcp-none.jsonl", "rtm_newaddr"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`ubuntu`, `WIN10`, `aaa`, `this_studio`) are left out, as
        # SOURCES-heldout13.md discloses. `h-morishita` is the Linux account of the Chrome
        # extension's owner.
        accounts=("kusta", "wjx", "matt24", "akhil", "h-morishita"),
        redacted={"cc-wsl-gh-ssh-keyscan.jsonl": 13, "cx-qz-job-logs-timeout.jsonl": 3},
        # personal e-mail addresses replaced by [REDACTED], checked gone by their local part
        secrets=("eyerematthew2002", "cqzxwjx"),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout14",
        formats={"claude-code": 3, "codex-rollout": 11},
        repos=12,
        lessons=26,
        tool_errors=14,
        without_lessons=1,
        max_bytes=3_600_000,
        missing_word=("cx-obsidian-hello-none.jsonl", "ssh-keyscan"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`ASUS`, `SOL`, `node`, `NETID`, `zeus`) are left out, as
        # SOURCES-heldout14.md discloses
        accounts=(
            "georg",
            "thorstenhindermann",
            "kushjariwla",
            "lilian.pigassou",
            "jeremiahotis",
            "s8117",
            "ErinDC6",
            "bime-bragi",
        ),
        redacted={"cx-motaba-resume-tty.jsonl": 3},
        # the refresh token's start of the Codex login file a session printed, checked gone
        secrets=("rt_UITu1e65", "71832d96-0fbe"),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout15",
        formats={"claude-code": 10, "codex-rollout": 2},
        repos=7,
        lessons=27,
        tool_errors=13,
        without_lessons=1,
        max_bytes=4_000_000,
        missing_word=("cc-familiar-ytmp3-none.jsonl", "libgbm.so.1"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`patrick`, `eric`, `root`) are left out, as SOURCES-heldout15.md
        # discloses
        accounts=("oliy", "o.young", "jschuss", "araki", "ygkim"),
        redacted={"cc-reef-bare-dotfiles.jsonl": 2},
        # the personal e-mail address of a `git log` output, checked gone by its domain
        secrets=("@gmail.com",),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout16",
        formats={"claude-code": 6, "codex-rollout": 6},
        repos=10,
        lessons=24,
        tool_errors=10,
        without_lessons=1,
        max_bytes=5_200_000,
        missing_word=("cc-its-uvx-none.jsonl", "libgbm.so.1"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`ubuntu`, `root`, `vscode`) are left out, as SOURCES-heldout16.md
        # discloses
        accounts=("keenan", "goki", "hericdev", "ivanma", "kylev"),
        redacted={"cc-figma-mcp-global.jsonl": 10, "cc-esp32-vim-coc.jsonl": 3},
        # the two personal e-mail addresses, checked gone by their domain
        secrets=("@gmail.com",),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout17",
        formats={"claude-code": 6, "codex-rollout": 6},
        repos=10,
        lessons=25,
        tool_errors=13,
        without_lessons=2,
        max_bytes=5_500_000,
        missing_word=("cc-pomodoro-none.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`david`, `user`, `root`) and the owners' own names (`clara`,
        # `marios390`) are left out, as SOURCES-heldout17.md discloses
        accounts=("jacman", "kim-eunran", "neo_z", "jesper"),
        # nothing was replaced (SOURCES-heldout17.md): the literal prefixes of credentials stay
        # absent (checked on every row through SECRET_PREFIXES)
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout18",
        formats={"claude-code": 5, "codex-rollout": 5},
        repos=9,
        lessons=23,
        tool_errors=13,
        without_lessons=2,
        max_bytes=4_700_000,
        missing_word=("cx-devmap-review-none.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the first names (`jay`, `lewis`, `vish`, `nathaniel`, `ubin`) and the start of an
        # owner's own name (`kenwe`) are left out, as SOURCES-heldout18.md discloses
        accounts=("ulas.sancak", "ahanna13", "amitjardosh"),
        redacted={"cx-pincodes-uconv-tty.jsonl": 9, "cc-todos-preview-node-path.jsonl": 3},
        # the replaced e-mail addresses, checked gone by their local parts
        secrets=("vish.desai@", "pramoda@", "pramado@"),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout19",
        formats={"claude-code": 5, "codex-rollout": 4},
        repos=8,
        lessons=21,
        tool_errors=12,
        without_lessons=1,
        max_bytes=3_100_000,
        missing_word=("cx-kriate-constitution-none.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`root`, `rj`, `whit`) and an owner's own first name (`valeriy`) are
        # left out, as SOURCES-heldout19.md discloses
        accounts=("jtowe", "paqurin", "m_srnic", "mattabar", "thuong"),
        quarter_per_user=True,
    ),
    ForgeSet(
        "heldout20",
        formats={"claude-code": 5, "codex-rollout": 4},
        repos=7,
        lessons=26,
        tool_errors=19,
        without_lessons=1,
        max_bytes=1_800_000,
        missing_word=("cx-excalidraw-mcp-none.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic ones (`Administrator`, `ubuntu`, the Android app account `u0_a240`) and a
        # first name already in earlier files (`Oleh`) are left out, as SOURCES-heldout20.md
        # discloses
        accounts=("delamente", "bankstartup2025", "banknakorn", "huangqinghao", "duong"),
        redacted={
            "cx-dazi-symlink-depth.jsonl": 8,
            "cc-n8n-cloudshell-sudo.jsonl": 4,
            "cc-delamente-claude-install.jsonl": 1,
        },
        # the replaced contact handle, service password and e-mail address, checked gone
        secrets=("kirakira", "Banknakorn00", "historiasdelamente@"),
        quarter_per_user=True,
        qa="labels-heldout20-qa.yaml",
    ),
    ForgeSet(
        "heldout21",
        formats={"claude-code": 6, "codex-rollout": 6},
        repos=9,
        lessons=24,
        tool_errors=15,
        without_lessons=1,
        max_bytes=2_200_000,
        missing_word=("cx-useful-credits-none.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic `root` and an owner's own name (`tarive`) are left out, as
        # SOURCES-heldout21.md discloses
        accounts=("taejo", "tetsuya.takasawa", "nathanhart", "timoptimothy", "pbuch"),
        redacted={
            "cc-mcp-add-dash-y.jsonl": 45,
            "cc-serena-gitbash-cd.jsonl": 4,
            "cc-tpu-gemini-npm-sudo.jsonl": 12,
        },
        # the Smithery key, the personal and Adobe account identifiers and two npm maintainers'
        # personal addresses, checked gone by their starts and their domain
        secrets=("c49f62ae-c243", "taejoong", "519312B35DA8", "@gmail.com"),
        quarter_per_user=True,
        # the label review of 2026-12-07 (SOURCES-heldout21.md, "Label review"): 5 lessons split,
        # 29 lessons in all
        qa="labels-heldout21-qa.yaml",
    ),
    ForgeSet(
        "heldout22",
        formats={"claude-code": 8},
        repos=7,
        lessons=14,
        tool_errors=11,
        without_lessons=0,
        max_bytes=700_000,
        missing_word=("cc-termux-tmp-eacces.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic `root` is left out, as SOURCES-heldout22.md discloses
        accounts=("avid_arrajeedavey", "yamaj", "wiwcw"),
        redacted={
            "cc-todoist-mcp-header-order.jsonl": 7,
            "cc-uranai-gh-tarball-token.jsonl": 7,
            "cc-jake-read-chunks.jsonl": 3,
            "cc-jake-read-token-limit.jsonl": 2,
        },
        # the Todoist API token, the GitHub token and the dashboard's default admin password,
        # checked gone by their starts
        secrets=("4e8c6c8148d2", "CRW5HQqOB97", "Jake@20"),
        quarter_per_user=True,
        # the label review of 2026-12-07, made after forge's first reading (SOURCES-heldout22.md,
        # "Label review"): 2 lessons split, 5 added, 21 lessons in all
        qa="labels-heldout22-qa.yaml",
    ),
    ForgeSet(
        "heldout23",
        formats={"claude-code": 5, "codex-rollout": 3},
        repos=7,
        lessons=17,
        tool_errors=11,
        without_lessons=0,
        max_bytes=2_300_000,
        missing_word=("cc-tpu-cherry-pick-ident.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners;
        # the generic `macbook` and `stell` (found inside other files' words) are left out, as
        # SOURCES-heldout23.md discloses
        accounts=("farha", "bayur", "tarading", "lu801", "choiminsuk"),
        redacted={"cc-tpu-cherry-pick-ident.jsonl": 3},
        # the user's personal Gmail address, checked gone by its local part and domain
        secrets=("tara.wind", "@gmail.com"),
        quarter_per_user=True,
        # words made self-contained (SOURCES-heldout23.md, "Self-contained words"): only
        # `words` change, every lesson's sentence holds its own
        qa="labels-heldout23-qa.yaml",
    ),
    ForgeSet(
        "heldout24",
        formats={"claude-code": 5, "codex-rollout": 3},
        repos=8,
        lessons=23,
        tool_errors=20,
        without_lessons=0,
        max_bytes=2_800_000,
        missing_word=("cc-chatbot-worktree-branch-cleanup.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (a remote's owner and an owner's other spelling among them); the generic `so` and `PC`
        # and the owners' own home names are left out, as SOURCES-heldout24.md discloses
        accounts=(
            "realsun",
            "msmit",
            "DominionZA",
            "kgkgzrtk",
            "kiki",
            "LAPTOP-2GMBRRQA",
            "manuel.vidaurre",
        ),
        redacted={"cc-hamcp-ssh-env-force.jsonl": 56},
        # the Home Assistant token, checked gone by its payload's start, and the work e-mail
        # address, by its domain
        secrets=("eyJpc3MiOiIzZmJi", "savitar.co.za"),
        quarter_per_user=True,
        # words made self-contained (SOURCES-heldout24.md, "Self-contained words"): only
        # `words` change, every lesson's sentence holds its own
        qa="labels-heldout24-qa.yaml",
    ),
    ForgeSet(
        "heldout25",
        formats={"claude-code": 4, "codex-rollout": 3},
        repos=7,
        lessons=21,
        tool_errors=19,
        without_lessons=0,
        max_bytes=6_600_000,
        missing_word=("cc-ruflo-gitbash-backslash-path.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (a VPS host name among them); the generic `user`, `root`, `Usuario` and `mao` are left
        # out, as SOURCES-heldout25.md discloses
        accounts=("TeccoX", "flori", "CheKi.Nguyen", "srv876195"),
        redacted={
            "cc-vps-cleanup-shell-snapshot.jsonl": 21,
            "cx-copytrade-sandbox-git-lock.jsonl": 12,
            "cx-django-pwsh-heredoc-activate.jsonl": 15,
            "cx-vnindex-rg-glob-redis.jsonl": 3,
        },
        # the VPS's API key, wallet private key, database password and session secret, the
        # Supabase secret key, the Django app's admin password, and the Upstash and Supabase
        # database passwords, each checked gone by its start
        secrets=(
            "fc77d31a8981",
            "71607452144a",
            "6d14a9f3f17e",
            "39d7000dc4aba4",
            "sb_secret_",
            "Arkangel_01",
            "ASDRAAImcD",
            "Zonzon350979",
        ),
        quarter_per_user=True,
        # words made self-contained (SOURCES-heldout25.md, "Self-contained words"): only
        # `words` change, every lesson's sentence holds its own
        qa="labels-heldout25-qa.yaml",
    ),
    ForgeSet(
        "heldout26",
        formats={"claude-code": 2, "codex-rollout": 3},
        repos=5,
        lessons=14,
        tool_errors=11,
        without_lessons=0,
        max_bytes=3_700_000,
        missing_word=("cc-homedir-node-gitadd-dash.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (Windows and macOS home names); the generic `Administrator` is left out, as
        # SOURCES-heldout26.md discloses
        accounts=("sjbre", "srija", "sawairikeisuke", "h4yfans"),
        redacted={"cc-ruoyi-webfetch-mvn-timeout.jsonl": 83},
        # the GitHub token and the Figma key (by SECRET_PREFIXES), the Firecrawl key, the RuoYi
        # configuration's
        # secret, token and password, each checked gone by its start (the Redis password, a run
        # of six digits, is not listed: its digits occur in other numbers)
        secrets=("fc-6009653cc0", "a5c929a120f7", "SJ_cKqBTPzCs", "KTMDdMNtpiAW"),
        quarter_per_user=True,
        # words made self-contained (SOURCES-heldout26.md, "Self-contained words"): only
        # `words` change, every lesson's sentence holds its own
        qa="labels-heldout26-qa.yaml",
    ),
    ForgeSet(
        "heldout27",
        formats={"claude-code": 3, "codex-rollout": 1},
        repos=4,
        lessons=12,
        tool_errors=9,
        without_lessons=0,
        max_bytes=2_600_000,
        missing_word=("cx-kuafor-speckit-python3.jsonl", "schtasks"),
        # distinctive account and machine names inside the sessions' paths and records, besides
        # the owners (macOS and Linux home names, the root user's host name); the generic
        # `anthony` and `root` are left out, as SOURCES-heldout27.md discloses
        accounts=("aryansurana", "nazif", "PhillDesktop"),
        redacted={
            "cc-wsl-railway-noninteractive.jsonl": 51,
            "cc-zenith-https-push-ssh.jsonl": 9,
        },
        # the GitHub token (by SECRET_PREFIXES), the Railway token, the Smithery key and
        # profile, the Redis password and the user's e-mail address, each checked gone by its start
        secrets=(
            "11BCCXXRA03b5",
            "57a46238-9dad",
            "e9820cd5-c518",
            "faithful-sunset",
            "sFVjX2rYkTLY",
            "mcgurk@gmail",
        ),
        quarter_per_user=True,
        # words made self-contained (SOURCES-heldout27.md, "Self-contained words"): only
        # `words` change, every lesson's sentence holds its own
        qa="labels-heldout27-qa.yaml",
    ),
    ForgeSet(
        "heldout28",
        formats={"claude-code": 5},
        repos=5,
        lessons=16,
        tool_errors=13,
        without_lessons=0,
        max_bytes=4_000_000,
        missing_word=("cc-hyprland-stow-same-file-cp-r.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (macOS, Arch Linux and Windows home names); the generic `user` and `ubuntu` are left
        # out, as SOURCES-heldout28.md discloses
        accounts=("neilhart", "sn0w", "pur3v4d3rpk"),
        quarter_per_user=True,
        qa="labels-heldout28-qa.yaml",
    ),
    ForgeSet(
        "heldout29",
        formats={"claude-code": 3, "codex-rollout": 2},
        repos=5,
        lessons=14,
        tool_errors=10,
        without_lessons=0,
        max_bytes=4_000_000,
        missing_word=("cx-kangaroo-verify-stubs-gpu-run.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (macOS, Windows and Linux account names, a Codeberg account of a git remote); the
        # generic `zeus` (the cloud studio's default account) is left out, as
        # SOURCES-heldout29.md discloses
        accounts=("liuyusen", "payam", "cshrivastava001", "pest88-spec"),
        redacted={
            "cc-portable-bash-snapshot-mcp-tokens.jsonl": 20,
            "cc-lightning-benchmark-timeout-numpy-abi.jsonl": 4,
        },
        # the GitHub token, the Google keys and the Tavily key (by SECRET_PREFIXES), the
        # Firecrawl key, the search engine id and the user's e-mail address, each checked gone
        # by its start
        secrets=("fc-1469b383", "65c0e1c5d01ac4edb", "cshrivastava2000@"),
        quarter_per_user=True,
        qa="labels-heldout29-qa.yaml",
    ),
    ForgeSet(
        "heldout30",
        formats={"claude-code": 6},
        repos=6,
        lessons=15,
        tool_errors=10,
        without_lessons=0,
        max_bytes=1_800_000,
        missing_word=("cc-arch-dotfiles-gh-ssh-key-scope.jsonl", "schtasks"),
        # distinctive account and host names inside the sessions' paths and records, besides the
        # owners (macOS and Arch Linux home names, the Arch machine's host name); the generic
        # `user`, `claude`, `kova` (container accounts) and `gin` (a common word) are left out,
        # as SOURCES-heldout30.md discloses
        accounts=("herbcaudill", "laofahai", "ian-ser"),
        redacted={
            "cc-dotfiles-gitconfig-modified-since-read.jsonl": 6,
            "cc-riscv-notes-read-token-limit.jsonl": 7,
            "cc-arch-dotfiles-gh-ssh-key-scope.jsonl": 5,
        },
        # the users' e-mail addresses and the Arch user's SSH public key, each checked gone by
        # its start
        secrets=("herb@devresults", "yerramahesh2005@", "laofahai@gmail", "ILd4ZDyzSZieOWI4"),
        quarter_per_user=True,
        qa="labels-heldout30-qa.yaml",
    ),
    ForgeSet(
        "heldout31",
        formats={"claude-code": 4},
        repos=4,
        lessons=12,
        tool_errors=10,
        without_lessons=0,
        max_bytes=2_600_000,
        missing_word=("cc-worktree-husky-pr-exists.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (macOS home names); the generic Windows `Administrator` is left out, as
        # SOURCES-heldout31.md discloses
        accounts=("allenbot", "liuhanwen", "cedricmukolonga"),
        redacted={
            "cc-openclaw-compaction-mode-cat-a.jsonl": 19,
            "cc-settings-permissionmode-pandoc.jsonl": 2,
        },
        # the Telegram bot token, the Brave Search key and the OpenClaw gateway token, each
        # checked gone by its start (the placeholder GitHub token by SECRET_PREFIXES)
        secrets=("8550969879:AAG", "BSACf8LaQnJc", "464cd579b298"),
        quarter_per_user=True,
        qa="labels-heldout31-qa.yaml",
    ),
    ForgeSet(
        "heldout33",
        formats={"claude-code": 4, "codex-rollout": 1},
        repos=5,
        lessons=16,
        tool_errors=9,
        without_lessons=0,
        max_bytes=2_200_000,
        missing_word=("cc-my-offers-zsh-parentheses.jsonl", "schtasks"),
        # account names inside the sessions' paths and records besides the owners (a Linux home,
        # two macOS homes); no secret was found, so nothing is redacted (SOURCES-heldout33.md)
        accounts=("ldr-cavetroll", "ilyakonyaev", "al4ud1de"),
        quarter_per_user=True,
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout32",
        formats={"claude-code": 4, "codex-rollout": 1},
        repos=5,
        lessons=16,
        tool_errors=11,
        without_lessons=0,
        max_bytes=900_000,
        missing_word=("codex-automation-codex-home-sandbox-network.jsonl", "schtasks"),
        # distinctive account names inside the sessions' paths and records, besides the owners
        # (a Windows home and a macOS home); the generic `Administrator`, `mac` and `mike` are
        # left out, as SOURCES-heldout32.md discloses
        accounts=("67240", "felicity"),
        redacted={"cc-fedora-sudo-terminal-gsettings.jsonl": 11},
        # the Fedora user's personal e-mail address, checked gone by its start
        secrets=("ericmilton711@",),
        quarter_per_user=True,
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout35",
        formats={"claude-code": 2},
        repos=2,
        lessons=10,
        tool_errors=3,
        without_lessons=0,
        max_bytes=1_900_000,
        missing_word=("cc-go-tender-mapping-mock-error.jsonl", "schtasks"),
        # the macOS home name inside one session's paths (the other user's is his owner name)
        accounts=("danielr",),
        redacted={"cc-npm-ci-lockfile-node-modules.jsonl": 10},
        # the personal e-mail address, checked gone by its domain (SOURCES-heldout35.md)
        secrets=("@gmail.com",),
        # only 2 users could be taken before the deadline: the quarter rule does not hold
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout34",
        formats={"claude-code": 5},
        repos=5,
        lessons=17,
        tool_errors=12,
        without_lessons=0,
        max_bytes=950_000,
        missing_word=("cc-playwright-dev-ports-lsof.jsonl", "schtasks"),
        # account names inside the sessions' paths and records besides the owners (a Linux home,
        # a Windows home, three macOS homes)
        accounts=("nugad", "omarm", "natedamstra", "ojash", "pedro.figueiredo"),
        redacted={
            "cc-litellm-ollama-systemd-user.jsonl": 7,
            "cc-xcodebuild-commandlinetools-swiftui.jsonl": 2,
        },
        # the LiteLLM user's personal e-mail address (OAuth account) and the Xcode user's git
        # committer address, each checked gone (SOURCES-heldout34.md)
        secrets=("seph_sky@yahoo.com", "ojash@Ojashs-Mac-mini.local"),
        quarter_per_user=True,
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout36",
        formats={"claude-code": 3, "codex-rollout": 2},
        repos=5,
        lessons=20,
        tool_errors=8,
        without_lessons=0,
        max_bytes=3_700_000,
        missing_word=("codex-usb-pycache-syntaxerror.jsonl", "schtasks"),
        # home and account names inside the sessions' paths and records besides the owners
        # (macOS homes; the other GitHub account a push was refused for)
        accounts=("bernardchase", "be100radio", "tachikawa", "caper", "anotonio", "YaoXuTravix"),
        redacted={"cc-git-push-compdef-jest-segmentidentifier.jsonl": 8},
        # the personal e-mail addresses and the API key suffix ~/.claude.json kept, checked gone
        # by their starts (SOURCES-heldout36.md)
        secrets=("qq174028", "yaoxu@", "6v19nfeVV5w"),
        quarter_per_user=True,
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout38",
        formats={"claude-code": 1},
        repos=1,
        lessons=6,
        tool_errors=4,
        without_lessons=0,
        max_bytes=600_000,
        missing_word=("cc-home-cleanup-rg-grep-zsh-nomatch.jsonl", "schtasks"),
        # only 1 user could be taken before the deadline: the quarter rule does not hold, and
        # the owner's account name inside the paths is his owner name (SOURCES-heldout38.md)
        accounts=("roberdan",),
        self_contained=True,
        second=True,
    ),
    ForgeSet(
        "heldout37",
        formats={"codex-rollout": 3},
        repos=3,
        lessons=11,
        tool_errors=3,
        without_lessons=0,
        max_bytes=1_100_000,
        missing_word=("codex-copier-initializer-local-bin-shim.jsonl", "schtasks"),
        # account and host names inside the sessions' paths and records besides the owners (a
        # container's work folder, a corporate Mac's host name); no secret was found, so nothing
        # is redacted (SOURCES-heldout37.md); only 3 users were found in time, so the quarter
        # rule does not hold
        accounts=("jihun", "ex-jkato"),
        self_contained=True,
        second=True,
    ),
)

REPLAY_SETS = (
    ReplaySet(
        "h6",
        projects=("mkid-nextmavens-platform", "mkid-flow-home"),
        recurrences=25,
        owners=("Mkid095",),
        twin="heldout7",
        max_bytes=2_000_000,
    ),
    ReplaySet(
        "h7",
        projects=("ais-fortune-ai", "ais-vibelife"),
        recurrences=15,
        owners=("aistrad",),
        twin="heldout8",
        max_bytes=2_400_000,
        min_mistakes=2,
    ),
    ReplaySet(
        "h8",
        projects=("k3rn-n8n",),
        recurrences=3,
        owners=("K3RN-LABS",),
        twin="heldout9",
        max_bytes=2_000_000,
    ),
    ReplaySet(
        "h9",
        projects=("laf-vault",),
        recurrences=5,
        owners=("LAF-US", "loganf", "loganfinney27"),
        twin="heldout10",
        max_bytes=2_000_000,
    ),
    ReplaySet(
        "h10",
        projects=("kardex",),
        recurrences=9,
        owners=("Gino-Loja", "ginol"),
        twin="heldout12",
        max_bytes=1_500_000,
        secrets=HELDOUT12_SECRETS,
        redacted=6,
    ),
    ReplaySet(
        "h11",
        projects=("travel",),
        recurrences=5,
        owners=("dreyer-thomas", "TravelBlogs", "tommy"),
        twin=None,
        max_bytes=1_800_000,
        min_mistakes=2,
        # nothing was replaced (SOURCES-h11.md): the literal prefixes of credentials stay absent
        secrets=SECRET_PREFIXES,
        missing_word="brackets",
    ),
    ReplaySet(
        "h12",
        projects=("carcare",),
        recurrences=5,
        owners=("kasumigaokasama", "yusuf", "PaderClean"),
        twin=None,
        max_bytes=3_200_000,
        min_mistakes=5,
        # the owner's name, address, phone and mailboxes replaced (SOURCES-h12.md): the starts
        # of their forms are gone, besides the literal prefixes of credentials
        secrets=(*SECRET_PREFIXES, "tel:+491", "@paderclean.de", "Inh. T", "0176 4"),
        redacted=218,
        missing_word="homebrew",
    ),
    ReplaySet(
        "h13",
        projects=("tailwind",),
        recurrences=7,
        owners=("pjw7536", "pjw75"),
        twin=None,
        max_bytes=2_800_000,
        min_mistakes=3,
        # nothing was replaced (SOURCES-h13.md): the literal prefixes of credentials stay absent
        secrets=SECRET_PREFIXES,
        missing_word="homebrew",
    ),
    ReplaySet(
        "h14",
        projects=("hearthlink",),
        recurrences=10,
        owners=("MythologIQ", "krkna"),
        twin=None,
        max_bytes=2_400_000,
        min_mistakes=4,
        # nothing was replaced (SOURCES-h14.md); one `ghp_` string lies inside Codex's
        # encrypted_content ciphertext, so the other literal prefixes of credentials are checked
        secrets=tuple(p for p in SECRET_PREFIXES if p != "ghp_"),
        missing_word="homebrew",
    ),
    ReplaySet(
        "h15",
        projects=("v4pro",),
        recurrences=12,
        # the Windows account inside the sessions is the generic `1`, left out as
        # SOURCES-h15.md discloses
        owners=("linxiaotutututu1123",),
        twin=None,
        max_bytes=5_400_000,
        min_mistakes=5,
        # the API proxy's `sk-` key of a printed settings file replaced (SOURCES-h15.md): its start
        # is gone, besides the literal prefixes of credentials
        secrets=(*SECRET_PREFIXES, "sk-H2INpn37"),
        redacted=2,
        missing_word="homebrew",
    ),
    ReplaySet(
        "h16",
        projects=("zbarbe",),
        recurrences=10,
        # the account inside the sessions is the generic `root`, left out as SOURCES-h16.md
        # discloses
        owners=("DaniloTito01",),
        twin=None,
        max_bytes=5_200_000,
        min_mistakes=3,
        # the remote database password, the private keys of a printed acme.json and a contact
        # address replaced (SOURCES-h16.md): their starts are gone, besides the literal prefixes of
        # credentials
        secrets=(*SECRET_PREFIXES, "Mfcd62", "MIIJJwIBAAKCAgEArPPx", "@znexo.com.br"),
        redacted=86,
        missing_word="homebrew",
    ),
)


def twins_of(forge: ForgeSet) -> list[ReplaySet]:
    return [r for r in REPLAY_SETS if r.twin == forge.name]


def forge_set(name: str) -> ForgeSet:
    return next(f for f in FORGE_SETS if f.name == name)


def ours(clean: ForgeSet | ReplaySet) -> set[Path]:
    """The set's own files and its twin's: the files allowed to name its users."""
    if isinstance(clean, ForgeSet):
        pair: list[ForgeSet | ReplaySet] = [clean, *twins_of(clean)]
    else:
        pair = [clean] if clean.twin is None else [clean, forge_set(clean.twin)]
    qa = {s.qa_labels for s in pair if isinstance(s, ForgeSet) and s.qa_labels is not None}
    return {path for s in pair for path in (s.labels, s.sources)} | qa


def owners(sessions: list[LabelledSession]) -> set[str]:
    return {s.repo.split("/")[0] for s in sessions}


# -- forge splits ------------------------------------------------------------------------------


def check_forge_counts(clean: ForgeSet) -> None:
    """Its labels load and have the shape recorded when the set was taken; every session is
    named in its sources; its files stay under their size."""
    sessions = clean.sessions()
    assert len(sessions) == sum(clean.formats.values())
    assert len({s.repo for s in sessions}) == clean.repos
    assert {s.split for s in sessions} == {"held-out"}
    assert Counter(s.format for s in sessions) == clean.formats
    lessons = [lesson for s in sessions for lesson in s.lessons]
    assert len(lessons) == clean.lessons
    assert sum(lesson.kind == "tool-error" for lesson in lessons) == clean.tool_errors
    assert sum(not s.lessons for s in sessions) == clean.without_lessons
    sources = clean.sources.read_text(encoding="utf-8")
    assert all(f"`{s.file.name}`" in sources for s in sessions)
    assert sum(s.file.stat().st_size for s in sessions) <= clean.max_bytes


def check_forge_formats_read(clean: ForgeSet) -> None:
    """A session the readers took for another format, or whose lines they could not use, would
    be scored on messages forge never saw."""
    for session in clean.sessions():
        assert detect_format(session.file) == session.format, session.file.name
        transcript = open_transcript(session.file, session.format)
        assert sum(1 for _ in transcript.messages()) > 0, session.file.name
        assert transcript.report.malformed == 0, (session.file.name, transcript.report.problems)


def check_forge_words_occur(clean: ForgeSet) -> None:
    """A label no extraction could match (a word the session never says) would be a miss forge
    cannot avoid; each entry must occur, as the scorer reads it, in the session's own text. And
    a word the session does not say is noticed, so the check can fail on this set."""
    sessions = clean.sessions()
    for session in sessions:
        text = session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)
    name, word = clean.missing_word
    assert name in {s.file.name for s in sessions}, name
    assert not Lesson("x", ((word,),)).matches(session_text(EVAL / "forge" / "sessions" / name))


def check_forge_secrets_gone(clean: ForgeSet) -> None:
    """The literals SOURCES says were replaced are gone, and the markers are there."""
    files = {s.file.name: s.file for s in clean.sessions()}
    text = "\n".join(p.read_text(encoding="utf-8") for p in files.values())
    for prefix in (*SECRET_PREFIXES, *clean.secrets):
        assert prefix not in text, prefix
    if clean.secrets:  # also as the records decode (a JSON escape could hide one above)
        decoded = "\n".join(session_text(p) for p in files.values())
        for literal in clean.secrets:
            assert literal not in decoded, literal
    for name, markers in clean.redacted.items():
        assert files[name].read_text(encoding="utf-8").count("[REDACTED]") == markers, name


def check_forge_quarter_per_user(clean: ForgeSet) -> None:
    """Run on the rows that set ``quarter_per_user``."""
    per_user = Counter(s.repo.split("/")[0] for s in clean.sessions() for _ in s.lessons)
    assert max(per_user.values()) * 4 <= sum(per_user.values())


def lessons_without_their_words(sessions: list[LabelledSession]) -> list[str]:
    """The lessons whose own sentence misses one of their ``words`` (file: lesson start)."""
    return [
        f"{session.file.name}: {lesson.text[:80]}"
        for session in sessions
        for lesson in session.lessons
        if not lesson.matches(lesson.text)
    ]


def check_forge_self_contained(clean: ForgeSet) -> None:
    missing = lessons_without_their_words(clean.sessions())
    assert not missing, f"{clean.name}: lessons whose sentence lacks their words: {missing}"


def check_forge_second_labels(clean: ForgeSet) -> None:
    """Run on the rows with a second labelling: it loads, holds the same session files (format
    and split alike), every lesson's sentence holds its words, and each words entry occurs in its
    session, so the two labellings are comparable by the scorer's own rule."""
    first = clean.sessions()
    second = list(_forge_labels(clean.second_labels))
    shape = sorted((s.file.name, s.format, s.split) for s in first)
    assert sorted((s.file.name, s.format, s.split) for s in second) == shape
    assert not lessons_without_their_words(second)
    for session in second:
        text = session_text(session.file)
        for lesson in session.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (session.file.name, lesson)


def check_forge_qa_labels(clean: ForgeSet) -> None:
    """Run on the rows that name a ``qa`` copy: it loads, holds the same sessions as the original
    (file, format, split, repository, ``none``), only adds lessons (a split makes two of one),
    keeps every tool-error lesson, and each of its words entries occurs in its session's text."""
    assert clean.qa_labels is not None
    original = clean.sessions()
    reviewed = list(_forge_labels(clean.qa_labels))
    shape = [(s.file, s.format, s.split, s.repo, not s.lessons) for s in original]
    assert [(s.file, s.format, s.split, s.repo, not s.lessons) for s in reviewed] == shape
    for before, after in zip(original, reviewed, strict=True):
        assert len(after.lessons) >= len(before.lessons), after.file.name
        tool_errors = [sum(x.kind == "tool-error" for x in s.lessons) for s in (before, after)]
        assert tool_errors[1] >= tool_errors[0], after.file.name
        text = session_text(after.file)
        for lesson in after.lessons:
            assert Lesson(lesson.text, lesson.words).matches(text), (after.file.name, lesson)
    # the quarter rule is the selection's (check_forge_quarter_per_user, on the original): a
    # review's splits may move a user past it, as SOURCES-heldout20.md discloses
    assert f"`{clean.qa_labels.name}`" in clean.sources.read_text(encoding="utf-8")


def check_forge_users_apart(clean: ForgeSet) -> None:
    """No session or repository of another forge labels file, no user or account named in
    another evaluation file, none of its twin replay set's users among its owners or in its
    sessions' text."""
    sessions = clean.sessions()
    others = [
        labelled
        for path in sorted((EVAL / "forge").glob("labels*.yaml"))
        if path not in clean.own_labels()
        for labelled in _forge_labels(path)
    ]
    assert not {s.file.name for s in sessions} & {s.file.name for s in others}
    assert not {s.repo for s in sessions} & {s.repo for s in others}
    paths = other_evaluation_files(ours(clean))
    for name in sorted(owners(sessions) | set(clean.accounts)):
        assert not named_anywhere(name, paths), name
    texts = [session_text(s.file).lower() for s in sessions]
    for twin in twins_of(clean):
        for name in twin.owners:
            assert name not in owners(sessions), name
            assert not any(name.lower() in text for text in texts), name


# -- replay sets -------------------------------------------------------------------------------


def check_replay_fits(clean: ReplaySet) -> None:
    """Its histories exist, in time order; every labelled line is a failing call; every session
    is named in its sources; its files stay under their size."""
    projects = clean.held_apart()
    assert tuple(p.id for p in projects) == clean.projects
    for project in projects:
        sessions = load_project(clean.history, project)
        assert len(sessions) == len(project.sessions) >= 4
        assert len(project.mistakes) >= clean.min_mistakes
        assert all(m.recurrences for m in project.mistakes)
        assert project.facts
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == clean.recurrences
    sources = clean.sources.read_text(encoding="utf-8")
    assert all(f"`{p.id}/{name}`" in sources for p in projects for name in p.sessions)
    size = sum(f.stat().st_size for f in clean.history.rglob("*.jsonl"))
    assert size <= clean.max_bytes


def check_replay_words_occur(clean: ReplaySet) -> None:
    """A group no session says could never match an injected entry the scorer reads; each group
    of a mistake must occur in the text of its own sessions (first and recurrences), each group of
    a fact in the project's sessions. And a word the sessions do not say is noticed, so the check
    can fail on this set."""
    assert clean.missing_word is not None
    for project in clean.held_apart():
        folder = clean.history / project.id
        texts = {name: session_text(folder / name) for name in project.sessions}
        for mistake in project.mistakes:
            names = (mistake.first.session, *(r.session for r in mistake.recurrences))
            text = "\n".join(texts[name] for name in names)
            for group in mistake.match.groups:
                assert Match((group,)).matches(text), (mistake.id, group)
        everything = "\n".join(texts.values())
        for fact in project.facts:
            for group in fact.match.groups:
                assert Match((group,)).matches(everything), (fact.id, group)
        assert not Match(((clean.missing_word,),)).matches(everything), clean.missing_word


def check_replay_users_apart(clean: ReplaySet) -> None:
    paths = other_evaluation_files(ours(clean))
    for name in clean.owners:
        assert not named_anywhere(name, paths), name


def check_replay_secrets_gone(clean: ReplaySet) -> None:
    """Run on the rows that set ``secrets``: the literals SOURCES says were replaced in the
    histories are gone, and the markers are there."""
    files = sorted(clean.history.rglob("*.jsonl"))
    texts = [p.read_text(encoding="utf-8") for p in files]
    for literal in clean.secrets:
        assert not any(literal in text for text in texts), literal
    assert sum(text.count("[REDACTED]") for text in texts) == clean.redacted
