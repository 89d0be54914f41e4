"""``forge``: a transcript in, AgentOps pending candidates out, each exactly once.

The transcript is streamed (constant memory in its size: only distinct accepted candidates and
a bounded digest for the optional LLM pass are kept). Mined are the text, session-summary and
compaction-summary messages of the configured speakers; tool traffic, reasoning and injected
context are not. Every passage goes through the layered classifier.

Idempotency, two levels: a ledger (``.agents/ao/forge/ledger.jsonl``) remembers each key
(mission id or transcript path) with the file's size and mtime, so re-forging an unchanged
transcript does not even read it; and the forge index (``.agents/ao/forge/index.jsonl``) plus
the promoted index hold every content hash ever forged or promoted, so a candidate is written
once however often, and from however many transcripts, it is found.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from swarmq.flywheel.content import content_hash
from swarmq.flywheel.model import KnowledgeType, parse_time
from swarmq.flywheel.probes import ProbeObservation, record_probes
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._chatter import confirmed_decision
from swarmq.forge._diagnosis import disowns, is_diagnosis
from swarmq.forge._language import language_choice
from swarmq.forge._limits import states_a_limit
from swarmq.forge._multilingual import foreign
from swarmq.forge._pending_file import ForgedCandidate
from swarmq.forge._probes import Resolved
from swarmq.forge._reports import opens_report
from swarmq.forge._restated import (
    announces_escalation,
    failed_errors,
    failed_programs,
    restates,
)
from swarmq.forge._samecause import (
    Failure,
    chain,
    checked_after,
    groups,
    left_behind,
    quoted_reason,
)
from swarmq.forge._secrets import without_secrets
from swarmq.forge._sequences import Sequence, SequenceMiner
from swarmq.forge._signals import has_signal_words, tokens_of
from swarmq.forge._standing import standing_instruction
from swarmq.forge._toldfacts import told_fact
from swarmq.forge.classifier import classify
from swarmq.forge.config import ForgeConfig
from swarmq.forge.ledger import (
    ForgeResult,
    already_forged,
    file_fingerprint,
    passages_path,
    write_candidates,
)
from swarmq.forge.llm import Completer, llm_candidates
from swarmq.forge.passages import passages
from swarmq.forge.templates import (
    SeenPassages,
    coded_diagnostics,
    is_known_template,
    is_pasted_document,
    is_pasted_log,
    is_specification,
    strip_front_matter,
)
from swarmq.knowledge.secrets import redacted
from swarmq.storage.locking import StoreLocks
from swarmq.transcripts.model import MINABLE_KINDS, Message, MessageKind, TranscriptFormat
from swarmq.transcripts.reader import Transcript, open_transcript

Progress = Callable[[int], None]
"""Called with the bytes read so far."""

PROGRESS_EVERY = 2000
SUMMARY_KINDS = frozenset({MessageKind.SUMMARY, MessageKind.COMPACTION})
_SECTION_HEAD = re.compile(r"^\s*(?:\d+\.\s*)?(?:#+\s*)?(?:\*\*|__)?([A-Z][\w /&-]{2,40}):")
"""A compaction summary's section heading, numbered, a Markdown heading or in bold ("4.
**Errors and Fixes:**")."""
_RECORD_SECTION = re.compile(
    r"(?:errors?\b.{0,20}\b(?:fix\w*|encountered)|problem solving|files and code|"
    r"pending tasks|current work|(?:optional )?next steps?)\b",
    re.IGNORECASE,
)
"""Sections of Claude Code's compaction summary that record the work rather than state lessons
(its prompt asks for "Errors and fixes", "Files and Code Sections", "Pending Tasks", "Current
Work", "Optional Next Step"): the fixes are code already changed, which the session's own records
show where they happened; the rest are descriptions and plans. Its decisions and the user's
intent are read."""


