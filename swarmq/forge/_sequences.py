"""Mining error → retry → success: where agents actually learn.

A tool call fails (its result carries an error flag, a non-zero exit code or a refusal), the agent
changes something, and a later call of the same tool succeeds with a different input. That pair,
with the error quoted, is a candidate: ``python: command not found`` → ``python3``, a scaffold
prompt that hangs → ``--yes``, ``rg`` missing → ``grep -R``. The agent's own sentence between the
two, when it says why, is kept with them.

Only a bounded state is kept per transcript (the calls still waiting for their result and the
open failures of the last few calls), so mining stays streaming. A failure whose error signature
was already seen in the transcript counts once. Failures that are not about the environment or
the tools (web fetches of a dead page, Claude Code's edit-protocol refusals) are not mined.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from swarmq.forge._calls import (
    CD_PREFIX,
    ERROR_LINE,
    LITERAL_GLOB,
    MCP_PREFIX,
    NOT_FOUND_TRANSLATED,
    WARNING_LINE,
    as_text,
    call_texts,
    clip,
    edited_named,
    error_excerpt,
    exit_status,
    folders,
    mcp_call,
    mcp_server,
    normal,
    operands,
    program,
    reason_of,
    sandbox_wrapped,
    summarise_call,
    unproxied,
    writes_same_file,
)
from swarmq.forge._envfacts import (
    PORT_TAKEN,
    STORE_ALIAS_EXIT,
    TOO_LARGE,
    crlf_script,
    environment_fact,
    family,
    literal_glob,
    missing_program,
    missing_subcommand,
    not_granted,
    not_started,
    pattern_as_path,
    same_family,
    store_alias,
    tool_rule,
    unexpanded_wildcard,
    windows_fact,
)
from swarmq.forge._formatting import FormatterWatch, formatter_fact
from swarmq.forge._layout import (
    base_name,
    file_paths,
    nothing_found,
    relocation,
    says_missing,
    searched_names,
)
from swarmq.forge._leftout import only_left_out
from swarmq.forge._louder import asks_more
from swarmq.forge._probes import ProbeWatcher
from swarmq.forge._prompts import BACKGROUND, READERS, STOPPERS, PromptWatch
from swarmq.forge._sameintent import moved_workdir, split_substitution, without_stage
from swarmq.forge._staleread import RewriteWatch, stale_read, stale_read_fact
from swarmq.forge._usercure import installed_now
from swarmq.forge._witness import FailureWitness
from swarmq.transcripts.model import Message, MessageKind

RETRY_WINDOW = 4
"""How many later calls of the same tool may succeed the failure and still count as its retry."""
ENVIRONMENT_PATIENCE = 4
"""A failure about the machine (a sandbox refusal, a missing tool) stays open this many times
longer: the agent investigates (``which``, ``cat``, ``--version``) before it finds the way round,
and the way round (``python3 -m pytest`` for a killed ``pytest``) is the lesson."""

_SKIPPED_TOOLS = frozenset(
    {
        "WebFetch",
        "WebSearch",
        "web_search",
        "web_research",
        "TodoWrite",
        "update_plan",
        "AskUserQuestion",
        "ExitPlanMode",
        "EnterPlanMode",
        "Read",
        "Glob",
        "Grep",
        "LS",
        "NotebookRead",
        "write_stdin",
        "wait",
        "view_image",
    }
)
"""Lookups whose failure says "not there" (a dead page, a missing file), and polls of a running
process (whose output is the process's, not the call's: Codex's ``wait`` on a cell that runs
past its time reports the cell's timeout, which is the poll's answer, not a failure of its own)."""
_PROBES = frozenset(
    {
        "which",
        "ls",
        "test",
        "[",
        "command",
        "type",
        "stat",
        "cat",
        "head",
        "tail",
        "file",
        "pgrep",
        "ps",
        "echo",
        "pwd",
        # PowerShell's and cmd's own (program names compared lower-cased): Windows agents list,
        # read and test with these
        "get-childitem",
        "gci",
        "dir",
        "get-content",
        "get-location",
        "test-path",
        "get-item",
        "get-itemproperty",
        "get-process",
        "get-service",
    }
)
_PROBE_CALL = re.compile(
    r"^(?:git (?:status|rev-parse|log|diff|remote|show|ls-files)|mdfind|locate)\b|"
    r"^git config(?:\s+--(?:global|local|system|get|get-all))*\s+[\w.-]+\s*(?:$|[|;&])|"
    r"^git branch(?:\s+(?:-[a-z]+|--list|--all|--remotes|--show-current))*\s*(?:$|[|;&])|\s--version\b"
)
"""Programs an agent runs to ask whether something exists: their failing is an answer (``git
config user.name`` exits 1 when the key is unset: a question answered, not a failure)."""
_GIT_LOOK = re.compile(
    r"git (?:status|rev-parse|log|diff|show|ls-files)\b|git remote(?:\s+-v)?\s*(?:$|[|;&])"
)
"""git asked for the repository's state: it changes nothing, so it cures no failure."""
_MCP_LOOK = re.compile(
    r"__(?:browser_)?(?:snapshot|take_screenshot|console_messages|"
    r"network_requests|list|get|read|search|find|fetch|query|describe)\w*$|"
    r"__\w*_(?:screenshot|snapshot)$",
    re.IGNORECASE,
)
"""MCP tools that only look (a snapshot, a listing, a read, a screenshot of whatever server's
page: ``preview_screenshot``): no cure for another tool's failure."""
_PROBE_REFUSED = re.compile(r"detected dubious ownership|safe\.directory", re.IGNORECASE)
"""A probe that could not ask at all: git refusing a repository another user owns answers no
question about it, and until ``safe.directory`` is set every git call here fails alike."""
_CAT_WRITES = re.compile(
    r"^cat\s+(?:<<-?\s*['\"]?\w+['\"]?\s+>>?\s*(?!/dev/null\b)\S|>>?\s*(?!/dev/null\b)\S+\s+<<)"
)
"""``cat <<'EOF' > file`` (or ``cat > file <<EOF``): a file written from a heredoc, not a look;
its failure (``permission denied`` outside a sandbox's workspace) is a refusal to write."""
_LOOKUPS = frozenset(
    {"which", "type", "command", "whereis", "where", "where.exe", "get-command", "gcm"}
)
"""Asking where a program is does not do its work: never the retry that fixed a failure."""
_DELEGATING = frozenset({"Agent", "Task"})
"""A failed sub-agent call is retried by doing the work directly, with any tool."""
_EDITING = frozenset(
    {"apply_patch", "Edit", "MultiEdit", "Write", "str_replace_editor", "edit_file"}
)
"""Editing tools: when one fails on a file and another tool then writes that file (a heredoc, a
script), the other tool is the way round (``apply_patch`` NotFound → ``cat > file <<EOF``)."""
_ARGUMENTS = re.compile(
    r"failed to parse function arguments|missing field|unknown field|invalid type", re.I
)
_API_ERROR = re.compile(r"^API Error: (?:4\d\d|5\d\d)\b")
_API_HICCUP = re.compile(
    r"^API Error: 5\d\d\b.{0,300}?(?:internal server error|overloaded|service unavailable|"
    r"temporarily unavailable|bad gateway|gateway time-?out)",
    re.IGNORECASE | re.DOTALL,
)
"""A model provider's passing failure (500 "Internal server error", 529 "Overloaded"): the next
call works, and the next session meets nothing of it."""
_CODE_ERROR = re.compile(
    r"error\[E\d+\]|error TS\d+|mismatched types|use of moved value|cannot find (?:value|type|module)|"
    r"SyntaxError|TypeError|NameError|AttributeError|AssertionError|assertion failed|panicked at|"
    r"\b[1-9]\d* (?:failed|errors?)\b|FAILED|test result: FAILED|\b[Tt]ests? failed\b",
)
"""A compiler or test failure: the code was wrong, the fix is in the code, not a lesson here."""
_PROTOCOL = re.compile(
    r"has not been read yet|has been modified since read|string to replace not found|"
    r"found \d+ matches of the string|request interrupted|user doesn't want to proceed|"
    r"the user rejected|operation was aborted|interrupted by user|failed to find expected lines|"
    r"sibling tool call errored|<tool_use_error>Blocked: sleep\b",
    re.IGNORECASE,
)
_EDIT_MISMATCH = re.compile(
    r"failed to find (?:context|expected lines)|no changes to make|old_string|"
    r"string to replace|invalid patch|verification failed",
    re.IGNORECASE,
)
"""An edit refused because its own text did not fit the file (the anchor not found, nothing
changed, a malformed patch): the agent's slip, which its next edit of the file mends; no fact
about the file or the tool's rules."""
_WHERE_WRITTEN = re.compile(
    r"director|no such file|not found|permission|denied|not permitted|read-only", re.IGNORECASE
)
"""An edit refused for where it writes (a folder missing, no right to write there), not for what
it writes: an edit of the same file that then works was not cured by other content."""
_PATH_IN_OUTPUT = re.compile(r"[/\\]\S")
"""A single word with a path separator: a line of the command's output naming a file (``rg
--files`` listing what it found before it exited 2), not its error."""
_SH_NOT_FOUND = r"\b(?:sh|dash|bash)(?::\s*(?:line )?\d+)?: [\w.+-]+: not found\b"
"""``sh`` (dash) saying a program is missing: ``sh: 1: vitest: not found`` (an npm script's
program when the project's dependencies are not installed)."""
_MISSING_PROGRAM = re.compile(
    r"command not found|not found: |no such file or directory \(os error 2\)|"
    r"is not recognized as|failed to spawn|CommandNotFoundException|"
    + NOT_FOUND_TRANSLATED
    + "|"
    + _SH_NOT_FOUND,
    re.IGNORECASE,
)
"""The failing program itself is missing: whatever the agent ran next instead is the retry."""
_CANNOT_START = re.compile(
    r"^bwrap: |ApplicationFailedException|\bNativeCommandFailed\b", re.MULTILINE
)
"""The call never ran: Codex's sandbox launcher (bwrap) could not start, or Windows refused to
start the program (PowerShell's record, the same in every display language). Whatever the call
was (a probe, a search), this is a fact about the machine, not the call's answer."""
_ENVIRONMENT = re.compile(
    r"operation not permitted|permission denied|could not resolve|network|sandbox|not installed|"
    + _CANNOT_START.pattern
    + "|"
    r"command not found|CommandNotFoundException|sudo|access denied|killed by a signal|"
    + NOT_FOUND_TRANSLATED
    + "|"
    r"timed out|no space left|not found[.;,:]?\s+(?:please\s+)?install\b|"
    r"not a tty|no tty present|is not a terminal|\bEPERM\b|\bEACCES\b|\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|"
    + _SH_NOT_FOUND
    + "|"
    + PORT_TAKEN.pattern,
    re.IGNORECASE,
)
"""Failures that say something about the machine, worth keeping even when nothing fixed them."""
_SHELL_SYNTAX = re.compile(
    r"unexpected EOF while looking for matching|syntax error near unexpected token|"
    r"unterminated quoted string|" + LITERAL_GLOB,
    re.IGNORECASE,
)
"""The shell could not parse the command (quoting, a Windows path's trailing backslash): a
fact about the shell tool, worth keeping even when the agent went round it with another tool."""
_SEARCH_TOOLS = frozenset({"Grep", "Glob"})
"""The agent's own search tools (they run ``rg`` underneath)."""
_SPAWN_REFUSED = re.compile(r"spawn \S+ (?:EACCES|EPERM)|\b(?:EACCES|EPERM)\b.{0,40}\brg\b")
"""The program a search tool runs may not be started here."""
_SEARCHES = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack", "findstr", "git-grep"})
"""Search programs: exit status 1 means "no line matched", an answer, not a failure (2 is the
error status of grep and ripgrep alike)."""
_MISSING_FILE = re.compile(
    r"no such file or directory|cannot access|does(?: not|n't) exist|can't open file|"
    r"cannot find (?:the )?(?:path|file)|could not find (?:the )?file|\bENOENT\b|"
    r"did not match any file|cannot stat",
    re.IGNORECASE,
)
"""An error saying a named file or directory is not there."""
_REFUSED = re.compile(r"permission denied|not permitted|access (?:is )?denied|read-only", re.I)
"""The file is there but may not be touched: a fact about the machine, not a missing file."""
_TEST_RUN = re.compile(
    r"^(?:pytest|py\.test|python3? -m (?:pytest|unittest)|go test|cargo test|(?:npm|yarn|pnpm|bun)(?: run)? test|"
    r"npx (?:jest|vitest|mocha|playwright test)|jest|vitest|mocha|(?:bundle exec )?rspec|phpunit|"
    r"dotnet test|mvn test|gradle test|\./gradlew test|make test|ctest|swift test|xcodebuild test)\b"
)
"""A test run: when it fails because tests fail, the code was wrong (the fix is in the code)."""
_NO_TESTS = re.compile(r"^NO TESTS RAN\b|^no tests ran\b|\bcollected 0 items\b", re.MULTILINE)
"""A test runner that found no test to run (unittest's "NO TESTS RAN", pytest's "no tests ran",
exit 5): not the code's failure but the tests' layout or discovery."""
_ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S*)\s+)+")
"""Environment assignments before the program (``CI=1 DATABASE_URL="…" pnpm test``): they set
what the test run sees, and it is a test run all the same."""


