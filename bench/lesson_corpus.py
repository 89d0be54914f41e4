"""A deterministic generator of realistic lessons for the consolidation benchmarks.

Lessons look like the ones real opencode-swarm and openknowledge stores hold: imperative
sentences from a few dozen templates whose slots are filled from a technical vocabulary, file
paths, identifiers and Zipf-distributed filler clauses (so bigram frequencies have the long tail
of real text). About ``dup_rate`` of the lessons are planted near-duplicates of an earlier
lesson (word edits, clause swaps, punctuation and casing changes, negation flips, appended
metadata fragments), and a few adversarial ones are mixed in: one-word lessons, Chinese-only
lessons (both normalise to no bigrams) and the dark-matter co-change template that dominates
real stores.
"""

# ruff: noqa: SIM905  (word lists read best as one string)
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

TECH = (
    "typescript javascript python react vue svelte node bun deno docker kubernetes postgres "
    "sqlite mysql redis celery kombu vitest jest pytest mocha git github gitlab graphql grpc "
    "rest api webpack vite esbuild rollup eslint biome prettier ruff mypy pydantic fastapi "
    "django flask express nextjs nuxt tailwind prisma drizzle sqlalchemy alembic terraform "
    "ansible nginx caddy kafka rabbitmq grafana prometheus sentry opentelemetry oauth jwt tls "
    "ssh cron systemd tmux bash zsh make cmake cargo rust go java kotlin swift gradle maven "
    "npm pnpm yarn pip poetry uv conda numpy pandas scipy matplotlib playwright cypress "
    "selenium storybook electron tauri wasm lambda s3 dynamodb cloudflare vercel netlify"
).split()
VERBS = (
    "run check call pin validate cache retry lock flush rebuild regenerate invalidate batch "
    "stream debounce throttle sanitize escape quote serialize parse normalise index migrate "
    "seed mock stub snapshot bisect profile trace log wrap guard reset restart drain"
).split()
AGENTS = "architect coder reviewer test_engineer sme docs designer curator explorer".split()
COMMON = (
    "the a an of to in for on with when before after because so that it this is are be "
    "not all any each every only also then than more less first last new old same other "
    "into from by at as if or and but until while during without within between across"
).split()
DIRS = "src lib app core utils services hooks api db models tests scripts config cli web ui".split()
EXTS = "ts tsx js py go rs md json yaml toml sql sh".split()
CHINESE = (
    "请在提交前运行全部测试",
    "数据库迁移必须先备份",
    "不要在主分支上直接修改配置",
    "缓存失效时需要重新生成索引",
    "发布之前检查依赖版本",
    "日志中不能包含密码",
)

TEMPLATES = (
    "Always {verb} {obj} before {clause} or {clause2}.",
    "Never {verb} {obj} inside {place}; {clause} instead.",
    "Use {tech} {noun} instead of {tech2} {noun2} when {clause}.",
    "Prefer {func}() over {func2}() because {clause}.",
    "When {clause}, {verb} the {noun} in {file} first.",
    "{tech} {noun} fails with {error} if {clause}; {verb} {obj} to fix it.",
    "The {agent} must {verb} {obj} before delegating {clause}.",
    "Avoid {verb}ing {obj} from {file}: {clause}.",
    "Run {tool} with {flag} so that {clause}.",
    "Ensure {file} exports {func} and {func2} because {clause}.",
    "Check that {obj} is {adj} after {clause}, otherwise {clause2}.",
    "Do not {verb} {obj} in {place} when {clause}.",
    "Migrated {noun} from {tech} to {tech2} for {clause}.",
    "Set {setting} to {num} in {file} to stop {error} during {clause}.",
    "{tech} needs {setting}={num} or {clause}.",
    "Keep {obj} {adj} between {clause} and {clause2}.",
    "Add a {noun} test for {func} covering {clause}.",
    "Remove {obj} from {file} once {clause}.",
    "If {func} returns {error}, {verb} {obj} and {clause}.",
    "Document {noun} decisions in {file}: {clause}.",
    "Decision: adopt {tech} for {noun} because {clause} and {clause2}.",
    "Workflow: every {noun} change needs {num} reviews and {clause}.",
    "{agent} should {verb} {file} only after {clause}.",
    "Bug in {func}: {clause}; the root cause was {clause2}.",
)
NOUNS = (
    "build cache schema config migration session token queue worker lockfile fixture plugin "
    "router store index pipeline release deployment container image bundle manifest handler "
    "endpoint resolver middleware transaction connection pool snapshot template"
).split()
ADJS = "stable sorted unique idempotent immutable typed validated pinned fresh bounded".split()
ERRORS = (
    "ENOENT EACCES ETIMEDOUT ECONNRESET OOM SIGKILL TypeError KeyError ValueError "
    "deadlock segfault 429 500 404 409"
).split()
NEGATIONS = (("always", "never"), ("must", "must not"), ("enable", "disable"), ("use", "avoid"))


@dataclass(frozen=True)
class Corpus:
    lessons: list[str]
    planted: list[tuple[int, int]]
    """(original, copy) index pairs of planted near-duplicates."""