def _without_record_sections(text: str) -> str:
    """A compaction summary without its record sections (:data:`_RECORD_SECTION`), each running
    from its heading line to the next section's."""
    kept: list[str] = []
    skipping = False
    for line in text.split("\n"):
        head = _SECTION_HEAD.match(line)
        if head:
            skipping = _RECORD_SECTION.match(head.group(1)) is not None
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


UNMINED_KINDS = frozenset(MessageKind) - MINABLE_KINDS
"""Tool calls, tool results, reasoning and system notes: numbered but never built."""

__all__ = ["EMPTY_HASH", "extract_candidates", "forge_transcript", "minable"]


_ASKS = re.compile(r"[?？]")
"""A user's report that something broke which asks why is a symptom: what the session finds
out about it, not the report, is the lesson (the agent's diagnosis, a failed call)."""
STANDING_CONFIDENCE = 0.7
"""A user's standing instruction (:mod:`._standing`), choice of language (:mod:`._language`) or
word on what the machine has (:mod:`._toldfacts`): said by the one whose rule or machine it is."""


def minable(message: Message, config: ForgeConfig) -> bool:
    if message.kind not in MINABLE_KINDS or message.is_meta:
        return False
    if message.is_sidechain and (not config.include_sidechains or message.role == "user"):
        return False  # a sub-agent's "user" turns are the prompts its parent wrote
    return message.kind in SUMMARY_KINDS or message.role in config.roles