def _test_run(call: str) -> re.Match[str] | None:
    """Whether ``call`` runs tests (a leading ``cd`` and environment assignments aside)."""
    return _TEST_RUN.match(_ASSIGNMENTS.sub("", unproxied(CD_PREFIX.sub("", call))))


def _tests_failed_last(call: str, output: str) -> bool:
    """Whether a chain's last step runs tests (``source .venv/bin/activate && pip install x &&
    python -m pytest -v``) and the output ends in their verdict of failing tests: a long verbose
    run says so at its end, past where a code error is looked for at the start."""
    last = _unhidden(call).rsplit("&&", 1)[-1].strip()
    return _test_run(last) is not None and _CODE_ERROR.search(output[-1500:]) is not None


_RUNNER_MISSING = re.compile(
    r"no module named|cannot find module|not installed|couldn't find a script|missing script|"
    r"unknown (?:command|script)|usage error",
    re.IGNORECASE,
)
"""A test run that could not start: the runner, a dependency or the script named is missing (a
fact about the machine or the project, not a test failure)."""
_DEPENDENCY = re.compile(
    r"no module named|cannot find module|ModuleNotFoundError|\bGemNotFound\b|"
    r"in locally installed gems|cannot open shared object file|"
    r"error while loading shared libraries|missing dependencies|"
    r"host system is missing dependencies",
    re.IGNORECASE,
)
"""Something the call needs is not installed (a module, a gem, a system library): a fact of the
machine, not a failing test or a bug of the code, and an install is its cure."""
_INSTALL = re.compile(
    r"\binstall(?:-deps)?\b|\b(?:npm|pnpm|yarn|bun) (?:i|add)\b|\buv (?:sync|add)\b"
)
"""A call that installs something (``bundle install``, ``apt-get install -y libgbm1``,
``python -m playwright install-deps chromium``)."""
_SPAWN_FAILED = re.compile(r"failed to spawn", re.IGNORECASE)
_SED_PRINT = re.compile(r"\bsed\s+-n\s+['\"]?[\d$,]+p['\"]?\s")
"""``sed -n '1,200p' file``: printing lines of a file, the way agents read one (a look)."""
_USAGE = re.compile(
    r"\bunrecogni[sz]ed (?:flag|option|argument|arguments)\b|"
    r"\bunknown (?:flag|option|shorthand flag|argument)\b|\binvalid (?:option|flag)\b|"
    r"\bunexpected argument\b|\bno such option\b|\billegal option\b|\bbad flag\b|"
    r"\btoo (?:many|few) arguments\b",
    re.IGNORECASE,
)
"""A program refusing how it was called: the next call of it that gets past this error has
learned how to call it, whatever else then fails."""
_REFUSED_CALL = re.compile(
    r"\b(?:unrecogni[sz]ed|unknown|invalid|no such) (?:sub)?command\b|^\s*Usage:",
    re.IGNORECASE | re.MULTILINE,
)
"""A later call refused in turn (``uv python3``: "unrecognized subcommand", its usage printed
again): it did not get past the usage error, it met another."""
_CD_TARGET = re.compile(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|\S+)")
_DIGITS = re.compile(r"\d+")
_PATHS = re.compile(r"\S*/\S*")
"""Paths in an error: the same failure on another file is the same failure."""


_LAST_STAGE = re.compile(r"(?<!\|)\|(?!\|)")
"""A pipe between two stages (not ``||``)."""

_EMPTY_STDERR = re.compile(r'stderr: StreamOutput \{ text: \\*"\\*"')

RELOCATION_WINDOW = 8
"""How many working calls after a missing file the same file may still be found elsewhere."""


def _named(call: str) -> set[str]:
    """The words of a call as program names (``/usr/bin/python3`` → ``python3``)."""
    return {word.rsplit("/", 1)[-1] for word in call.split()}


_WINDOWS_SEARCHES = frozenset({"get-childitem", "gci", "dir", "select-string", "sls", "findstr"})
"""PowerShell's and cmd's listing and searching: they do the job of ``rg``, ``find`` or ``ls``
when those cannot run (not one family with them: a timeout of one is not a timeout of the
other)."""


def _stands_in(missing: str, runs: str, named: set[str]) -> bool:
    """Whether a call running ``runs`` (naming ``named``) may do the missing program's job: a
    program of its family, or a call that names it (``python3 -m pytest``) or a program of its
    family (``$p='x.ts'; (Get-Content $p | Select-Object -First 9)`` for a missing ``sed``)."""
    return (
        same_family(missing, runs)
        or (same_family(missing, "rg") and runs.lower() in _WINDOWS_SEARCHES)
        or missing in named
        or any(same_family(missing, word.strip("(").lower()) for word in named if word)
    )


@dataclass
class _Missing:
    """A file looked for where it is not (its failure dropped as the answer of a look)."""

    tool: str
    call: str
    error: str
    path: str
    index: int
    waited: int = 0


@dataclass
class _Failure:
    tool: str
    call: str
    error: str
    index: int
    waited: int = 0
    reason: str = ""
    also: str = ""
    """For a missing program, its stand-in that failed too (its call and error)."""
    whole: str = ""
    """The failed call unclipped (a summary is cut: two long calls may share their summary)."""
    expects: str = ""
    """For a project's script run by its path that refused to run, the line of its output that
    says what it expects (``Feature branches should be named like: 001-feature-name``)."""
    usage: str = ""
    """The usage line the program printed with its error (``gt session status <rig>/<polecat>
    [flags]``), when it printed one for itself."""
    at_call: int = 0
    """How many tool calls the transcript had made when this one failed (see ``calls``)."""
    advised: tuple[str, int, int, str | None] | None = None
    """The working call its output advised, run as the next step (call, index, line, time): its
    cure, stated when the failed call is not run again. Advice taken later, after other tries,
    is one way round among them (a flag that skips a check), not the cure."""
    output: str = ""
    """The start of the failed call's output, normalised: a later call it spells out (git's
    "To add an exception …, call: git config --global --add safe.directory …") is its cure."""
    signature: str = ""
    """What tells this failure from another (:meth:`SequenceMiner._open`)."""
    again: list[str] = field(default_factory=list)
    """The later calls that failed alike while this one waited (an edit refused on one file
    after another: a script that then writes the latest of them is the way round)."""
    needs: bool = False
    """Its output says something it needs is not installed (a module, a gem, a library)."""
    remedies: list[str] = field(default_factory=list)
    """The working calls of the same tool since the failure that did something (not looks),
    the last few: when the failed call itself works next, the last of them was its cure (``git
    config --global --add safe.directory …`` for ``git status``, ``git checkout <feature>`` for
    Spec-Kit's "Not on a feature branch")."""
    escalation_asked: bool = False
    """The transcript ends on this call asked again with escalated permissions, unanswered."""
    unworded: bool = False
    """Its error names no failure in words forge knows (no ``ERROR_LINE``): kept open only for
    a later call of the same program, changed, that works (:meth:`SequenceMiner._unworded`);
    never a lesson on its own."""
    edited: str = ""
    """The last edit since the failure of a file the failed command names (``Edit
    …/verify-sync.ps1`` after ``& …/verify-sync.ps1`` failed to parse), as ``tool path``: when
    the command then works, as it was or with words left out, the edit was its cure."""


REMEDIES_KEPT = 2
"""How many working calls before a failed call's identical retry may hold its cure: the one
just before it (``git config --global --add safe.directory …`` between two ``git status``),
or one step earlier; further back it is the task's work, not the cure."""


@dataclass
class Sequence:
    """One mined failure and, when found, the retry that worked."""

    tool: str
    failed_call: str
    error: str
    fixed_call: str
    reason: str
    message_index: int
    line_no: int
    timestamp: str | None
    layout: str = ""
    """Where the file the failed call looked for really is, when the fix found it elsewhere."""
    also: str = ""
    """For a missing program, the stand-in the agent tried that failed too: ``python`` missing
    and ``python3 -m pytest`` answering "No module named pytest" says both that ``python3`` is
    there and that the tests cannot run, which neither failure says alone."""
    usage: str = ""
    """The usage line the program printed with its error, stated when nothing fixed it."""
    expects: str = ""
    """What a project's script that refused to run expects, stated when nothing fixed it."""
    installed: bool = False
    """The fix installed what the failed call needed, and the same command then got past it
    (it worked, or failed for another reason)."""
    rerun: bool = False
    """The failed call was refused with no exit status (a hook, a gate, a state outside the
    command) and got past it when run again as it was, as the next call of its tool."""
    retried: bool = False
    """The fix was done beside the failed call, which then worked as it was (``git config
    --global --add safe.directory …``, then the same ``git status``), not run in its place."""
    before: str = ""
    """For a fix done beside the failed call, the call just before it that did the same on
    another key (``git config --global user.name …`` before ``… user.email …``): part of it."""
    prompted: bool = False
    """The failed call never failed: it waited for an answer until the agent stopped it, and
    the fix is the same command with the answer given up front (:mod:`._prompts`)."""
    escalation_asked: bool = False
    """The sandbox refused the call and the transcript ends on the same call asked again with
    escalated permissions: the way out the agent took, though its answer is not seen."""
    workdir: str = ""
    """The failed call's relative path was resolved where an earlier ``cd`` had left the shell,
    and the same steps worked from another directory: the cause and the cure, in words
    (:func:`._sameintent.moved_workdir`); the working call is not repeated after it."""
    told: str = ""
    """The user's message saying the missing program is installed now (:mod:`._usercure`): the
    cure, done outside the transcript's calls."""
    rewritten: bool = False
    """The failed call was an edit and the next edit of the same file, with other content,
    worked: the content the tool refused was the cause, the file was fine."""
    escalated: bool = False
    """The fix is a call that failed alike while the failure waited (``git checkout -b
    feat-x`` after ``git checkout -b feat/x``, both kept from writing ``.git/refs``), run again
    with escalated permissions: the sandbox refused both, so the lesson is the sandbox's."""
    signature: str = ""
    """The closed failure's signature (:meth:`SequenceMiner._open`): the same failure met
    again after the cure is told by it."""
    refuted: bool = False
    """The failed command was run again after the cure and failed the same way: the cure did
    not cure it, and the lesson must not say it worked (:meth:`SequenceMiner._refuted`)."""
    then: str = ""
    """For a fix done beside the failed call (``retried``), the call that then worked when it is
    not the failed call as it was but the same with words left out."""

    @property
    def claims_cure(self) -> bool:
        """Whether the lesson says the fixed call "worked instead": a different call run in the
        failed one's place, which a later rerun of the failed command can refute (a cure run
        beside it and seen to let it work, an install, a rerun, say more than that)."""
        return bool(self.fixed_call) and not (
            self.prompted
            or self.rerun
            or self.installed
            or self.retried
            or self.workdir
            or self.rewritten
            or self.told
            or self.escalated
            or self.escalation_asked
        )

    @property
    def fact(self) -> str:
        """What the error says about the machine on its own, stated when nothing fixed it, and
        for a missing program also beside its substitute (``""`` when it says nothing); for a
        file looked for in the wrong place, where it lives."""
        if self.layout:
            return self.layout
        if self.tool == "api":
            return ""
        runs = program(self.failed_call) or self.tool
        if self.escalation_asked:
            return (
                f"the sandbox refuses `{runs}` here; the agent asked to run it again with "
                f"escalated permissions{ESCALATION}"
            )
        rule = (
            tool_rule(runs, self.error, self.failed_call)
            or formatter_fact(self.failed_call, self.error)
            or stale_read_fact(self.error)
        )
        if rule:
            return rule
        if self.usage and not self.fixed_call:
            return f"its usage: `{self.usage}`"
        if self.expects and not self.fixed_call:
            return f"the script says: {self.expects}"
        if self.escalated or normal(self.fixed_call) == normal(f"{self.failed_call} (escalated)"):
            return (
                f"the sandbox refuses `{runs}` here; it runs with escalated permissions{ESCALATION}"
            )
        if (
            self.fixed_call
            and not missing_program(runs, self.error, self.failed_call)
            and not not_started(runs, self.error)
            and not literal_glob(self.error)
            and not windows_fact(self.failed_call, self.error)
            and not PORT_TAKEN.search(self.error)
        ):
            return ""  # a taken port is said whatever got round it: the next start meets it
        return environment_fact(runs, self.error, self.failed_call)

    def content(self) -> str:
        """One lesson line: the failing call as run, its error as printed, the cause when the
        agent said it, what the error says about the machine, then the fix (``recall`` reads the
        call and the error back out of it)."""
        if self.tool == "api":
            return f"The agent's model call failed: {self.error}."
        if self.prompted:
            return (
                f"`{self.failed_call}` waited for input until it was stopped ({self.error}); "
                "an agent's command gets no answer from a terminal, so give the answer in the "
                f"call: `{self.fixed_call}` ran it."
            )
        text = f"`{self.failed_call}` failed ({_elide_paths(self.error, self.failed_call)})"
        if self.reason:
            text += f"; {self.reason.rstrip('.。')}"
        fact = self.fact
        if fact:
            text += f"; {fact}"
        if self.also:
            text += f"; {self.also}"
        if self.told:
            return f'{text}; the user installed it and said so: "{self.told}".'
        if not self.fixed_call:
            return f"{text}." if fact else f"{text}; no retry worked."
        if self.workdir:
            return f"{text}; {self.workdir}."
        if self.rewritten:
            return (
                f"{text}; the same file edited again with other content worked: the refused "
                "content was the cause."
            )
        if self.rerun:
            return (
                f"`{self.failed_call}` was refused ({self.error}); run again unchanged, the "
                "same call got past it: what refused it was outside the command (a hook, a "
                "gate, or a state changed in between)."
            )
        if self.installed:
            return f"{text}; after `{self.fixed_call}` the same command got past this error."
        if self.retried:
            both = f"`{self.before}` and " if self.before else ""
            editor, _, written = self.fixed_call.partition(" ")
            ran = f"`{self.then}`" if self.then else "the same call"
            if editor in _EDITING and written:
                return f"{text}; after {both}{editor} wrote `{written}`, {ran} worked."
            return f"{text}; after {both}`{self.fixed_call}` the same call worked."
        runs = program(self.failed_call)
        cure = without_stage(
            self.failed_call, self.fixed_call, missing_program(runs, self.error, self.failed_call)
        ) or split_substitution(self.failed_call, self.fixed_call, self.error)
        if cure:
            text += f"; {cure}"
        return f"{text}; `{self.fixed_call}` worked instead."