class _Words:
    """Pseudo-words with a Zipf frequency, so filler clauses have a realistic long tail."""

    def __init__(self, rng: random.Random, size: int) -> None:
        syllables = [a + b for a in "bcdfghklmnprstvwz" for b in "aeiou"] + ["qu", "th", "sh"]
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        self.words = sorted(words)
        rng.shuffle(self.words)
        self.cum = list(itertools.accumulate(1.0 / (rank + 30) for rank in range(size)))
        self.rng = rng

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)


class LessonGenerator:
    def __init__(self, seed: int = 7, lexicon: int = 30_000) -> None:
        self.rng = random.Random(seed)
        self.words = _Words(self.rng, lexicon)

    # -- slots -------------------------------------------------------------------------------

    def _ident(self) -> str:
        a, b = self.words.draw(2)
        return self.rng.choice((f"{a}_{b}", f"{a}{b.capitalize()}", a))

    def _file(self) -> str:
        parts = [self.rng.choice(DIRS), *self.words.draw(self.rng.randint(1, 2))]
        return "/".join(parts) + "." + self.rng.choice(EXTS)

    def _clause(self) -> str:
        rng = self.rng
        words = self.words.draw(rng.randint(3, 7))
        for _ in range(rng.randint(1, 3)):
            words.insert(rng.randrange(len(words) + 1), rng.choice(COMMON))
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words) + 1), rng.choice(TECH))
        return " ".join(words)

    def _fill(self, template: str) -> str:
        rng = self.rng
        slots = {
            "verb": rng.choice(VERBS),
            "obj": f"the {rng.choice(NOUNS)} {self.words.draw(1)[0]}",
            "clause": self._clause(),
            "clause2": self._clause(),
            "place": f"{rng.choice(NOUNS)} {self._ident()}",
            "tech": rng.choice(TECH),
            "tech2": rng.choice(TECH),
            "noun": rng.choice(NOUNS),
            "noun2": rng.choice(NOUNS),
            "func": self._ident(),
            "func2": self._ident(),
            "file": self._file(),
            "error": rng.choice(ERRORS),
            "agent": rng.choice(AGENTS),
            "tool": f"{rng.choice(TECH)} {rng.choice(VERBS)}",
            "flag": f"--{self.words.draw(1)[0]}",
            "adj": rng.choice(ADJS),
            "setting": f"{self.words.draw(1)[0]}_{rng.choice(NOUNS)}",
            "num": str(rng.choice((1, 2, 3, 5, 8, 10, 30, 60, 100, 256, 1024))),
        }
        text = template.format(**slots)
        return text[0].upper() + text[1:]

    def lesson(self) -> str:
        text = self._fill(self.rng.choice(TEMPLATES))
        while len(text) > 280:
            text = self._fill(self.rng.choice(TEMPLATES))
        return text

    def dark_matter(self) -> str:
        a, b = self._file(), self._file()
        return (
            f"Files {a} and {b} co-change with NPMI={self.rng.uniform(0.3, 0.99):.3f} but have "
            "no import relationship. This hidden coupling suggests a shared architectural "
            "concern — changes to one likely require changes to the other."
        )

    # -- near duplicates -----------------------------------------------------------------------

    def mutate(self, text: str) -> str:
        """A near-duplicate: from a cosmetic change to a handful of edited words."""
        rng = self.rng
        words = text.split(" ")
        kind = rng.random()
        if kind < 0.15:
            return text.lower() if rng.random() < 0.5 else text.rstrip(".") + "!"
        if kind < 0.25:
            return f"{text} (confidence 0.8, category: process)"
        if kind < 0.35:
            lowered = f" {text.lower()} "
            for a, b in NEGATIONS:
                if f" {a} " in lowered:
                    return lowered.replace(f" {a} ", f" {b} ", 1).strip().capitalize()
        edits = rng.choice((1, 1, 2, 2, 3, 4, 6))
        for _ in range(edits):
            op = rng.random()
            pos = rng.randrange(len(words))
            if op < 0.4:
                words[pos] = self.words.draw(1)[0]
            elif op < 0.7 and len(words) > 3:
                del words[pos]
            else:
                words.insert(pos, rng.choice(COMMON + self.words.draw(2)))
        return " ".join(words)

    def corpus(
        self, n: int, dup_rate: float = 0.10, odd_rate: float = 0.004, dark_rate: float = 0.005
    ) -> Corpus:
        rng = self.rng
        lessons: list[str] = []
        planted: list[tuple[int, int]] = []
        for index in range(n):
            roll = rng.random()
            if lessons and roll < dup_rate:
                source = rng.randrange(len(lessons))
                lessons.append(self.mutate(lessons[source]))
                planted.append((source, index))
            elif roll < dup_rate + odd_rate:
                lessons.append(rng.choice((rng.choice(TECH), rng.choice(CHINESE), "TODO", "")))
            elif roll < dup_rate + odd_rate + dark_rate:
                lessons.append(self.dark_matter())
            else:
                lessons.append(self.lesson())
        return Corpus(lessons, planted)


def generate(n: int, seed: int = 7, **rates: float) -> Corpus:
    return LessonGenerator(seed).corpus(n, **rates)


if __name__ == "__main__":
    for line in generate(40, seed=1).lessons:
        print(line)