class _Digest:
    """A bounded view of the transcript for the LLM pass: summaries first, then recent text."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.summaries: deque[str] = deque()
        self.recent: deque[str] = deque()
        self.sizes = [0, 0]

    def add(self, message: Message) -> None:
        self.note(message.index, message.role, message.text, summary=message.kind in SUMMARY_KINDS)

    def note(self, index: int, speaker: str, text: str, *, summary: bool = False) -> None:
        """Add one entry (a message, or a mined failure with its quoted error) in order."""
        text = f"[{index} {speaker}] {text.strip()}"[: self.limit // 2]
        queue, slot = (self.summaries, 0) if summary else (self.recent, 1)
        queue.append(text)
        self.sizes[slot] += len(text)
        while self.sizes[slot] > self.limit // 2 and queue:
            self.sizes[slot] -= len(queue.popleft())

    def text(self) -> str:
        return "\n\n".join([*self.summaries, *self.recent])


MAX_MESSAGE_CHARS = 200_000
"""A message longer than this (about 60 pages) is a pasted log, file or dump, not prose holding a
lesson; classifying it as one passage would cost memory in proportion (a 50 MB message took
~800 MiB), so it is counted as ``oversized`` and skipped. Its tool failures are still mined."""


def _strongest_narrated(
    found: list[ForgedCandidate], limit: int, result: ForgeResult
) -> list[ForgedCandidate]:
    """``found`` with at most ``limit`` candidates from the agent's own prose (the most
    confident, the earlier on a tie), in order; the rest counted as rejected."""
    narrated = [i for i, c in enumerate(found) if c.extractor == "rules" and c.role == "assistant"]
    if len(narrated) <= limit:
        return found
    dropped = set(sorted(narrated, key=lambda i: (-found[i].confidence, i))[limit:])
    result.rejected["narration"] += len(dropped)
    return [c for i, c in enumerate(found) if i not in dropped]


def _narrated_limits(found: list[ForgedCandidate], result: ForgeResult) -> list[ForgedCandidate]:
    """``found`` without the agent's own prose that states no limit of the machine
    (:mod:`._limits`), counted as rejected."""
    kept = [
        c
        for c in found
        if c.extractor != "rules" or c.role != "assistant" or states_a_limit(c.content)
    ]
    if len(kept) < len(found):
        result.rejected["narration-no-limit"] += len(found) - len(kept)
    return kept


def extract_candidates(
    transcript: Transcript,
    config: ForgeConfig,
    result: ForgeResult,
    *,
    progress: Progress | None = None,
    digest: _Digest | None = None,
    seen_passages: SeenPassages | None = None,
) -> list[ForgedCandidate]:
    """Stream ``transcript`` and return its distinct accepted candidates, in order."""
    seen: set[str] = set()
    found: list[ForgedCandidate] = []
    source = str(transcript.path)
    session = transcript.report.session_id
    miner = SequenceMiner(window=config.retry_window) if config.mine_tool_errors else None

    def keep(candidate: ForgedCandidate) -> None:
        if digest is not None and candidate.extractor == "sequence":
            digest.note(
                candidate.message_index, "tool", candidate.content
            )  # the model sees failures too
        if candidate.content_hash in seen:
            result.duplicates += 1
            return
        seen.add(candidate.content_hash)
        found.append(candidate)

    mined: dict[str, Sequence] = {}
    """The failure behind each kept tool-error candidate, by its hash (:mod:`._samecause`)."""
    unwitnessed: set[str] = set()
    """Hashes of the agent's passages that named nothing failed before them: dropped at the end
    if the session called tools (a chat with no tool has no witness to ask)."""
    held: list[tuple[ForgedCandidate, int]] = []
    """Diagnoses waiting for what follows (:mod:`._diagnosis`), with the edits made before."""

    def edits() -> int:
        return miner.edits if miner is not None else 0

    def settle(keeping: bool) -> None:
        for candidate, _ in held:
            if keeping:
                keep(candidate)
            else:
                result.rejected["unconfirmed-diagnosis"] += 1
        held.clear()

    count = no_signal = 0
    for message in transcript.messages(skip=UNMINED_KINDS, tools=miner):
        count += 1
        if progress is not None and count % PROGRESS_EVERY == 0:
            progress(transcript.report.bytes_read)
        if miner is not None:  # the readers fed it the tool traffic before this message
            if message.role == "assistant" and (
                miner.open_failures or message.text.startswith("API Error")
            ):
                miner.text(message)
            elif (
                message.role == "user"
                and message.kind is MessageKind.TEXT
                and not message.is_meta
                and miner.open_failures
            ):
                miner.told(message)
            if miner.closed:
                for sequence in miner.drain():
                    candidate = _sequence_candidate(sequence, config, source, message, session)
                    if candidate is not None:
                        mined[candidate.content_hash] = sequence
                        keep(candidate)
        if held and message.role == "user" and message.kind is MessageKind.TEXT:
            settle(not disowns(message.text))
        if not minable(message, config):
            continue
        if digest is not None:
            digest.add(message)
        text = message.text
        if len(text) > MAX_MESSAGE_CHARS:
            result.rejected["oversized"] += 1  # a pasted log or dump: no lesson, and memory
            continue
        if message.role == "user" and message.kind is MessageKind.TEXT:
            rule = standing_instruction(text) or language_choice(text)
            said_as, said_class = KnowledgeType.DECISION, "decision"
            if rule is None:  # a fact of the machine the user tells (:mod:`._toldfacts`)
                rule, said_as, said_class = told_fact(text), KnowledgeType.LEARNING, "workflow"
            if rule is not None and not (  # the classifier's reading, when it has one, stands
                classify(rule, min_confidence=config.min_confidence, observed=False).accepted
            ):
                if seen_passages is not None and seen_passages.is_template(
                    rule, message.session_id or session
                ):
                    result.rejected["template"] += 1
                elif config.min_confidence <= STANDING_CONFIDENCE:
                    keep(
                        _message_candidate(
                            rule,
                            said_as.value,
                            said_class,
                            STANDING_CONFIDENCE,
                            source,
                            message,
                            session,
                            content_hash(rule),
                        )
                    )
                continue
        tokens = tokens_of(text)
        confirmed = message.role == "assistant" and confirmed_decision(text)
        if not confirmed and not has_signal_words(tokens) and not foreign(text, tokens):
            no_signal += 1  # most messages (no anchor word, English): counted once at the end
            continue
        text_words = frozenset(tokens)
        if message.role != "assistant" and is_known_template(text):
            result.rejected["template"] += 1
            continue
        if message.role == "user" and config.min_confidence <= DIAGNOSTIC_CONFIDENCE:
            for line in coded_diagnostics(text):  # kept even from a pasted log
                keep(
                    _message_candidate(
                        line,
                        "solution",
                        "workflow",
                        DIAGNOSTIC_CONFIDENCE,
                        source,
                        message,
                        session,
                        content_hash(line),
                    )
                )
        if message.role == "user" and is_pasted_log(text):
            result.rejected["pasted-log"] += 1
            continue
        if message.role == "user" and (is_pasted_document(text) or is_specification(text)):
            result.rejected["pasted-document"] += 1
            continue
        if text.startswith("---") or text[:16].lstrip().startswith("---"):
            text = strip_front_matter(text)
        bonus = config.summary_bonus if message.kind in SUMMARY_KINDS else 0.0
        report = message.role == "assistant" and opens_report(text)
        if message.kind is MessageKind.COMPACTION:
            text = _without_record_sections(text)
        whole = (
            text_words if "\n" not in text and not confirmed else None
        )  # one passage: reuse its words
        for number, (lead, passage) in enumerate(passages(confirmed or text)):
            if confirmed and number == 0:
                lead = "Decision:"  # the agent restating what the user decided
            result.passages += 1
            verdict = classify(
                passage,
                min_confidence=config.min_confidence,
                bonus=bonus,
                lead=lead,
                text_words=whole,
                observed=message.role != "user",
                report=report,
            )
            if not verdict.accepted or verdict.type is None:
                result.rejected[verdict.reason] += 1
                continue
            if (
                message.role == "user"
                and verdict.type is KnowledgeType.FAILURE
                and _ASKS.search(verdict.text) is not None
            ):  # "my vim suddenly broke… is it because I did an apt upgrade?": a symptom
                result.rejected["user-question"] += 1  # and a question; the answer is the lesson
                continue
            if seen_passages is not None and seen_passages.is_template(
                verdict.text, message.session_id or session
            ):
                result.rejected["template"] += 1
                continue
            digest_hash = content_hash(verdict.text)
            if digest_hash == EMPTY_HASH:
                result.rejected["empty"] += 1
                continue
            kclass = verdict.knowledge_class.value if verdict.knowledge_class else None
            candidate = _message_candidate(
                verdict.text,
                verdict.type.value,
                kclass,
                verdict.confidence,
                source,
                message,
                session,
                digest_hash,
            )
            if (
                message.role == "assistant"
                and not confirmed
                and miner is not None
                and config.narration_needs_witness
                and message.kind not in SUMMARY_KINDS
                and not miner.witness.names_any(verdict.text)
            ):
                unwitnessed.add(digest_hash)  # judged at the end (:mod:`._witness`)
            if message.role == "assistant" and not confirmed and is_diagnosis(verdict.text):
                settle(False)  # a later diagnosis before the user spoke: the agent moved on
                held.append((candidate, edits()))
                continue
            keep(candidate)
    for candidate, before in held:  # the session ended: kept if the agent acted on it
        if edits() > before:
            keep(candidate)
        else:
            result.rejected["unconfirmed-diagnosis"] += 1
    held.clear()
    if miner is not None:
        for sequence in [*miner.drain(), *miner.finish()]:
            candidate = _sequence_candidate(sequence, config, source, None, session)
            if candidate is not None:
                mined[candidate.content_hash] = sequence
                keep(candidate)
        result.rejected["repeated-failure"] += miner.repeated
        refuted = {h for h, sequence in mined.items() if sequence.refuted}
        if refuted:  # the failed command failed again the same way after its "cure"
            kept = [c for c in found if c.content_hash not in refuted]
            result.rejected["refuted-cure"] += len(found) - len(kept)
            found = kept
        found = _one_cause(found, mined, result, miner.given_up, miner.failed_log)
        failed = failed_programs(c.content for c in found if c.extractor == "sequence")
        errors = failed_errors(c.content for c in found if c.extractor == "sequence")
        if failed or errors:
            kept = [
                c
                for c in found
                if c.role != "assistant"
                or c.extractor != "rules"
                or not (restates(c.content, failed) or announces_escalation(c.content, errors))
            ]
            result.rejected["restated-failure"] += len(found) - len(kept)
            found = kept
        if unwitnessed and miner.calls:
            kept = [c for c in found if c.content_hash not in unwitnessed]
            result.rejected["unwitnessed"] += len(found) - len(kept)
            found = kept
        result.observations = [
            _observation(r, session or Path(source).stem, source) for r in miner.probes.resolved
        ]
    if no_signal:
        result.rejected["no-signal"] += no_signal
    if progress is not None:
        progress(transcript.report.bytes_read)
    result.messages = transcript.report.messages
    return found


def _one_cause(
    found: list[ForgedCandidate],
    mined: dict[str, Sequence],
    result: ForgeResult,
    given_up: Iterable[tuple[str, str]] = (),
    failed_log: Iterable[tuple[str, str]] = (),
) -> list[ForgedCandidate]:
    """``found`` with the failures that share a cause joined into one chain lesson, what a
    killed call left behind named with it, and the agent's sentence a failure already quotes
    as its reason dropped (:mod:`._samecause`)."""
    at = [
        (n, mined[c.content_hash])
        for n, c in enumerate(found)
        if c.extractor == "sequence"
        and c.content_hash in mined
        and mined[c.content_hash].tool != "api"
        and not mined[c.content_hash].prompted
    ]
    failures = [Failure(s.failed_call, s.error, bool(s.fixed_call), s.reason) for _, s in at]
    replaced: dict[int, ForgedCandidate] = {}
    dropped: set[int] = set()
    for group in groups(failures):
        lead = found[at[group[0]][0]]
        content = chain(lead.content, [failures[k] for k in group[1:]])
        members = [found[at[k][0]] for k in group]
        replaced[at[group[0]][0]] = replace(
            lead,
            content=content,
            content_hash=content_hash(content),
            confidence=max(c.confidence for c in members),
        )
        dropped.update(at[k][0] for k in group[1:])
    later = [Failure(call, error, False) for call, error in given_up]
    log = list(failed_log)
    for k, failure in enumerate(failures):
        left = [f for f in later if left_behind(failure, f)][:1]
        checked = checked_after(failure, log) if not left else None
        if left or checked is not None:
            n = at[k][0]
            lead = replaced.get(n, found[n])
            content = chain(lead.content, [], left, [checked] if checked else [])
            replaced[n] = replace(lead, content=content, content_hash=content_hash(content))
    reasons = [s.reason for _, s in at if s.reason]
    dropped.update(
        n
        for n, c in enumerate(found)
        if c.extractor == "rules" and c.role == "assistant" and quoted_reason(c.content, reasons)
    )
    if not dropped and not replaced:
        return found
    result.rejected["same-cause"] += len(dropped)
    return [replaced.get(n, c) for n, c in enumerate(found) if n not in dropped]


def _observation(resolved: Resolved, session: str, source: str) -> ProbeObservation:
    return ProbeObservation(
        session,
        resolved.call,
        resolved.path,
        resolved.resolution,
        resolved.found,
        parse_time(resolved.timestamp),
        f"{source}:{resolved.line_no}",
    )


EMPTY_HASH = content_hash("")
"""What a passage with no body (front matter only) would hash to: never a candidate."""


DIAGNOSTIC_CONFIDENCE = 0.7
"""A coded diagnostic that names its remedy: the tool's own rule, not a reading of it."""