ESCALATED = " (escalated)"
"""How a call summary says that the call asked to leave the sandbox (:mod:`._calls`)."""
ESCALATION = (
    ' (ask in the call: `sandbox_permissions: "require_escalated"`, in older Codex '
    "`with_escalated_permissions: true`)"
)
"""How a Codex call leaves the sandbox: the lesson names the parameter, which the next session
needs to do it (its name changed between Codex versions, so both are given)."""

LONG_PATH = 60
"""A path of the failing call at least this long is shortened where its error repeats it; a
shorter one is kept as printed (the error's own words: a reader searches for them, and the
280-character view of a lesson shortens quoted spans itself)."""
_PATH_SPLIT = re.compile(r"[/\\]")


def _elide_paths(error: str, call: str) -> str:
    """The error with the call's long paths shortened to ``…/`` and their last two components
    (the last one when two are long):
    the call already spells them whole, and a lesson is cut to fit its length, so a path said
    twice would cost the error its words (``No such file or directory``)."""
    for word in call.split():
        path = word.strip("'\"`()")
        if len(path) < LONG_PATH or path not in error:
            continue
        parts = [p for p in _PATH_SPLIT.split(path) if p]
        if len(parts) > 2:
            separator = "\\" if "\\" in path and "/" not in path else "/"
            short = separator.join(parts[-2:])
            short = short if len(short) < LONG_PATH else parts[-1]
            error = error.replace(path, "…" + separator + short)
    return error


_OPERAND_SLOT = re.compile(
    r"<[^>\s]+>|\[(?!flags\]|options\]|command\]|OPTIONS\]|FLAGS\])[^\]\s]+\]"
)
"""An operand's place in a usage line (``<address>``, ``[id...]``), not ``[flags]``."""
_USAGE_LINE = re.compile(r"^\s*Usage:[ \t]*(?:\n[ \t]*)?(\S[^\n]{0,150})", re.MULTILINE)


def _usage(runs: str, output: str) -> str:
    """The usage line a command-line program printed with its error (cobra, click and argparse
    print one on a malformed call), when it names the program run: how to call it, which the
    next session needs whether or not this one found the way."""
    found = _USAGE_LINE.search(output)
    if not found or not runs:
        return ""
    line = " ".join(found.group(1).split())
    if line.split()[0].rsplit("/", 1)[-1] != runs or not _OPERAND_SLOT.search(line):
        return ""  # cobra prints its usage on every error: only one that says what the
        # call's operands must look like (``<rig>/<polecat>``) tells how to call it
    return line


_SCRIPT_REFUSAL = re.compile(r"^(?:ERROR|Error|error)\s*:\s*\S")
"""A message a script printed itself to refuse (``ERROR: Not on a feature branch. …``), not a
crash's traceback or another program's error passed through."""
_EXPECTS = re.compile(
    r"\b(?:should be|must be|needs? to be|named like|expected|expects|run \S+ first|"
    r"please (?:run|use|create|switch))\b",
    re.IGNORECASE,
)


def _expectation(output: str, error: str) -> str:
    """The line a refusing script printed beside its error to say what it expects (``""`` when
    it says nothing of the kind): a refusal that says what the project's workflow expects is a
    fact the next session needs (Spec-Kit's scripts on a branch not named like
    ``001-feature-name``)."""
    for line in output.replace("\\n", "\n").splitlines():
        line = line.strip()
        if line and line not in error and _EXPECTS.search(line):
            return clip(line.replace("`", "'"), 160)
    return ""


def _runner(call: str, runs: str) -> str:
    """Who failed, for telling one failure from another: a program's family (the same refusal
    of ``go`` and ``gofmt`` is one fact, of ``git`` and ``npm`` two), or any file run by its
    path (``setup-plan.sh`` refused like ``check-prerequisites.sh`` is the same failure on
    another file)."""
    words = CD_PREFIX.sub("", call).split(maxsplit=1)
    first = words[0].strip("\"'") if words else ""
    return "<file>" if "/" in first or "\\" in first else family(runs)


_HIDING = re.compile(r"(?:\s*2>&1|\s*2>\s*/dev/null|\s*(?:\|\||;)\s*(?:true|:|exit 0))+\s*$")
"""What makes a failing call look as if it worked (``2>&1 || true``): it hides the error, so the
call with it is the same call again, not a cure."""


def _unhidden(call: str) -> str:
    """``call`` without a trailing ``2>&1 || true`` (or ``2>/dev/null``, ``; true``)."""
    return _HIDING.sub("", call) if ("true" in call or "2>" in call or ":" in call) else call


def _last_step(call: str) -> str:
    """A call's last ``&&`` step, normalised: ``pwd && git status`` and ``cd ~/gt && git
    status`` run the same command again, and so does ``git status 2>&1 || true``."""
    return normal(_unhidden(call).rsplit("&&", 1)[-1])


_RUNNING = "Process running with session ID "
"""How Codex's unified exec reports a command still running when its call returns."""
_RUNNING_ID = re.compile(r"(\d+)")


def _polled(raw: Any) -> str:
    """The session id a ``write_stdin`` call polls (its arguments are a JSON object)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return ""
    return str(raw.get("session_id", "")) if isinstance(raw, dict) else ""


_COMMAND_TOOLS = frozenset(
    {"Bash", "PowerShell", "exec_command", "shell", "shell_command", "local_shell"}
)
"""Tools whose call is a command: a refusal of one that reports no exit status never ran it."""
_SANDBOXED = re.compile(r"operation not permitted|permission denied|sandbox", re.IGNORECASE)
"""What a sandbox's refusal says (the call asked again with escalated permissions answers it)."""
_STEP = re.compile(r"&&|\|\||;")
_NOT_RUN = re.compile(
    r"timed out|timeout|interrupted|aborted|cancell?ed|killed|"
    r"sandbox|execution error|exec_command failed",
    re.IGNORECASE,
)
"""A call stopped while it ran, or that its sandbox failed (Codex reports a sandboxed call that
exited non-zero with no status of its own): its rerun working says nothing of a gate before it."""


def _steps(call: str) -> frozenset[str]:
    """A call's steps (split at ``&&``, ``||`` and ``;``), each without a hidden error, a
    leading ``cd`` dropped: ``cd x && a; b 2>&1`` and ``a && b`` run the same steps."""
    return frozenset(
        step
        for step in (normal(_unhidden(part)) for part in _STEP.split(CD_PREFIX.sub("", call)))
        if step and not step.startswith("cd ")
    )


_SEGMENT = re.compile(r"&&|\|\||;|\|")
_CMD_WRAPPER = re.compile(r"^cmd(?:\.exe)?\s+/[cCkK]\s+", re.IGNORECASE)
_READERS = frozenset(
    {
        "more",
        "less",
        "wc",
        "sort",
        "uniq",
        "findstr",
        "select-string",
        "dir",
        "get-childitem",
        "tree",
    }
)
"""Programs that print what is there and change nothing (beside probes, searches and the
``cat`` family)."""
_WRITES = re.compile(
    r"(?<![0-9&])>(?!&)|\s-(?:delete|exec|execdir|fprint)\b|\b(?:sed|perl)\b[^|;&]*\s-[a-zA-Z]*i\b"
)
"""A redirection into a file, or a search or an editor told to act (``find -delete``,
``sed -i``, ``perl -pi``): the call changes something (``grep -i`` only ignores case)."""


_PACKAGE_QUERY = re.compile(
    r"^(?:sudo\s+)?(?:apt(?:-get)?\s+(?:list|search|show|policy)\b|apt-cache\s|"
    r"dpkg(?:-query)?\s+-(?:l|s|L|W)\b|(?:python3?\s+-m\s+)?pip3?\s+(?:list|show|freeze)\b|"
    r"(?:npm|pnpm|yarn)\s+(?:ls|list|view|info|outdated)\b|brew\s+(?:list|search|info)\b|"
    r"snap\s+(?:list|find|info)\b|gem\s+list\b|conda\s+list\b|rpm\s+-q|"
    r"(?:dnf|yum)\s+(?:list|search|info)\b|pacman\s+-[QS][si]?\b)",
    re.IGNORECASE,
)
"""A package manager asked what is installed or available (``apt list --installed``, ``pip
show x``, ``snap find x``): it prints and changes nothing."""
_ASKS_USAGE = re.compile(r"(?:^|\s)--help(?=\s|$)|^(?:man|tldr)\s")
"""A program asked for its usage (``claude mcp add --help``, ``man rsync``): it prints how to
call the program and changes nothing, so it is how the agent looked for the cure, not the cure."""
_ACTS = frozenset({"rm", "rmdir", "unlink", "mv", "cp", "mkdir", "touch", "chmod", "chown", "ln"})
"""Programs that change files: a step of theirs makes a chain that opens with a probe act
(``test -f .git/index.lock && rm .git/index.lock``)."""


def acts_on_files(call: str) -> bool:
    """Whether a step of ``call`` changes files (``rm``, ``mv``, ``chmod``, …), whatever the
    probes around it: ``test -f F && rm F`` removes what a failure stumbled on (a stale lock),
    while its first program alone would call it a probe."""
    return any(
        program(_CMD_WRAPPER.sub("", segment.strip())).lower() in _ACTS
        for segment in _SEGMENT.split(CD_PREFIX.sub("", call))
    )


def reads_only(call: str) -> bool:
    """Whether every step of ``call`` only reads (``grep x package.json``, ``cmd /c type f |
    more``, ``sed -n '1,80p' f``): such a call changes nothing, so when a failed call works
    after it, it was not the cure (the failure was transient, or what changed was done by
    another tool)."""
    bare = CD_PREFIX.sub("", call)
    if not bare or _WRITES.search(bare.replace("2>/dev/null", "").replace("2>&1", "")):
        return False
    for segment in _SEGMENT.split(bare):
        step = _CMD_WRAPPER.sub("", segment.strip())
        if not step or step.startswith("cd "):
            continue
        runs = program(step).lower()
        if _ASKS_USAGE.search(step) or _PACKAGE_QUERY.match(step):
            continue
        if runs == "sed":
            if _SED_PRINT.search(step + " ") is None:
                return False
        elif not (
            runs in _PROBES or runs in _SEARCHES or runs in _READERS or same_family("cat", runs)
        ):
            return False
    return True