def _message_candidate(
    content: str,
    kind: str,
    kclass: str | None,
    confidence: float,
    source: str,
    message: Message,
    session: str | None,
    digest_hash: str,
) -> ForgedCandidate:
    return ForgedCandidate(
        content,
        kind,
        kclass,
        confidence,
        source,
        message.index,
        message.line_no,
        message.timestamp,
        message.session_id or session,
        message.role,
        digest_hash,
    )


def _sequence_candidate(
    sequence: Sequence,
    config: ForgeConfig,
    source: str,
    message: Message | None,
    session: str | None,
) -> ForgedCandidate | None:
    confidence = min(0.99, config.sequence_confidence + (0.1 if sequence.reason else 0.0))
    kind = "solution" if sequence.fixed_call else "failure"
    if kind == "failure" and sequence.tool != "api" and not sequence.fact:
        confidence -= config.unresolved_penalty  # a fact the error states stands on its own
    if confidence < config.min_confidence:
        return None
    content = sequence.content()
    return ForgedCandidate(
        content,
        kind,
        "workflow",
        round(confidence, 4),
        source,
        sequence.message_index,
        sequence.line_no,
        sequence.timestamp,
        (message.session_id if message else None) or session,
        "tool",
        content_hash(content),
        extractor="sequence",
    )


BLANK_PROBE_BYTES = 4096
"""A file up to this size is read whole to see whether it holds anything but whitespace."""


def _blank(path: Path, size: int) -> bool:
    """Whether the file holds nothing but whitespace (one ``stat`` for an empty file)."""
    if size == 0:
        return True
    if size > BLANK_PROBE_BYTES:
        return False
    try:
        return not path.read_bytes().strip()
    except OSError:
        return False  # forging it reports why


def forge_transcript(
    path: Path | str,
    layout: AgentsLayout,
    locks: StoreLocks,
    config: ForgeConfig | None = None,
    *,
    key: str | None = None,
    fmt: str | None = None,
    completer: Completer | None = None,
    progress: Progress | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> ForgeResult:
    """Forge one transcript into a pending file; safe to repeat (see the module docstring)."""
    started = time.monotonic()
    config = config or ForgeConfig()
    path = Path(path).resolve()
    key = key or str(path)
    result = ForgeResult(str(path), key)
    fingerprint = file_fingerprint(path)
    if _blank(path, fingerprint["size"]):
        # Nothing to mine, so nothing to record: no ledger line, no lock, no fsync (10,000 empty
        # files took 15 minutes that way). A file that grows changes size and is forged then.
        result.status = "empty"
        result.seconds = time.monotonic() - started
        return result
    if not force and already_forged(layout, key, fingerprint):
        result.status = "unchanged"
        result.seconds = time.monotonic() - started
        return result
    transcript = open_transcript(path, fmt, max_line_bytes=config.max_line_bytes)
    result.format = transcript.format.value
    use_llm = completer is not None and config.llm.enabled
    digest = _Digest(config.llm.max_input_chars) if use_llm else None
    seen_passages = SeenPassages(passages_path(layout), key) if config.template_memory else None
    found = extract_candidates(
        transcript, config, result, progress=progress, digest=digest, seen_passages=seen_passages
    )
    session = transcript.report.session_id
    if use_llm and digest is not None and completer is not None:
        extra, result.llm = llm_candidates(
            completer,
            redacted(digest.text()),
            config,
            source=str(path),
            session_id=session,
            last_index=max(result.messages - 1, 0),
        )
        hashes = {c.content_hash for c in found}
        found += [c for c in extra if c.content_hash not in hashes]
    if config.narration_needs_limit and transcript.format is not TranscriptFormat.MARKDOWN:
        found = _narrated_limits(found, result)  # notes a person kept are not the agent's work
    if config.max_narrated:
        found = _strongest_narrated(found, config.max_narrated, result)
    found, secret = without_secrets(found)  # nothing a transcript printed leaves it as a secret
    result.rejected.update({"secret": secret} if secret else {})
    result.report = transcript.report.as_dict()
    result.candidates = len(found)
    result.found = found
    write_candidates(
        layout,
        locks,
        found,
        result,
        source=path,
        fmt=transcript.format.value,
        session=session,
        now=now or datetime.now(UTC),
        ledger={"key": key, "transcript": str(path), **fingerprint},
        seen_passages=seen_passages,
    )
    record_probes(layout, locks, result.observations)  # observations, not candidates
    result.seconds = time.monotonic() - started
    return result