_SETTINGS_FILE = re.compile(
    r"(?:^|[/\\])(?:\.[\w.-]+|[\w.-]+\.(?:json|jsonc|toml|ya?ml|ini|cfg|conf|env|properties))$",
    re.IGNORECASE,
)
"""A file a command reads its settings from: a dotfile (``.gitignore``, ``.npmrc``) or a config
format. Code is left out: a failed build that works after an edit of the code had a bug, and
its fix is in the code, not a lesson of the machine."""


def _writes_settings(tool: str, call: str) -> bool:
    """Whether an editing tool's call writes a settings file (``Write /home/u/.gitignore``)."""
    return tool in _EDITING and _SETTINGS_FILE.search(call.strip()) is not None


_BUSY = re.compile(
    r"device or resource busy|text file busy|being used by another process|resource busy",
    re.IGNORECASE,
)
"""A target something still holds (a process a killed call left running): it can neither be
removed nor reused until that ends."""


def _renamed_past_busy(failure: _Failure, call: str) -> str:
    """What a call that went round a busy target by a new name says (``""`` when it is not one):
    ``rm -rf app && npm create vite app`` refused ("Device or resource busy"), then ``npm create
    vite app-2`` worked: the same last step, one word changed into a name that extends the busy
    one. Another step's work is no cure; the new name is."""
    if _BUSY.search(failure.error) is None or "&&" not in (failure.whole or failure.call):
        return ""
    last = (failure.whole or failure.call).rsplit("&&", 1)[-1].split()
    now = CD_PREFIX.sub("", call).split()
    if len(last) != len(now) or len(last) < 2 or last[0] != now[0]:
        return ""
    changed = [(a, b) for a, b in zip(last, now, strict=True) if a != b]
    if len(changed) != 1:
        return ""
    old, new = (w.strip("'\"") for w in changed[0])
    if len(old) < 3 or not new.startswith(old) or old not in failure.error:
        return ""
    return f"`{old}` stayed busy, and the work went on as `{new}`"


_CD_REFUSED = re.compile(r"(?:^|[\s:])cd: |\bcd to '")
"""The refusal is the ``cd``'s own (``bash: cd: C:UserstaejoDownloads: No such file or
directory``; Claude Code's "cd to '/c/Users/…' was blocked")."""


def _cd_changed(call: str, refused: str, error: str) -> bool:
    """Whether ``call`` changed the very ``cd`` whose refusal ``error`` is: then it is the cure
    (a relative path for a Windows one whose backslashes the shell dropped, a directory the
    session may enter), not the same steps run again, which :func:`_steps` would see with the
    ``cd`` dropped. A relative ``cd`` that failed because an earlier one still held is told by
    :func:`moved_workdir` instead."""
    if _CD_REFUSED.search(error) is None:
        return False
    before, after = CD_PREFIX.match(refused), CD_PREFIX.match(call)
    return (before.group(0).strip() if before else "") != (after.group(0).strip() if after else "")


def _reruns(call: str, refused: str) -> bool:
    """Whether ``call`` runs what the refused call ran, as it was: the same steps, or some
    of them and nothing else (the agent dropped a step the refusal made moot)."""
    now, before = _steps(call), _steps(refused)
    return (
        any(len(step.split()) > 1 for step in now)  # a bare program (``bash`` with its script
        and bool(before)  # on stdin) is no call that can be told again
        and (now <= before or before <= now)
    )


def _installed(call: str, failure: _Failure) -> str:
    """The install run since a failure for want of something installed (``""`` when none),
    when ``call`` runs the failed call's program again: ``bundle install`` between two
    ``bundle exec rails runner`` calls, ``playwright install-deps`` between two runs of a
    browser test. That the program then gets past the error is the install's doing."""
    if not failure.needs or _head(call) != _head(failure.whole or failure.call):
        return ""
    return next((r for r in reversed(failure.remedies) if _INSTALL.search(r)), "")


HEAD_WORDS = 3
"""How many words of a command say what it does (``bundle exec rails``, ``python x.py
--app-url``): a later call with the same head runs the same command on other input."""


def _head(call: str) -> str:
    """The first words of a call's last ``&&`` step, without a leading ``cd`` or environment
    assignments: ``DISABLE_SPRING=1 bundle exec rails runner "…"`` → ``bundle exec rails``."""
    step = _ASSIGNMENTS.sub("", CD_PREFIX.sub("", _unhidden(call).rsplit("&&", 1)[-1].strip()))
    return " ".join(step.split()[:HEAD_WORDS])


def _subcommand(call: str) -> str:
    """A call's program and its first word (``git fetch``, ``go test``): a refusal is got past by
    the same command run otherwise (``GOCACHE=/tmp/go-build go test ./...``), not by another
    command of the program that never met it (``git ls-remote`` beside a ``git fetch`` the sandbox
    kept from writing ``.git/FETCH_HEAD``)."""
    return " ".join(_head(call).split()[:2])


_SETS_UP = re.compile(r"(?:config|configure|set|setup|settings|env)$", re.IGNORECASE)
"""Subcommands that set a program up rather than do the task's next step."""


def _runs_otherwise(call: str, failed: str) -> bool:
    """Whether ``call`` runs the failed call's program only with another subcommand (``git init
    && gh repo clone …`` after ``gh auth login`` timed out): the next step of the task, which
    never met the failure, not its cure. A subcommand that sets the program up (``npm config
    set prefix …`` after ``npm install -g`` was refused) may be the cure."""
    runs = program(failed)
    wanted = {_subcommand(step) for step in _STEP.split(failed) if program(step) == runs}
    other = False
    for step in _STEP.split(CD_PREFIX.sub("", call)):
        if step.strip() and program(step) == runs:
            subcommand = _subcommand(step)
            if subcommand in wanted or _SETS_UP.match(subcommand.partition(" ")[2]):
                return False
            other = True
    return other


_TIMED_OUT = re.compile(r"\btimed out after\b|\bCommand timed out\b", re.IGNORECASE)
"""A shell tool's own limit stopped the call (Claude Code's "Command timed out after 2m 0.0s"):
the command was too big for the tool, not wrong."""


def _narrowed(call: str, failure: _Failure, calls: int) -> bool:
    """Whether ``call``, the very next one, does a timed-out call's work with a program that call
    ran inside it (``grep -r … | head`` after ``find … -exec grep … {} \\;`` timed out): the job
    made small enough for the tool's time limit, the timeout's cure."""
    failed, runs = failure.whole or failure.call, program(failure.call)
    inside = failed.partition(runs)[2]  # not the shell that wrapped it (``powershell -Command``)
    return (
        calls - failure.at_call <= 1
        and _TIMED_OUT.search(failure.error) is not None
        and bool(runs)
        and program(call) != runs
        and program(call) in _named(inside)
    )


_CMD_C = re.compile(r"\bcmd(?:\.exe)?\s+/[cCkK]\b")
"""``cmd /c …``: when all it printed is cmd's banner, the command never ran (Git Bash rewrote
``/c`` into a path, so cmd started as an interactive shell and read end of input)."""
_ECHOED_FAILURE = re.compile(r"\|\|\s*echo\s+(?:\\?\"([^\"\\]{6,})\\?\"|'([^']{6,})')")
"""A call that says so when it fails (``… || echo "Push failed - authentication required"``):
its status is the echo's, so its output is the witness."""
_FAILURE_WORD = re.compile(
    r"fail|error|\bnot\b|n't|\bno\b|unable|cannot|denied|required|missing|unavailable|"
    r"limited|不可用|失败|失敗|错误|エラー|できません",
    re.IGNORECASE,
)
"""What an echoed verdict says when it reports a failure ("checking alternatives…" after a
chain of probes reports nothing)."""


def _echoes_on_failure(raw: Any) -> bool:
    """Whether a Bash call (its input a ``command``) ends a step with ``|| echo "…"``: a cheap
    test on every working call, so only the command string itself is looked at."""
    command = raw.get("command") if isinstance(raw, dict) else None
    return isinstance(command, str) and "|| echo" in command


_COUNTERPARTS = {
    "taskkill": frozenset({"stop-process", "kill"}),
    "tasklist": frozenset({"get-process", "ps"}),
    "findstr": frozenset({"select-string", "sls"}),
    "del": frozenset({"remove-item", "rm", "ri"}),
    "rmdir": frozenset({"remove-item", "rm", "ri"}),
    "copy": frozenset({"copy-item", "cp"}),
    "xcopy": frozenset({"copy-item", "cp"}),
    "move": frozenset({"move-item", "mv"}),
}
"""cmd's programs and the PowerShell cmdlets (and their aliases) that do their job: when Git
Bash turned ``taskkill /F`` into ``taskkill F:/``, ``powershell "Stop-Process -Name node
-Force"`` did the work, and is the cure."""


_AGENT_TOOLS = {
    "curl": frozenset({"WebFetch", "web_fetch", "fetch"}),
    "wget": frozenset({"WebFetch", "web_fetch", "fetch"}),
}
"""The agent's own tools that do a missing program's job: ``curl: command not found``, then
WebFetch of the same URL."""
_URL = re.compile(r"https?://[^\s'\"`)]+")


def _tool_stands_in(missing: str, tool: str, call: str, failed: str) -> bool:
    """Whether an agent tool's call (``tool``) did the missing program's job on the same
    target: a URL of the failed call's host."""
    if tool not in _AGENT_TOOLS.get(missing, frozenset()):
        return False
    hosts = {url.split("/")[2].lower() for url in _URL.findall(failed)}
    return any(url.split("/")[2].lower() in hosts for url in _URL.findall(call))


def _counterpart(failed: str, named: set[str]) -> bool:
    """Whether a call naming ``named`` runs the PowerShell counterpart of the cmd program
    ``failed``."""
    doing = _COUNTERPARTS.get(failed.lower().removesuffix(".exe"), frozenset())
    return any(word.strip("\"'(").lower() in doing for word in named)


def _again_without_cd(call: str, failed: str) -> bool:
    """Whether ``call`` is the failed call run again, only without a leading ``cd`` it no
    longer needs (the shell kept the directory): a retry, not another call that worked."""
    return normal(_unhidden(call)) == normal(_unhidden(CD_PREFIX.sub("", failed)))


def _paired(remedies: list[str]) -> str:
    """The working call before the cure when it is the same command on another key (``git
    config --global user.name …`` before ``git config --global user.email …``): one cure in two
    calls, both named (``""`` otherwise)."""
    if len(remedies) < 2 or remedies[-2] == remedies[-1]:
        return ""
    head = _head(remedies[-1])
    return remedies[-2] if len(head.split()) == HEAD_WORDS and _head(remedies[-2]) == head else ""


def _retried(call: str, failure: _Failure) -> bool:
    """Whether ``call`` (unclipped) runs the failed call's last step again, as it was; a bare
    program (``bash`` with its script on stdin) is no call that can be told again."""
    step = _last_step(failure.whole or failure.call)
    return len(step.split()) > 1 and _last_step(call) == step


ADVICE_CHARS = 1500
"""How much of a failed call's output is kept to recognise the command it advised."""
MIN_ADVICE_WORDS = 3
"""A command of fewer words (``git status``) is too common to have been taken from the advice."""


_ADVISED_LOOK = frozenset(
    {"logs", "log", "status", "show", "list", "info", "describe", "inspect", "help", "--help"}
)
"""Words of a command that only looks: advice to read the logs (``check logs with 'x daemon
logs'``) tells where the cause is, it does not cure the failure."""


def _advised(call: str, output: str) -> bool:
    """Whether ``call``'s first step is a command the failed call's output spelled out: the
    program's own advice, followed (``git config --global --add safe.directory /root/x``)."""
    if not output:
        return False
    step = normal(CD_PREFIX.sub("", call).split("&&", 1)[0])
    words = step.split()
    return len(words) >= MIN_ADVICE_WORDS and _ADVISED_LOOK.isdisjoint(words) and step in output


def _unknown_word(failure: _Failure) -> str:
    """The subcommand the failed call's program said it does not have (``""`` when none)."""
    absent = missing_subcommand(program(failure.call), failure.error)
    return absent[0].lower() if absent else ""


def fixed(
    failure: _Failure, tool: str, call: str, index: int, line_no: int, timestamp: str | None
) -> Sequence:
    """The sequence that closes ``failure``: ``call`` (of ``tool``) is the retry that worked."""
    return Sequence(
        tool,
        failure.call,
        failure.error,
        call,
        failure.reason,
        index,
        line_no,
        timestamp,
        also=failure.also,
        signature=failure.signature,
        escalated=call.endswith(ESCALATED)
        and not failure.call.endswith(ESCALATED)
        and (
            any(normal(f"{alike}{ESCALATED}") == normal(call) for alike in failure.again)
            or _SANDBOXED.search(failure.error) is not None
        ),  # the refusal was the sandbox's when escalation alone got the call past it
    )


@dataclass
class SequenceMiner:
    """Feed it every message of one transcript, in order; it yields the sequences it closes."""

    window: int = RETRY_WINDOW
    pending_calls: deque[tuple[str, Any, str | None]] = field(
        default_factory=lambda: deque(maxlen=16)
    )
    closed: deque[Sequence] = field(default_factory=deque)
    open_failures: list[_Failure] = field(default_factory=list)
    seen_signatures: set[str] = field(default_factory=set)
    repeated: int = 0
    unresolved: list[_Failure] = field(default_factory=list)
    unresolved_limit: int = 20
    missing_files: list[_Missing] = field(default_factory=list)
    edits: int = 0
    """Calls of an editing tool so far (a diagnosis the agent acted on, :mod:`._diagnosis`)."""
    absent: dict[str, Sequence] = field(default_factory=dict)
    """Files looked for, then searched for by name in vain: lessons at the transcript's end,
    unless the session finds or writes the file after all (lower-cased name → lesson)."""
    calls: int = 0
    """Tool calls seen (a session without any is a chat: its prose has no witness)."""
    refused: tuple[str, str, str, str, int, int] | None = None
    """The last call of a command tool refused with no exit status (tool, call, unclipped
    call, error, index, edits made before it): if the next call of that tool runs it again and
    works with no file edited in between, a hook or a gate refused it, not the command."""
    dropped: set[str] = field(default_factory=set)
    """Signatures of failures given up without a lesson (the same failure again reopens one)."""
    given_up: deque[tuple[str, str]] = field(default_factory=lambda: deque(maxlen=16))
    """The last failures given up without a lesson (call, error): what a kept failure left
    behind may be one of them (:mod:`._samecause`)."""
    failed_log: deque[tuple[str, str]] = field(default_factory=lambda: deque(maxlen=64))
    """The session's last failed calls, in order (call, error): what a check of the state a
    killed call was to change said after it (:mod:`._samecause`)."""
    witness: FailureWitness = field(default_factory=FailureWitness)
    """Every failed call so far (what the agent's prose may diagnose, :mod:`._witness`)."""
    probes: ProbeWatcher = field(default_factory=ProbeWatcher)
    """Failed probes of missing paths and how the session resolved them: observations kept
    apart from the lessons (:mod:`._probes`), never sequences."""
    formatting: FormatterWatch = field(default_factory=FormatterWatch)
    """Formatter checks that failed, until the formatter runs and the check passes."""
    rewrites: RewriteWatch = field(default_factory=RewriteWatch)
    """What changed files behind the agent's back (the cause of a stale-read refusal)."""
    prompts: PromptWatch = field(default_factory=PromptWatch)
    """Claude Code's background tasks, the one stopped, and its rerun with an answer."""
    listed: dict[str, str] = field(default_factory=dict)
    """Names a listing of a folder printed while failures waited (``ls ~/.npm-global/bin/`` →
    ``claude``), by lower-cased name → the folder: where a stand-in for a missing program was
    found."""
    cures: deque[Sequence] = field(default_factory=lambda: deque(maxlen=64))
    """The last sequences drained whose lesson says a call "worked instead": a later rerun of
    the failed command that fails the same way refutes them (:meth:`_refuted`)."""
    running: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """Processes a command left running (Codex's unified exec: "Process running with session
    ID 58022"), by session id → the call that started them: a ``write_stdin`` poll's output,
    and the exit status it ends with, are that command's."""

    def feed(self, message: Message) -> Iterator[Sequence]:
        """Feed one built message (any kind); yields the sequences it closes."""
        if message.kind is MessageKind.TOOL_USE:
            self.call(message.tool_name, message.text)
        elif message.kind is MessageKind.TOOL_RESULT:
            self.result(
                message.text, message.is_error, message.index, message.line_no, message.timestamp
            )
        elif message.kind is MessageKind.TEXT:
            self.text(message)
        yield from self.drain()

    def drain(self) -> Iterator[Sequence]:
        """The sequences closed since the last drain."""
        while self.closed:
            sequence = self.closed.popleft()
            if sequence.signature and sequence.claims_cure:
                self.cures.append(sequence)
            yield sequence

    def _refuted(self, signature: str, call: str) -> bool:
        """Whether ``call``, failing again with the signature of a failure a call "worked instead"
        of, runs the failed command again (the same command, normalised, or the same program and
        subcommand): then that call was no cure (``mkdir -p ~/.npm-global && npm config set
        prefix ~/.npm-global`` "worked", and the same ``npm install -g …`` failed again with
        EACCES). The cure is marked refuted (its lesson dropped) and the failure waits anew for
        a real cure, or is a lesson on its own if its error states a fact. A substitute that did
        the failed call's work itself (it names the same target) is not refuted by it."""
        again = normal(_unhidden(call))
        for sequence in [*self.cures, *self.closed]:
            if (
                sequence.signature == signature
                and sequence.claims_cure
                and not sequence.refuted
                and (
                    normal(_unhidden(sequence.failed_call)) == again
                    or _subcommand(sequence.failed_call) == _subcommand(call)
                )
                and not missing_program(
                    program(sequence.failed_call), sequence.error, sequence.failed_call
                )  # a stand-in for a missing program replaces it: the program stays missing
                and not operands(sequence.failed_call)[0] & operands(sequence.fixed_call)[0]
            ):  # a call on the failed one's target (``npx vite build`` for ``npm run build``)
                # did its work in its place; one on none of it was to fix the failed command
                sequence.refuted = True
                return True
        return False

    # ToolSink: the readers hand skipped tool traffic straight here, no Message built
    def call(self, name: str | None, value: Any, call_id: str | None = None) -> None:
        self.calls += 1
        if name in _EDITING:
            self.edits += 1
        elif name in _COMMAND_TOOLS:
            self.rewrites.called(value)
        self.pending_calls.append((name or "tool", value, call_id))

    def result(
        self,
        text: str,
        is_error: bool,
        index: int,
        line_no: int,
        timestamp: str | None,
        call_id: str | None = None,
    ) -> None:
        pending = self.pending_calls
        if pending and (call_id is None or pending[0][2] == call_id):
            tool, raw, _ = pending.popleft()  # the common case: answered in order
        else:
            tool, raw = self._answered(call_id)
        if tool == "write_stdin" and self.running:
            tool, raw = self.running.get(_polled(raw), (tool, raw))
        if self.prompts.background or self.prompts.stopped or text.startswith(BACKGROUND):
            self._prompted(tool, raw, text, index, line_no, timestamp)
        still = text.find(_RUNNING, 0, 400)
        if still >= 0:  # neither failed nor worked yet: its poll will say which
            if tool != "write_stdin":
                session = _RUNNING_ID.match(text, still + len(_RUNNING))
                if session is not None:
                    self.running[session.group(1)] = (tool, raw)
            return
        reported = is_error
        if not is_error and (
            _echoes_on_failure(raw)
            or text.startswith("Microsoft Windows [Version")
            or text.find("not found", 0, 2000) >= 0
            or text.find("resolve host", 0, 2000) >= 0
            or text.startswith("fatal: ")
        ):  # substring tests, no copy: this runs on every result
            is_error = self._silently_failed(raw, text)
        if (
            not is_error
            and not self.open_failures
            and not self.missing_files
            and not self.absent
            and self.refused is None
            and not self.probes.waiting
            and not self.formatting.waiting
        ):
            return  # the common case: a call that worked, nothing waiting for a retry
        call, whole = call_texts(raw)  # may cost a JSON parse: only when something waits
        if tool.startswith(MCP_PREFIX):
            call = mcp_call(tool, call)
        excerpt = error_excerpt(text[:2000]) if is_error else ""  # read once, used below
        if self.refused is not None and self.refused[0] == tool:
            self._reran(call, whole, excerpt, index, line_no, timestamp)
        if (
            reported  # a pipeline that failed silently ran: no hook or gate refused it
            and tool in _COMMAND_TOOLS
            and exit_status(text) is None
        ):
            error = excerpt if is_error else error_excerpt(text[:2000])
            if (
                error
                and not _PROTOCOL.search(text[:600])
                and not _NOT_RUN.search(error)
                and not _ARGUMENTS.search(error)
                and not _CODE_ERROR.search(error)
                and not (
                    missing_program(program(call), error, call) and "(os error 2)" not in error
                )
            ):  # a compiler's or the program's own error, or a program the shell says is
                # missing, is the command's: no hook or gate stood outside it, whatever ran
                # next (a bare "os error 2" is also a file a patch could not read: not told)
                self.refused = (tool, call, whole or call, error, index, self.edits)
        if is_error:
            self.probes.failed(tool, whole or call, text, line_no, timestamp)
        elif self.probes.waiting:
            self.probes.worked(tool, call, whole, text)
        if self.open_failures:
            self.rewrites.explain(text, self.open_failures)
        if is_error and self.formatting.failed(tool, call, whole or call, text):
            return  # kept only once the formatter runs and the check passes (:mod:`._formatting`)
        if is_error:
            self.witness.saw(text, whole, program(call))
            self.failed_log.append((whole or call, excerpt))
            if self.open_failures:
                self._stood_in(tool, call, text)
                self._got_past(tool, call, text, index, line_no, timestamp)
            if not self._failed(tool, call, raw, text, index, whole) and says_missing(text[:600]):
                self._looked_for(tool, call, text, index)
            elif self.missing_files:
                self._searched(tool, call, text, index, line_no, timestamp)
            return
        if self.absent:
            for path in file_paths(tool, call):
                self.absent.pop(base_name(path).lower(), None)
        if self.missing_files:
            self._searched(tool, call, text, index, line_no, timestamp)
            self._found_elsewhere(tool, call, index, line_no, timestamp)
        if self.open_failures:
            self._listing(call, text)
            self._succeeded(tool, call, index, line_no, timestamp, whole)
        reformatted = (
            self.formatting.worked(tool, call, whole or call) if self.formatting.waiting else None
        )
        if reformatted is not None:
            self.closed.append(
                Sequence(
                    tool,
                    reformatted.check,
                    reformatted.error,
                    reformatted.formatter,
                    "",
                    index,
                    line_no,
                    timestamp,
                    retried=True,
                )
            )

    def _prompted(
        self, tool: str, raw: Any, text: str, index: int, line_no: int, timestamp: str | None
    ) -> None:
        """Follow Claude Code's background tasks: one the agent stopped and then ran again with
        the answer to its prompt given up front is a lesson (:mod:`._prompts`)."""
        if tool in _COMMAND_TOOLS and text.startswith(BACKGROUND):
            self.prompts.started(tool, raw, text)
        elif tool in READERS:
            self.prompts.shown(tool, raw, text)
        elif tool in STOPPERS:
            self.prompts.stop(raw, self.calls)
        elif tool in _COMMAND_TOOLS and self.prompts.stopped is not None:
            call, _ = call_texts(raw)
            answered = self.prompts.rerun(tool, call, self.calls)
            if answered is None:
                return
            key = f"prompt\0{normal(answered.waited)}"
            if key in self.seen_signatures:
                return
            self.seen_signatures.add(key)
            asked = f"it asked: {answered.prompt}" if answered.prompt else "no answer came"
            self.closed.append(
                Sequence(
                    tool,
                    answered.waited,
                    asked,
                    answered.answered,
                    "",
                    index,
                    line_no,
                    timestamp,
                    prompted=True,
                )
            )

    def _reran(
        self,
        call: str,
        whole: str,
        now: str,
        index: int,
        line_no: int,
        timestamp: str | None,
    ) -> None:
        """The call after a refusal with no exit status, of the same tool: when it runs the
        refused call again and gets past the refusal (it works, or fails for a reason of its
        own: ``now``, its error), the refusal is the lesson (a hook that refuses a session's
        first command until the agent says what it does)."""
        assert self.refused is not None
        tool, failed, failed_whole, error, at, edits = self.refused
        self.refused = None
        if (
            now == error
            or self.edits != edits  # a file edited in between (the page the error names, the
            # file the pathspec missed): that edit may be the cure, nothing outside the command
            or not _reruns(whole or call, failed_whole)
            or (
                _cd_changed(whole or call, failed_whole, error)
                and not moved_workdir(failed_whole, whole or call, error)
            )
            or call.endswith(ESCALATED) != failed.endswith(ESCALATED)  # escalated: the sandbox
        ):
            return
        key = f"rerun\0{tool}\0{_DIGITS.sub('#', _PATHS.sub('<path>', error.lower()))}"
        if key in self.seen_signatures:
            return
        self.seen_signatures.add(key)
        self.open_failures = [f for f in self.open_failures if f.index != at]
        moved = moved_workdir(failed_whole, whole or call, error)  # not unchanged: elsewhere
        self.closed.append(
            Sequence(
                tool,
                failed,
                error,
                call,
                "",
                index,
                line_no,
                timestamp,
                rerun=not moved,
                workdir=moved,
            )
        )

    def _answered(self, call_id: str | None) -> tuple[str, Any]:
        """The call a result answers: the one its id names (parallel calls answer out of order,
        and pairing by order gives one call another's error), else the oldest waiting."""
        pending = self.pending_calls
        if call_id is not None:
            for position, (tool, raw, waiting) in enumerate(pending):
                if waiting == call_id:
                    del pending[position]
                    return tool, raw
        if not pending:
            return "tool", ""
        tool, raw, _ = pending.popleft()
        return tool, raw

    def text(self, message: Message) -> None:
        """An assistant's text: Claude Code's own API errors, and the reason after a failure."""
        if message.role != "assistant":
            return
        if _API_HICCUP.match(message.text):
            return
        if _API_ERROR.match(message.text):
            error = error_excerpt(message.text)
            if f"api\0{error}" not in self.seen_signatures:
                self.seen_signatures.add(f"api\0{error}")
                self.closed.append(
                    Sequence(
                        "api", "", error, "", "", message.index, message.line_no, message.timestamp
                    )
                )
        elif self.open_failures:
            reason = reason_of(message.text)
            for failure in self.open_failures:
                if not failure.reason and reason:
                    failure.reason = reason

    def _looked_for(self, tool: str, call: str, output: str, index: int) -> None:
        """Remember the files a failed look did not find, in case the agent finds them under
        another root (see :mod:`swarmq.forge._layout`)."""
        error = error_excerpt(output)
        for path in file_paths(tool, call):
            self.missing_files.append(_Missing(tool, call, error, path, index))
        del self.missing_files[:-8]

    def _searched(
        self, tool: str, call: str, output: str, index: int, line_no: int, timestamp: str | None
    ) -> None:
        """A search by name that found nothing, for a file a failed look did not find: the file
        is not in the project (``_bmad/core/tasks/bmad-help.md``, which a workflow asks for),
        and the next session would look for it again."""
        names = searched_names(tool, call)
        if not names or not nothing_found(output):
            return
        for missing in self.missing_files:  # still waiting: found elsewhere, it is moved
            name = base_name(missing.path)
            key = f"absent\0{name.lower()}"
            if name.lower() not in names:
                continue
            if key in self.seen_signatures:
                continue
            self.seen_signatures.add(key)
            self.probes.settle(missing.path)
            self.absent[name.lower()] = Sequence(
                missing.tool,
                missing.call,
                missing.error,
                "",
                "",
                index,
                line_no,
                timestamp,
                layout=f"`{name}` does not exist in this project: `{call}` found nothing",
            )

    def _found_elsewhere(
        self, tool: str, call: str, index: int, line_no: int, timestamp: str | None
    ) -> None:
        found = file_paths(tool, call)
        waiting = []
        for missing in self.missing_files:
            moved = next((m for m in (relocation(missing.path, path) for path in found) if m), None)
            if moved is None:
                missing.waited += 1
                if missing.waited < RELOCATION_WINDOW:
                    waiting.append(missing)
                continue
            key = f"layout\0{moved.wrong.lower()}\0{moved.right.lower()}"
            self.probes.settle(missing.path)
            if key not in self.seen_signatures:
                self.seen_signatures.add(key)
                self.closed.append(
                    Sequence(
                        missing.tool,
                        missing.call,
                        missing.error,
                        call,
                        "",
                        index,
                        line_no,
                        timestamp,
                        layout=moved.fact(),
                    )
                )
        self.missing_files = waiting

    def _failed(
        self, tool: str, call: str, raw: Any, output: str, index: int, whole: str = ""
    ) -> bool:
        """Open a failure waiting for its retry; ``False`` when the failure is no lesson (a look
        that found nothing, a test run that failed, a failure seen before)."""
        if tool in _EDITING and call and stale_read(output[:300]):  # one refusal whatever
            return self._open(tool, call, error_excerpt(output), index, whole, "stale read")  # file
        wanted = not_granted(output[:600]) if output.find("granted", 0, 600) >= 0 else ""
        if wanted and call:  # any tool, a lookup too: one refusal that every retry meets
            return self._open(tool, call, error_excerpt(output), index, whole, "not granted")
        if (
            (
                tool in _SKIPPED_TOOLS
                and not self._search_refused(tool, output)
                and not TOO_LARGE.search(output[:300])
            )
            or not call
            or _PROTOCOL.search(output[:600])
        ):
            return False
        bare = CD_PREFIX.sub("", call)
        windows = windows_fact(call, output[:1500])
        if windows:
            return self._open(tool, call, error_excerpt(output), index, whole, f"{tool}\0{windows}")
        if store_alias(program(call), output):
            return self._open(tool, call, STORE_ALIAS_EXIT, index, whole, f"{tool}\0store alias")
        if _CANNOT_START.search(output, 0, 3000) or (
            output.find("bwrap: ", 0, 3000) >= 0  # inside Codex's report of a sandboxed call
            and error_excerpt(output).startswith("bwrap: ")
        ):  # before a probe's answer: it never ran
            error = error_excerpt(output)
            runs = "bwrap" if error.startswith("bwrap:") else family(program(call))
            return self._open(tool, call, error, index, whole, f"{tool}\0cannot start\0{runs}")
        if (
            (program(call) in _PROBES or _PROBE_CALL.search(bare))
            and not _CAT_WRITES.match(bare)
            and not _SHELL_SYNTAX.search(output[:600])
            and not _PROBE_REFUSED.search(output[:600])
            and not self._stage_missing(call, as_text(raw), output)
            and not self._probed_missing(call, output)
        ) or (
            (_CODE_ERROR.search(output[:1500]) or _tests_failed_last(whole or call, output))
            and not _DEPENDENCY.search(output[:3000])
        ):
            return False  # a probe's failure is its answer, unless the shell could not parse it or
            # a program later in its pipeline is missing (``tail log | jq``)
        runs = program(call)
        last = program(_LAST_STAGE.split(call)[-1]) if "|" in call else runs
        error = error_excerpt(output)
        if (
            (
                runs in _SEARCHES
                or call.startswith("git grep")
                or (last in _SEARCHES and self._quiet(output, error))
            )
            and exit_status(output if output.startswith("Command: ") else output[:400]) == 1
            and not _MISSING_PROGRAM.search(output[:1500])
            and not unexpanded_wildcard(runs, error)
        ):
            return False  # a search that matched nothing answered the question it asked (a
            # pipeline's status is its last stage's: ``strings bin | rg x``)
        test_run = _test_run(whole or call)
        if test_run:
            none = _NO_TESTS.search(output, 0, 3000)
            if none:  # nothing collected: where the tests are or how they are found is wrong
                return self._open(tool, call, none.group(0), index, whole, f"{tool}\0no tests")
        if (
            not error
            or not ERROR_LINE.search(error)
            or (WARNING_LINE.match(error) and not _ENVIRONMENT.search(error))
        ):
            return self._unworded(tool, call, error, index, whole, runs, output)
        if (
            test_run
            and not _ENVIRONMENT.search(error)
            and not _MISSING_PROGRAM.search(output[:1500])
            and not _RUNNER_MISSING.search(output[:1500])
            and not _DEPENDENCY.search(output[:3000])
        ):
            return False  # the tests failed: the code was wrong, and its fix is in the code
        if unexpanded_wildcard(runs, error):  # one fact of the shell, whatever the path
            return self._open(tool, call, error, index, whole, f"{tool}\0{runs}\0unexpanded")
        second = pattern_as_path(runs, error, call)
        if second:  # the same misuse with other patterns is the same lesson
            return self._open(tool, call, error, index, whole, f"{tool}\0{runs}\0pattern as path")
        if self._missing_operand(call, error):
            return False  # the file asked for is not there: the answer of a probe, whatever program
        if _ARGUMENTS.search(error):
            call = clip(
                " ".join(as_text(raw).split()).replace("`", "'"), 160
            )  # the malformed call itself
        signature = f"{tool}\0{_runner(call, runs)}\0{_DIGITS.sub('#', _PATHS.sub('<path>', error.lower()))}"
        needs = _DEPENDENCY.search(output, 0, 3000) is not None
        if needs:  # one library after another missing is one want: the first one's cure
            signature = f"{tool}\0{_runner(call, runs)}\0needs"  # is what ends the last
        opened = self._open(tool, call, error, index, whole, signature, _usage(runs, output[:3000]))
        if opened and _runner(call, runs) == "<file>" and _SCRIPT_REFUSAL.match(error):
            self.open_failures[-1].expects = _expectation(output[:3000], error)
        if opened:
            self.open_failures[-1].output = normal(output[:ADVICE_CHARS])
            self.open_failures[-1].needs = needs
        return opened

    def _unworded(
        self, tool: str, call: str, error: str, index: int, whole: str, runs: str, output: str
    ) -> bool:
        """A command that exited non-zero and said something, though in no words of a failure
        forge knows (``GraphQL: … does not have the correct permissions``, ``(Redirection
        NotSupported)``, ``No module named pytest``): whether it failed is not known from its
        words, but a later call of the same program, with its arguments changed, that works
        shows that it did and how it is called instead. Opened for that call alone; a bare
        status, a warning or a test run stays an answer."""
        if (
            not error
            or (len(error.split()) == 1 and _PATH_IN_OUTPUT.search(error) is not None)
            or error in (whole or call)  # a line the command echoes itself: its own output
            or tool not in _COMMAND_TOOLS
            or not runs
            or runs in _PROBES
            or WARNING_LINE.match(error)
            or _test_run(whole or call)
            or exit_status(output if output.startswith("Command: ") else output[:400]) in (None, 0)
        ):
            return False
        signature = f"{tool}\0{_runner(call, runs)}\0unworded\0{_DIGITS.sub('#', _PATHS.sub('<path>', error.lower()))}"
        if not self._open(tool, call, error, index, whole, signature):
            return False
        self.open_failures[-1].unworded = True
        return True

    def _open(
        self,
        tool: str,
        call: str,
        error: str,
        index: int,
        whole: str,
        signature: str,
        usage: str = "",
    ) -> bool:
        """Open a failure unless its signature was seen (the same failure again counts once).
        The same failure again while it waits for its cure resets its wait and forgets the
        calls tried since (they did not cure it); again after it was given up without a lesson,
        it waits anew: the agent is still at it, and what finally lets the same call work is
        the cure (files moved out of a merge's way)."""
        if signature in self.seen_signatures:
            self.repeated += 1
            waiting = next((f for f in self.open_failures if f.signature == signature), None)
            if waiting is not None:
                waiting.waited, waiting.remedies, waiting.edited = 0, [], ""
                waiting.again = [*waiting.again, call][-REMEDIES_KEPT:]
                waiting.at_call, waiting.advised = self.calls, None  # met again here: advice
                # followed next counts from here, advice followed before did not cure it
                return False
            if signature not in self.dropped and not self._refuted(signature, whole or call):
                return False
            self.dropped.discard(signature)
            self.repeated -= 1
        self.seen_signatures.add(signature)
        self.open_failures.append(
            _Failure(
                tool,
                call,
                error,
                index,
                whole=whole or call,
                usage=usage,
                at_call=self.calls,
                signature=signature,
            )
        )
        for expired in self.open_failures[:-8]:
            self._give_up(expired)
        del self.open_failures[:-8]
        return True

    def _succeeded(
        self,
        tool: str,
        call: str,
        index: int,
        line_no: int,
        timestamp: str | None,
        whole: str = "",
    ) -> None:
        """Close the open failures ``call`` cures (``whole``: the call unclipped, so the
        programs a long chain runs last are named: ``mkdir -p … && cp … && git commit``)."""
        test_run = _test_run(whole or call) is not None
        louder = any(
            asks_more(_unhidden(whole or call), _unhidden(f.whole or f.call))
            for f in self.open_failures
        )  # a failed call again, asked to say more: a look for every failure (:mod:`._louder`)
        still_open = []
        closing = len(self.closed)
        for failure in self.open_failures:
            if tool in _EDITING and failure.tool in _COMMAND_TOOLS:
                written = edited_named(whole or call, failure.whole or failure.call)
                if written:  # the file the command ran or read, edited: a cure if it then works
                    failure.edited = f"{tool} {written}"
            if failure.unworded:
                if self._shortened(failure, whole or call):
                    self._settle_or_edited(failure, tool, call, index, line_no, timestamp)
                    continue
                if self._changed_call(failure, tool, call, louder):
                    self.closed.append(fixed(failure, tool, call, index, line_no, timestamp))
                    continue
                failure.waited += 1
                if failure.waited < self.window:
                    still_open.append(failure)
                else:
                    self._give_up(failure)
                continue
            if (
                failure.tool in _EDITING
                and tool == failure.tool
                and call
                and normal(call) == normal(failure.call)
                and not stale_read(failure.error)
                and not _EDIT_MISMATCH.search(failure.error)
                and not _WHERE_WRITTEN.search(failure.error)
            ):  # the same file edited again, with other content, and it took: what the
                # refused edit wrote was the cause (a field the settings schema lacks)
                cure = fixed(failure, tool, call, index, line_no, timestamp)
                cure.rewritten = True
                self.closed.append(cure)
                continue
            server = mcp_server(tool)
            if (
                server
                and server == mcp_server(failure.tool)
                and failure.tool != tool
                and not _MCP_LOOK.search(tool)
            ):  # another tool of the same MCP server after its tool failed (browser_install
                # after browser_navigate's missing browser): the cure, unless it only looks
                self.closed.append(fixed(failure, tool, call, index, line_no, timestamp))
                continue
            if failure.tool != tool and failure.tool not in _DELEGATING:
                if failure.tool in _COMMAND_TOOLS and _writes_settings(tool, call):
                    failure.remedies = [*failure.remedies, f"{tool} {call}"][-REMEDIES_KEPT:]
                    # a settings file written before the failed call works unchanged: its cure
                if (
                    failure.tool in _EDITING
                    and any(
                        writes_same_file(edited, whole or call)
                        for edited in (failure.call, *failure.again)
                    )
                ) or (
                    failure.tool in _SEARCH_TOOLS and program(call) in _SEARCHES | {"find", "ls"}
                ):
                    self.closed.append(fixed(failure, tool, call, index, line_no, timestamp))
                elif failure.tool in _COMMAND_TOOLS and _tool_stands_in(
                    missing_program(program(failure.call), failure.error, failure.call),
                    tool,
                    whole or call,
                    failure.whole or failure.call,
                ):  # the agent's own tool did the missing program's job: say which tool
                    self.closed.append(
                        fixed(failure, tool, f"{tool} {call}", index, line_no, timestamp)
                    )
                else:
                    still_open.append(failure)
                continue
            if (
                failure.advised is None
                and self.calls - failure.at_call <= 1  # the next step: the advice followed
                and _advised(call, failure.output)
            ):
                failure.advised = (call, index, line_no, timestamp)  # the cure, unless the
                failure.remedies = [*failure.remedies, call][-REMEDIES_KEPT:]  # failed call
                still_open.append(failure)  # then works as it was (said so, below)
                continue
            named = _named(whole or call)
            missing = missing_program(
                program(failure.call), failure.error, failure.call
            ) or not_started(program(failure.call), failure.error)
            related = (
                failure.tool in _DELEGATING
                or program(call) == program(failure.call)
                or program(failure.call) in named
                or (failure.waited == 0 and _ARGUMENTS.search(failure.error) is not None)
                or _narrowed(call, failure, self.calls)
                or _counterpart(program(failure.call), named)
                or (
                    bool(missing)
                    and (
                        _stands_in(missing, program(call), named)
                        or (
                            bool(operands(failure.call)[0])
                            and self._same_target(failure.whole or failure.call, whole or call)
                        )
                    )
                )
            )
            if self._shortened(
                failure, whole or call
            ):  # the agent settled for less: no cure, and no lesson (:mod:`._leftout`), unless
                # it edited the file the command names in between
                self._settle_or_edited(failure, tool, call, index, line_no, timestamp)
                continue
            renamed = _renamed_past_busy(failure, whole or call)
            if renamed:  # the busy target left behind, the work done under a new name
                cure = fixed(failure, tool, call, index, line_no, timestamp)
                cure.also = f"{cure.also}; {renamed}" if cure.also else renamed
                self.closed.append(cure)
                continue
            found_at = self._found_by_listing(missing, program(call)) if missing else ""
            if found_at and not louder:  # the stand-in, found by a listing, answered
                cure = fixed(failure, tool, call, index, line_no, timestamp)
                place = f"`{program(call)}` is `{found_at}`"
                cure.also = f"{cure.also}; {place}" if cure.also else place
                self.closed.append(cure)
                continue
            if (
                call
                and related
                and not louder
                and normal(_unhidden(call)) != normal(_unhidden(failure.call))
                and (
                    call.endswith(ESCALATED)
                    or _ARGUMENTS.search(failure.error) is not None
                    or not _again_without_cd(whole or call, failure.whole or failure.call)
                )
                and not self._only_looks(call, failure)
                and not (
                    failure.signature.endswith("\0no tests") and test_run
                )  # a narrower run that finds its tests leaves the root's discovery as it was
                and (
                    failure.tool in _DELEGATING
                    or (
                        program(call) != program(failure.call)
                        and (
                            bool(missing)
                            or not _runs_otherwise(whole or call, failure.whole or failure.call)
                        )
                    )
                    or self._same_target(failure.call, call, _unknown_word(failure))
                )
            ):
                if not missing and self._failed_since(failure, tool, call):
                    self._give_up(failure)  # the call switched to failed itself since: the
                    continue  # switch was no cure (what was done before it worked was)
                advice = failure.advised or (call, index, line_no, timestamp)  # came first
                self.closed.append(fixed(failure, tool, *advice))
                continue
            install = _installed(call, failure) if failure.remedies else ""
            if install:
                cure = fixed(failure, tool, install, index, line_no, timestamp)
                cure.installed = True
                self.closed.append(cure)
                continue
            if failure.remedies and _retried(whole or call, failure):
                cure = fixed(failure, tool, failure.remedies[-1], index, line_no, timestamp)
                cure.retried = True
                cure.before = _paired(failure.remedies)
                self.closed.append(cure)
                continue
            if (
                call
                and not louder
                and not self._only_looks(call, failure)
                and not _PROBE_CALL.search(CD_PREFIX.sub("", call))
                and (program(call).lower() not in _PROBES or acts_on_files(whole or call))
                and not same_family("cat", program(call))
                and not reads_only(whole or call)
                and not _retried(whole or call, failure)
                and not test_run
            ):  # a test run checks a fix, it is none
                failure.remedies = [*failure.remedies, call][-REMEDIES_KEPT:]
            if not (
                failure.signature.endswith("\0no tests") and test_run
            ):  # runs of single suites while the layout is fixed are checks, not other moves
                failure.waited += 1
            if failure.waited < self.window * (
                ENVIRONMENT_PATIENCE if _ENVIRONMENT.search(failure.error) else 1
            ):
                still_open.append(failure)
            else:
                self._give_up(failure)
        self.open_failures = still_open
        self._escalated_alike(call, closing)

    def _changed_call(self, failure: _Failure, tool: str, call: str, louder: bool) -> bool:
        """Whether ``call``, which worked, runs the failed call's program again on the same
        target with its arguments changed: the failure's cure, whatever its error said."""
        return (
            bool(call)
            and not louder
            and tool == failure.tool
            and program(call) == program(failure.call)
            and normal(_unhidden(call)) != normal(_unhidden(failure.call))
            and not _again_without_cd(call, failure.call)
            and normal(_unhidden(_LAST_STAGE.split(call)[0]))
            != normal(_unhidden(failure.call))  # the same command piped into a viewer
            and not self._only_looks(call, failure)
            and not _PROBE_CALL.search(CD_PREFIX.sub("", call))
            and self._same_target(failure.call, call)
        )

    def _settle_or_edited(
        self,
        failure: _Failure,
        tool: str,
        call: str,
        index: int,
        line_no: int,
        timestamp: str | None,
    ) -> None:
        """Close ``failure``, which the same call with words left out got past: by the edit of
        the file the failed command names when one came in between (the agent changed what the
        command ran, then ran it: the edit is the cure, the words left out are not), else with
        no lesson (:meth:`_settle`)."""
        if not failure.edited:
            self._settle(failure)
            return
        cure = fixed(failure, tool, failure.edited, index, line_no, timestamp)
        cure.retried, cure.then = True, call
        self.closed.append(cure)

    def _settle(self, failure: _Failure) -> None:
        """Close ``failure`` with no lesson: the same call, shortened, worked, so what failed was
        a part the agent left out, and the session shows no cure of it (a later failure alike
        opens anew)."""
        if failure.signature:
            self.dropped.add(failure.signature)
        self.given_up.append((failure.call, failure.error))

    @staticmethod
    def _shortened(failure: _Failure, call: str) -> bool:
        """Whether ``call`` only leaves words of the failed call out, words its error does not
        name, after no refusal of the machine: the agent did less, which cures nothing the error
        said (:mod:`._leftout`)."""
        return (
            bool(call)
            and program(call) == program(failure.call)
            and only_left_out(
                normal(_unhidden(failure.whole or failure.call)),
                normal(_unhidden(call)),
                failure.error,
            )
        )

    def _listing(self, call: str, output: str) -> None:
        """Remember the names a bare ``ls DIR`` printed, one a line (:attr:`listed`)."""
        words = CD_PREFIX.sub("", call).split()
        if len(words) != 2 or words[0] != "ls" or words[1].startswith("-"):
            return
        for line in output.splitlines()[:200]:
            name = line.strip()
            if name and " " not in name and "/" not in name:
                self.listed[name.lower()] = words[1].rstrip("/")
        while len(self.listed) > 400:
            del self.listed[next(iter(self.listed))]

    def _found_by_listing(self, missing: str, runs: str) -> str:
        """The path of ``runs`` when a listing printed it and it is the missing program's kin
        (``claude`` for ``claude-code``, one the first part of the other's name): the stand-in
        lives where the shell does not look (``""`` otherwise)."""
        runs, missing = runs.lower(), missing.lower()
        folder = self.listed.get(runs)
        if not folder or runs == missing:
            return ""
        kin = re.split(r"[-_]", missing, maxsplit=1)[0] == runs or (
            re.split(r"[-_]", runs, maxsplit=1)[0] == missing
        )
        return f"{folder}/{runs}" if kin else ""

    def _failed_since(self, failure: _Failure, tool: str, call: str) -> bool:
        """Whether ``call`` itself failed after ``failure`` and waits for its own cure (``vercel
        --yes`` failed, then ``vercel --prod`` failed for another reason, then a config change,
        then ``vercel --prod`` worked): the first failure was not cured by switching to it."""
        again = normal(_unhidden(call))
        return any(
            other is not failure
            and other.tool == tool
            and other.index > failure.index
            and normal(_unhidden(other.call)) == again
            for other in self.open_failures
        )

    def told(self, message: Message) -> None:
        """A user's message while failures wait: a missing program the user says is installed
        now is cured by the user (:mod:`._usercure`), outside every call of the transcript."""
        still_open = []
        for failure in self.open_failures:
            missing = missing_program(program(failure.call), failure.error, failure.call)
            said = installed_now(missing, message.text)
            if said:
                self.closed.append(
                    Sequence(
                        failure.tool,
                        failure.call,
                        failure.error,
                        "",
                        failure.reason,
                        message.index,
                        message.line_no,
                        message.timestamp,
                        also=failure.also,
                        told=said,
                    )
                )
            else:
                still_open.append(failure)
        self.open_failures = still_open

    def _escalated_alike(self, call: str, closing: int) -> None:
        """When one escalated call is the rerun of a failure the sandbox refused and also
        closes another failure of the same command that states no fact of its own as "worked
        instead" (``git checkout -b feat/x`` failed, then ``git checkout -b feat-x`` refused,
        then the latter escalated), both were the sandbox's refusals: each says so, and names
        the parameter."""
        if not call.endswith(ESCALATED) or len(self.closed) - closing < 2:
            return
        now = list(self.closed)[closing:]
        if not any(normal(f"{s.failed_call}{ESCALATED}") == normal(call) for s in now):
            return
        for sequence in now:
            if (
                sequence.fixed_call == call
                and not sequence.failed_call.endswith(ESCALATED)
                and _subcommand(sequence.failed_call) == _subcommand(call)
                and not (sequence.retried or sequence.installed or sequence.rerun)
                and not sequence.fact  # a fact of its own (a zsh pattern) is its lesson
            ):
                sequence.escalated = True

    def _got_past(
        self, tool: str, call: str, output: str, index: int, line_no: int, timestamp: str | None
    ) -> None:
        """Close a usage error or a refusal by a later call of the same program that got past
        it and failed for another reason: ``nix run ./tests#run . --jobs 4`` ("unrecognised flag
        '--jobs'") then ``nix run ./tests#run . -- --jobs 4``, which runs the tests; ``go test
        ./...`` ("open ~/.cache/go-build/…: permission denied") then ``GOCACHE=/tmp/go-build go
        test ./...``, which compiles. How to call the program is the lesson; what failed next
        is another matter."""
        runs = program(call)
        if not runs:
            return
        head = output[:3000]
        still_open = []
        for failure in self.open_failures:
            install = _installed(call, failure) if failure.remedies and failure.tool == tool else ""
            if install and not _DEPENDENCY.search(head):  # the install got it past the want
                cure = fixed(failure, tool, install, index, line_no, timestamp)
                cure.installed = True
                self.closed.append(cure)
                continue
            kind = next((k for k in (_USAGE, _REFUSED) if k.search(failure.error)), None)
            kind = None if failure.unworded else kind
            if (
                kind is not None
                and not kind.search(head)
                and not (kind is _USAGE and _REFUSED_CALL.search(head))
                and failure.tool == tool
                and program(failure.call) == runs
                and (
                    kind is _USAGE
                    or _subcommand(call) == _subcommand(failure.whole or failure.call)
                )
                and normal(_unhidden(call)) != normal(_unhidden(failure.call))
                and not self._only_looks(call, failure)
            ):
                self.closed.append(fixed(failure, tool, call, index, line_no, timestamp))
            else:
                still_open.append(failure)
        self.open_failures = still_open

    def _stood_in(self, tool: str, call: str, output: str) -> None:
        """Note a failed call that stood in for a missing program (``python3 -m pytest`` after
        ``pytest: command not found``) on that program's open failure: the stand-in's error is
        the rest of the lesson."""
        runs = program(call)
        if not runs:
            return
        named = _named(call)
        for failure in self.open_failures:
            if failure.also or failure.tool != tool:
                continue
            missing = missing_program(program(failure.call), failure.error, failure.call)
            if (
                missing
                and runs != missing
                and _stands_in(missing, runs, named)
                and normal(call) != normal(failure.call)
            ):
                error = error_excerpt(output)
                if error and not missing_program(runs, error, call):  # missing too: its own lesson
                    failure.also = f"`{clip(call, 120)}` failed too ({clip(error, 160)})"

    @staticmethod
    def _quiet(output: str, error: str) -> bool:
        """Whether a call printed no error of its own: nothing at all, or a sandbox's wrapper
        around an empty stderr (Codex reports any non-zero status of a sandboxed call as
        ``Denied { … exit_code: 1, … stderr: StreamOutput { text: "" …``). ``git ls-remote | rg
        x`` exiting 1 after "Could not resolve hostname" is not quiet: its first stage failed."""
        if sandbox_wrapped(output):
            return _EMPTY_STDERR.search(output) is not None
        return not error

    @staticmethod
    def _probed_missing(call: str, output: str) -> bool:
        """Whether the program a look runs is not there at all (``python --version``: "python:
        command not found"; ``ps aux | head`` in a slim container): the answer is a fact of the
        machine, and the program the agent then runs instead (``python3``) is its cure. A
        looking program (``ps``, ``which``, ``file``) missing is such a fact too."""
        runs = program(call)
        return missing_program(runs, error_excerpt(output[:600]), call) == runs

    @staticmethod
    def _stage_missing(call: str, whole: str, output: str) -> bool:
        """Whether the output says that a program the call runs after its first is missing
        (``whole``: the call unclipped, so a long pipeline's tail is there)."""
        if "not found" not in output[:2000]:
            return False
        missing = missing_program(program(call), error_excerpt(output[:2000]), whole)
        return bool(missing) and missing != program(call) and missing in whole.split()

    @staticmethod
    def _silently_failed(raw: Any, text: str) -> bool:
        """Whether a call reported as successful failed all the same: a pipeline's status is its
        last stage's, so ``tail log | jq`` "succeeds" when ``jq`` is missing, ``git ls-remote
        | grep`` when the host cannot be resolved and ``git count-objects 2>&1 | head`` when git
        refuses the repository (an output opening with ``fatal:``). Only these count: the output
        says nothing else then."""
        given = as_text(raw)
        if text.startswith("Microsoft Windows [Version") and _CMD_C.search(given):
            return True  # ``cmd /c x`` from Git Bash: ``/c`` became a path, cmd only started
        said = _ECHOED_FAILURE.search(given)
        verdict = (said.group(1) or said.group(2)) if said else ""
        if verdict and verdict in text and _FAILURE_WORD.search(verdict):
            return True  # ``git push 2>&1 || echo "Push failed"`` printed its own verdict
        call = summarise_call(raw)
        if text.startswith("fatal: "):  # ``git count-objects 2>&1 | head``: git refused
            return _LAST_STAGE.search(given) is not None
        error = error_excerpt(text[:2000])
        missing = missing_program(program(call), error, call)
        if missing:  # the whole call: a summary is clipped, and the pipeline's tail with it
            if missing in {word.rsplit("/", 1)[-1] for word in given.split()}:
                return True
            # The command itself, not its JSON, where its first program is a word of its own
            # (``{"command": "npx …`` hid it); with a fallback given (``opencode --version ||
            # true``) the call asked a question.
            _, whole = call_texts(raw)
            words = {word.strip("\"'();&|").rsplit("/", 1)[-1] for word in whole.split()}
            return "||" not in whole and missing in words
        return "could not resolve host" in error.lower()

    @staticmethod
    def _search_refused(tool: str, output: str) -> bool:
        """Whether a search tool of the agent (Claude Code's Grep or Glob) could not start the
        program it runs (``spawn …/rg EACCES``): not an empty answer but a fact about the
        machine, and a search run another way (``grep -rn``) is the way round."""
        return tool in _SEARCH_TOOLS and _SPAWN_REFUSED.search(output[:600]) is not None

    @staticmethod
    def _missing_operand(call: str, error: str) -> bool:
        """Whether ``error`` says that a file or directory the call named is not there (``sed -n
        1,200p a.py`` → ``sed: a.py: No such file or directory``): looking for it answered that
        it is missing; whatever the agent opens next is another file, not a cure. A missing
        *program* is not this: its name is the call's first word, not an operand."""
        if (_MISSING_PROGRAM.search(error) and "(os error 2)" not in error) or _SPAWN_FAILED.search(
            error
        ):
            return False  # ``uv run flake8``: "Failed to spawn: `flake8`" names the program run
        if not _MISSING_FILE.search(error) or _REFUSED.search(error):
            return False
        lowered = error.lower()
        every, _ = operands(call)
        cd = _CD_TARGET.match(call)
        if cd:  # the directory changed into is named too: ``cd x && make`` fails when x is missing
            every |= operands(f"cd {cd.group(1)}")[0]
        return any(
            len(word) > 2 and re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", lowered)
            for word in every
        )

    @staticmethod
    def _same_target(failed: str, call: str, unknown: str = "") -> bool:
        """Whether a later call of the same program works on what the failed one worked on,
        changed in how (an option, quoting, a path's form), so it may be the cure. A call on
        other files or with other words (``rg "A" x.py`` failed, ``rg "B" y.py`` worked) is the
        next step of the task, not a fix of the failure. ``unknown``: the word the program said
        it has no command for, which its cure replaces (``gt deacon pending`` → ``gt deacon
        trigger-pending``, ``bd tree X`` → ``bd list --parent=X``); the rest must still match."""
        every_failed, paths_failed = operands(failed)
        every_call, paths_call = operands(call)
        if paths_failed:
            before, after = folders(failed), folders(call)
            return any(
                before.get(name, "") == after.get(name, before.get(name, ""))
                for name in paths_failed & paths_call
            )  # a file of the same name in another folder is another file
        if unknown and every_failed - {unknown}:
            every_failed = every_failed - {unknown}
        if not every_failed:
            return True
        return len(every_failed & every_call) * 2 > len(every_failed)

    @staticmethod
    def _only_looks(call: str, failure: _Failure) -> bool:
        """Whether ``call`` only looks at things (``which pytest``, ``head bin/pytest``): no cure
        for a program that exists and failed, though ``ls``/``find`` may stand in for a missing
        ``rg``, and anything may do a failed sub-agent's work."""
        runs = program(call).lower()
        if runs in _LOOKUPS or (_ASKS_USAGE.search(call) is not None and reads_only(call)):
            return True
        missing = missing_program(program(failure.call), failure.error, failure.call)
        if (
            missing
            and not same_family(missing, runs)
            and missing.lower() in {word.strip("'\"").lower() for word in _named(call)}
            and reads_only(call)
        ):
            return True  # a call that only reads and names the missing program looks for it
            # (``apt list --installed | grep -i cmake``, ``ls /usr/local/bin/cmake``): no cure
        if _MISSING_PROGRAM.search(failure.error) is None and (
            _GIT_LOOK.match(CD_PREFIX.sub("", call)) is not None
            or (
                runs not in _PROBES
                and runs != "sed"
                and same_family("cat", runs)
                and not same_family(runs, program(failure.call))
            )
        ):
            return True  # asking git its state (``git diff``, ``git ls-files``) or printing a
            # file (``Get-Content`` of the script that refused) looks; it changes nothing
        if (
            runs == "sed"
            and _SED_PRINT.search(call) is not None
            and program(failure.call) != "sed"
            and not _ARGUMENTS.search(failure.error)
        ):
            return True  # reading another program's script is looking (a malformed call's
            # next well-formed one, whatever it runs, shows the format)
        return (
            runs in _PROBES
            and failure.tool not in _DELEGATING
            and _MISSING_PROGRAM.search(failure.error) is None
            and not not_started(program(failure.call), failure.error)  # a stand-in's work
            and not acts_on_files(call)
            and runs != program(failure.call).lower()  # a failed look, asked again rightly
            and not (
                _CAT_WRITES.match(CD_PREFIX.sub("", call))
                and _CAT_WRITES.match(CD_PREFIX.sub("", failure.call))
            )  # a heredoc written again (elsewhere, escalated) after a refused one: a write
        )

    def _give_up(self, failure: _Failure) -> None:
        """A failure nothing fixed is a lesson on its own when it says something about the
        machine, the shell's syntax or a rule of the agent's tools; one whose output advised a
        command that then worked was cured by that command."""
        if failure.unworded:
            return  # no cure seen: whether it failed at all is not known
        if failure.advised is not None:
            self.closed.append(fixed(failure, failure.tool, *failure.advised))
            return
        runs = program(failure.call)
        if (
            (
                _ENVIRONMENT.search(failure.error)
                and not (
                    _MISSING_PROGRAM.search(failure.error)
                    and not missing_program(runs, failure.error, failure.call)
                    and not _ENVIRONMENT.search(_MISSING_PROGRAM.sub("", failure.error))
                )  # "command not found" naming no program (a script's stray line): says nothing
            )
            or _SHELL_SYNTAX.search(failure.error)
            or crlf_script(failure.error)
            or failure.usage
            or (_SCRIPT_REFUSAL.match(failure.error) and failure.expects)
            or tool_rule(runs, failure.error, failure.call)
            or windows_fact(failure.call, failure.error)
            or (stale_read(failure.error) and bool(failure.again))  # refused again after a Read
            or _unknown_word(failure)
        ) and len(self.unresolved) < self.unresolved_limit:
            self.unresolved.append(failure)
        elif failure.signature:
            self.dropped.add(failure.signature)
            self.given_up.append((failure.call, failure.error))

    def finish(self) -> Iterator[Sequence]:
        """At the end of the transcript: the failures nothing fixed that say something about the
        machine (a sandbox refusal, a missing tool, no network) are lessons on their own."""
        asked = {
            call_texts(raw)[0] for name, raw, _ in self.pending_calls if name in _COMMAND_TOOLS
        }
        for failure in self.open_failures:
            failure.escalation_asked = (
                failure.tool in _COMMAND_TOOLS
                and f"{failure.call}{ESCALATED}" in asked
                and bool(_SANDBOXED.search(failure.error))
            )
            self._give_up(failure)
        self.open_failures = []
        self.missing_files = []
        yield from self.drain()
        yield from self.absent.values()
        self.absent = {}
        for failure in self.unresolved:
            yield Sequence(
                failure.tool,
                failure.call,
                failure.error,
                "",
                failure.reason,
                failure.index,
                0,
                None,
                also=failure.also,
                usage=failure.usage,
                expects=failure.expects,
                escalation_asked=failure.escalation_asked,
            )
        self.unresolved = []


__all__ = ["Sequence", "SequenceMiner"]
