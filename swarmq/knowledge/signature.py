"""Failure signatures: a failing call and its error reduced to what recurs across sessions.

The same mistake looks different each time it is made: another path, another line number,
another quoted argument, another shell prefix (``bash: line 1:``, ``zsh:1:``, ``(eval):1:``),
another platform's wording (``ls: x: No such file or directory`` on macOS, ``ls: cannot
access 'x': No such file or directory`` on Linux). A signature keeps the program and the error's
class and drops the rest: ``python: command not found``, ``zsh: no matches found``, ``sudo: a
terminal is required``, ``value too great for base``, ``ModuleNotFoundError: No module named
yaml`` (the module is the error, so it stays).

Text is either what a hook sees (the call, then the tool's output: a first line ``$ <command>``
marks the call) or a lesson that states the failing call and its error (forge's tool-error
lessons read ``` `<call>` failed (<error>); `<fix>` worked instead.```). Output that says
nothing failed (an empty result, a search without matches, a refusal by the user) has no
signature. Two departures from "strip every path": a not-found error keeps the base name of
what was missing, with its folder when it is a file (``ls: no such file or directory:
commands``, ``cat: no such file or directory: steps/step-01-init.md``), and shell start-up
chatter is
never the failure. The rules were written from the failing tool calls of 94 real Claude Code
and Codex sessions (``eval/recall/failures.json``: each case, its source and its label;
``eval/recall/measure.py`` and ``docs/knowledge.md`` give the figures).
"""

from __future__ import annotations

import re
from functools import lru_cache

from swarmq.knowledge.msys import rewritten_argument
from swarmq.storage.boundedjson import loads_bounded

SIGNATURE_FIELD = "failure_signature"
"""The entry field holding a lesson's failure signature (a string; opencode-swarm keeps unknown
keys through its read-modify-write, and swarmq keeps every key)."""
HEAD_CHARS = 6000
TAIL_CHARS = 3000
"""Only the start and the end of a long output are read (a traceback ends it)."""
MAX_SIGNATURES = 3
"""At most this many signatures of one text: the ones further down an output are rarely it."""
MAX_WORDS = 8
"""A generic message is cut to its first words: what follows is usually the instance."""
MIN_WORDS = 2
"""A one-word remainder ("failed", "enabled") is a test runner's tally, not an error class."""
MAX_SUBJECT = 60
"""The longest name of a missing file a not-found signature keeps (longer: a generated name)."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CALL_LINE = re.compile(r"^\s*\$ (.+)$", re.MULTILINE)
_LESSON_CALL = re.compile(r"`([^`\n]{1,400})`\s+(?:failed|fails|errored|exited)")
_LESSON_ERROR = re.compile(r"(?:failed|fails)\s*\((.+?)\)(?:;|\.|,| and |$)", re.DOTALL)
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_CD_PREFIX = re.compile(
    r"^\s*(?:cd|export|source|\.|pushd|set|unset)\s+(?:\"[^\"]*\"|'[^']*'|(?:\\ |[^\s;&])+)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|[^\s;&]+))*\s*(?:&&|;)\s*"
)
_WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "command", "exec", "timeout"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish"})

# -- specific classes (checked on every line, in this order) -----------------------------------

_NOT_FOUND = (
    # zsh:1: command not found: rg / (eval):1: command not found: npm
    re.compile(r"command not found: ([\w.+-]+)"),
    # bash: python: command not found / bash: line 1: rg: command not found
    re.compile(r"(?:^|[\s:])([A-Za-z_][\w.+-]*): command not found\b"),
    # /bin/sh: 1: python: not found
    re.compile(r"^(?:/bin/)?(?:sh|dash|bash)(?:: \d+)?: ([\w.+-]+): not found\b"),
    # 'python' is not recognized as an internal or external command (cmd.exe)
    re.compile(
        r"^'?([\w.+-]+)'? is not recognized as (?:an internal or external command|the name)"
    ),
    # PowerShell: "The term 'sed' is not recognized as a name of a cmdlet, function, …"
    re.compile(r"The term '([\w.+-]+)' is not recognized as (?:the|a) name of a cmdlet"),
    # PowerShell in any display language: its error record ("+ CategoryInfo : ObjectNotFound:
    # (sed:String) [], CommandNotFoundException"), or forge's excerpt of it ("sed : Die
    # Benennung "sed" wurde nicht … erkannt. (CommandNotFoundException)")
    re.compile(r"ObjectNotFound: \((\w[\w.+-]*):String\) \[\], CommandNotFoundException"),
    re.compile(r"^(\w[\w.+-]*) : .*\(CommandNotFoundException\)"),
    # which (zsh builtin): "node not found"
    re.compile(r"^([\w.+-]+) not found$"),
    # a lesson in prose: "`python` is not on PATH here", "rg (ripgrep) is not installed"
    re.compile(
        r"(?:^|`)([A-Za-z_][\w.+-]*)`?(?: \([^)]{1,30}\))? (?:is not|isn't|was not|is no longer) "
        r"(?:installed|on (?:the )?PATH|available|found)\b"
    ),
    re.compile(r"\bno `([A-Za-z_][\w.+-]*)` (?:binary|command|executable|on (?:the )?PATH)\b"),
    # Codex executing argv directly: the program itself does not exist
    re.compile(r"^(?:execution error: )?No such file or directory \(os error 2\)$()"),
)
_ZSH_GLOB = re.compile(r"\bno matches found\b|^(?:zsh|\(eval\))(?::\d+)?: bad pattern\b")
"""zsh refuses an unquoted glob it cannot expand (``app/[id]/page.tsx``, ``*.json`` with no
file); a ``[`` without its ``]`` is a "bad pattern". Both are fixed by quoting."""
_SUDO = re.compile(
    r"sudo: (?:a terminal is required|a password is required|no tty present|"
    r"sorry, you must have a tty)|^Need sudo access\b",
)
"""sudo cannot ask for a password without a terminal (Homebrew's installer says it its way)."""
_ZSH_PROSE = re.compile(
    r"\bzsh\b.{0,80}\b(?:glob|quot|brackets?\b|no matches)|\b(?:glob|quot).{0,80}\bzsh\b",
    re.IGNORECASE,
)
"""A lesson that says it in prose ("the shell is zsh: quote paths with [id] in them")."""
_SUDO_PROSE = re.compile(
    r"\bsudo\b.{0,60}\b(?:terminal|tty|password|non-?interactive|cannot authenticate|"
    r"can't authenticate)",
    re.IGNORECASE,
)
_NO_TTY = re.compile(r"\b(?:input device is )?not a tty\b|\bno tty present\b", re.IGNORECASE)
"""A command that wants a terminal (``docker exec -it``, ``ssh -t``) run by an agent, which has
none."""
_SPAWN = re.compile(r"\bspawn (\S+) (E[A-Z]{3,})\b")
"""Node could not start a program (Claude Code's Grep and Glob run ``rg``): the program it
spawned and the error code name the failure, whatever the tool was asked (``spawn …/rg EACCES``
→ ``rg: spawn eacces``)."""
_BASE = re.compile(r"value too great for base")
MSYS_REWRITE = "git bash: argument rewritten into a windows path"
"""Git Bash converted an argument into a path under its install root (or a ``/X`` switch into
the drive ``X:/``): one cause whatever the program then said and whichever program it was."""
_DRIVE_SWITCH = re.compile(r"'([A-Za-z]):/'")
_SHELL_SYNTAX = re.compile(
    r"(unexpected EOF while looking for matching|syntax error near unexpected token|"
    r"syntax error: unexpected end of file|bad substitution|unbound variable|"
    r"ambiguous redirect)"
)
_PY_MODULE = re.compile(r"\b(ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
_PY_EXCEPTION = re.compile(r"^([A-Z]\w*(?:Error|Exception|Exit|Interrupt)): (.*)$")
_CLAUDE_TOOL = (
    (re.compile(r"String to replace not found in file"), "Edit: string to replace not found"),
    (re.compile(r"File has not been read yet"), "{tool}: file has not been read yet"),
    (re.compile(r"^File does not exist\b"), "{tool}: file does not exist{subject}"),
    (re.compile(r"^Directory does not exist\b"), "{tool}: directory does not exist{subject}"),
    (re.compile(r"InputValidationError: (\w+) failed"), "{0}: input validation error"),
    (re.compile(r"File content \(\d+ tokens\) exceeds maximum"), "Read: file too large"),
    # Edit or Write on a file changed since it was read (a formatter, a linter, the user): one
    # rule of the tool, whichever file and wording ("unexpectedly modified", "modified since read")
    (re.compile(r"^File has been (?:unexpectedly )?modified\b"), "Edit: file modified since read"),
    (
        re.compile(r"Found \d+ matches of the string to replace, but replace_all is false"),
        "Edit: string to replace is not unique",
    ),
)
_PATCH = (
    # a formatter's check (`ruff format --check`, `black --check`) on unformatted files: the
    # same failure whichever files it names
    (
        re.compile(r"^(?:Would reformat\b|\d+ files? would be reformatted\b)"),
        "formatter: would reformat",
    ),
    (re.compile(r"Failed to find expected lines"), "apply_patch: failed to find expected lines"),
    (re.compile(r"is not a valid hunk header"), "apply_patch: invalid hunk header"),
)
_HTTP = re.compile(r"(?:Request failed with )?status code (\d{3})\b")
_ARGUMENTS = re.compile(r"failed to parse function arguments: (missing field|unknown field)")

NOT_A_FAILURE = re.compile(
    r"The user doesn't want to proceed with this tool use|"
    r"doesn't want to take this action right now|"
    r"is temporarily unavailable, so auto mode cannot determine|"
    r"^Request was aborted\.?$|"
    r"\[Request interrupted by user|Sibling tool call errored",
)
"""A refusal or an interruption: the call did not fail, nobody let it run."""

# -- the generic class: the telling line, instance details removed ------------------------------

_ERROR_LINE = re.compile(
    r"error|not found|no such|denied|invalid|failed|unknown|missing|unsupported|not supported|"
    r"timed out|cannot|can't|refused|not permitted|unrecognized|expected|required|could not|"
    r"unable|killed|fatal|exception|unexpected|bad |not allowed|no \w+ found",
    re.IGNORECASE,
)
_POSSIBLE = re.compile(
    _ERROR_LINE.pattern
    + r"|not\b|n't\b|\bno `|no matches|bad pattern|sudo|zsh|value too great|exit|would reformat|"
    r"would be reformatted|"
    r"interrupt|replace_all|status code|unbound|ambiguous|file exists|read-only|already in use|"
    r"unreachable|no space left|too many open files|broken pipe|exceeds maximum|is a directory",
    re.IGNORECASE,
)
"""A word every failure this module recognises contains (each pattern below has one)."""

_NOISE = re.compile(
    r"^(?:chunk id|wall time|original token count|output:|process exited with code|"
    r"exit code:? -?\d+$|now using node v|warning: |npm warn|\s*at )|"
    r"(?:shellenv\.sh|\.bash_profile|\.bashrc|\.zshrc|\.zprofile|\.profile): line \d+:",
    re.IGNORECASE,
)
"""Lines that are not the failure: tool framing, shell start-up chatter (a broken rc file
prints on every call), warnings and stack frames."""
_ERRNO = re.compile(
    r"no such file or directory|permission denied|operation not permitted|is a directory|"
    r"not a directory|file exists|directory not empty|read-only file system|"
    r"connection refused|address already in use|could not resolve host(?:name)?|"
    r"network is unreachable|command timed out|killed by a signal|no space left on device|"
    r"too many open files|broken pipe",
    re.IGNORECASE,
)
_LOCATION = re.compile(
    r"^(?:\(eval\)|[\w./\\~-]+)(?::\s*line)?[: ]\s*\d+(?::\d+)?:\s*|^line \d+:\s*|^\[stdin\]:\d+\s*"
)
_EMITTER = re.compile(r"^([A-Za-z][\w.+-]{0,40}):\s+(?=\S)")
_QUOTED = re.compile(
    r"'[^'\n]{0,300}'|\"[^\"\n]{0,300}\"|`[^`\n]{0,300}`|‘[^’\n]{0,300}’|“[^”\n]{0,300}”"
)
_PATH = re.compile(
    r"(?:[A-Za-z]:)?[\w.~@+-]*(?:[/\\][\w.~@+$*{}\[\]-]*)+|\b[\w-]+\.[A-Za-z]\w{0,5}\b"
)
_IDS = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{7,}\b|"
    r"\b0x[0-9a-f]+\b|\b\d+(?:[.:,]\d+)*\b",
    re.IGNORECASE,
)
_NOT_WORD = re.compile(r"[^\w\s#-]+")
_SPACES = re.compile(r"\s+")
_PREFIXES = re.compile(r"^(?:(?:error|fatal|err!?|e|panic|critical)\s*(?:\[\w+\])?\s*:\s*)+", re.I)
_GENERIC_EMITTERS = frozenset(
    {"error", "fatal", "warning", "note", "hint", "exception", "caused by", "output", "stderr"}
)


def failure_signature(text: str) -> str | None:
    """The normalised failure signature of a failing call and/or its error text, e.g.
    'python: command not found', 'zsh: no matches found', 'value too great for base';
    None when the text holds no recognisable failure. Pure, fast, no I/O."""
    found = failure_signatures(text)
    return found[0] if found else None


def failure_signatures(text: str) -> tuple[str, ...]:
    """Every signature the text supports, the most telling first (a long output can hold the
    failure that matters under a generic one; recall matches any of them)."""
    return _signatures(
        text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
        if len(text) > HEAD_CHARS + TAIL_CHARS
        else text
    )


@lru_cache(maxsize=8192)
def _signatures(text: str) -> tuple[str, ...]:
    if not _POSSIBLE.search(text):
        return ()  # most lessons state no failure: one scan, not a parse line by line
    call, error = split_failure(text)
    lines = _lines(error)
    if not lines or any(NOT_A_FAILURE.search(line) for line in lines[:3]):
        return ()
    program = call_program(call) if call else ""
    tool = _tool_name(call)
    first = call.split(None, 1)[0].rsplit("/", 1)[-1] if call.strip() else ""
    direct = bool(first) and first not in _SHELLS  # argv run as is, not through a shell
    out: list[str] = []
    chatter: list[str] = []
    generic: list[str] = []
    errno: list[str] = []
    for line in lines:
        noise = _NOISE.search(line) is not None
        found = _specific(line, call, program, tool, direct)
        if found is None and not noise and _ERROR_LINE.search(line):
            result = _generic(line, program, call)
            if result is not None:
                (errno if result[1] else generic).append(result[0])
            continue
        if found:
            (chatter if noise else out).append(found)
    found_all = [*out, *errno, *generic] or chatter
    kept = tuple(dict.fromkeys(found_all))[:MAX_SIGNATURES]
    return tuple(dict.fromkeys([*kept, *filter(None, map(_bare_subject, kept))]))


def _bare_subject(signature: str) -> str | None:
    """A not-found signature with its subject's folder dropped (``…: steps/step-01.md`` →
    ``…: step-01.md``), matched last: the form entries stored before subjects kept their
    folder, and a lesson learned from a call that named the file without one."""
    head, sep, subject = signature.rpartition(": ")
    if not sep or "/" not in subject or not head.endswith(_NOT_FOUND_CLASSES):
        return None
    return f"{head}: {subject.rsplit('/', 1)[-1]}"


def split_failure(text: str) -> tuple[str, str]:
    """The failing call (``""`` when the text does not say) and the error text."""
    text = _ANSI.sub("", text)
    stripped = text.lstrip()
    if stripped[:1] == "{":
        try:
            data = loads_bounded(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return _from_json(data)
    match = _CALL_LINE.search(text)
    if match and match.start() < 2:
        call, error = match.group(1).strip(), text[match.end() :]
        if error.lstrip()[:1] == "{":
            try:
                data = loads_bounded(error)
            except ValueError:
                data = None
            if isinstance(data, dict):
                error = _from_json(data)[1] or error
        return call, error
    match = _LESSON_CALL.search(text)
    if match:
        rest = text[match.end() - len(match.group(0).split("`")[-1]) :]
        stated = _LESSON_ERROR.search(rest)
        return match.group(1), stated.group(1) if stated else text[match.end() :]
    return "", text


def _from_json(data: dict[str, object]) -> tuple[str, str]:
    """A tool result object: Codex's ``{"output", "metadata"}`` or a hook's payload with
    ``tool_input`` and ``tool_response`` / ``error``."""
    call = ""
    tool_input = data.get("tool_input")
    name = data.get("tool_name")
    if isinstance(tool_input, dict):
        value = tool_input.get("command") or tool_input.get("cmd")
        call = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
        if not call and isinstance(name, str):  # Read, Write, Edit …: the tool, then its path
            call = f"{name} {tool_input.get('file_path') or tool_input.get('path') or ''}"
    error = ""
    for key in ("error", "tool_response", "output", "stderr"):
        value = data.get(key)
        if isinstance(value, dict):
            value = value.get("stderr") or value.get("output") or value.get("error") or ""
        if isinstance(value, str) and value.strip():
            error = value
            break
    return call, error


def _lines(error: str) -> list[str]:
    if "\\n" in error and error.count("\n") < 2:
        error = error.replace("\\n", "\n")
    # Codex's sandbox wrapper: the command's own stderr follows "stderr:"
    marker = error.find("stderr: ")
    if marker >= 0 and "sandbox" in error[:marker]:
        stdout = error.find("stdout: ", 0, marker)
        stderr = error[marker + 8 :]
        # the failure is on stderr, unless it is empty (a test run reports on stdout)
        error = stderr if stderr.strip() or stdout < 0 else error[stdout + 8 : marker]
    out = []
    for raw in error.splitlines():
        line = raw.strip()
        if line.startswith(("failed in sandbox", "exec_command failed")):
            line = re.sub(r"^failed in sandbox(?: \w+)?(?: with execution error)?:\s*", "", line)
            line = re.sub(r"^sandbox (?:denied exec )?error:?\s*", "", line)
        if line.startswith("<tool_use_error>"):
            line = line[len("<tool_use_error>") :]
        line = line.removesuffix("</tool_use_error>").strip()
        if line:
            out.append(line)
    return out


def call_program(call: str) -> str:
    """The program a shell command runs (``cd x && VAR=1 sudo /usr/bin/python3 y`` →
    ``python3``; ``bash -lc "rg x"`` → ``rg``)."""
    call = call.strip()
    if call.startswith("*** Begin Patch"):
        return "apply_patch"
    for _ in range(3):
        call = _CD_PREFIX.sub("", call)
        words = [w for w in call.split() if not _ENV_ASSIGNMENT.match(w)]
        while words and words[0].rsplit("/", 1)[-1] in _WRAPPERS and len(words) > 1:
            words = (
                [w for w in words[1:] if not w.startswith("-")]
                if words[0] != "timeout"
                else words[2:]
            )
        if not words:
            return ""
        head = words[0].rsplit("/", 1)[-1].rsplit("\\", 1)[-1].strip("\"'")
        if head in _SHELLS and len(words) > 2 and words[1] in ("-c", "-lc", "-ic"):
            call = " ".join(words[2:]).strip("\"'")
            continue
        command = powershell_command(words)
        if command:
            call = command
            continue
        return head.lower() if head.endswith((".exe", ".EXE")) is False else head[:-4].lower()
    return ""


_POWERSHELLS = frozenset({"pwsh", "powershell"})
_PROGRAM_WORD = re.compile(r"^[A-Za-z][\w.+-]*(?:\s|$)")
"""A command that starts with a program's name (not ``$x = …`` or ``(Get-Content …)``, which
are PowerShell's own expressions: the program that ran them is PowerShell)."""
_PS_COMMAND = frozenset({"-command", "-c"})


def powershell_command(words: list[str]) -> str:
    """The command a PowerShell is asked to run (``pwsh.exe -NoLogo -Command sed -n 1,9p x`` →
    ``sed -n 1,9p x``; ``""`` when ``words`` are not such a call): Windows agents run every call
    through it, and the program that failed is the one it was given; ``""`` too when the command
    is a PowerShell expression rather than a program's call."""
    if not words:
        return ""
    head = words[0].rsplit("/", 1)[-1].rsplit("\\", 1)[-1].strip("\"'").lower()
    if head.removesuffix(".exe") not in _POWERSHELLS:
        return ""
    for at, word in enumerate(words[1:], 1):
        if word.lower() in _PS_COMMAND:
            command = " ".join(words[at + 1 :]).strip("\"'")
            return command if _PROGRAM_WORD.match(command) else ""
    return ""


def _tool_name(call: str) -> str:
    word = call.split(None, 1)[0] if call.strip() else ""
    return word if word[:1].isupper() and word.isalpha() else ""


def _specific(line: str, call: str, program: str, tool: str, direct: bool) -> str | None:
    for pattern in _NOT_FOUND:
        match = pattern.search(line)
        if match:
            if not match.group(1) and not direct:
                continue  # a shell ran, so the missing file is its working directory
            name = match.group(1) or program
            if name and name.lower() not in ("command", "the", "file"):
                return f"{name}: command not found"
    if _ZSH_GLOB.search(line) or _ZSH_PROSE.search(line):
        return "zsh: no matches found"
    if _SUDO.search(line) or _SUDO_PROSE.search(line):
        return "sudo: a terminal is required"
    if _BASE.search(line):
        return "value too great for base"
    if ":/" in line and call:
        drive = _DRIVE_SWITCH.search(line)
        if rewritten_argument(call, line) or (
            drive and re.search(rf"(?:^|\s)/{drive.group(1)}(?=\s|$)", call)
        ):
            return MSYS_REWRITE
    match = _SPAWN.search(line)
    if match:
        spawned = re.split(r"[/\\]", match.group(1))[-1].removesuffix(".exe")
        return f"{spawned}: spawn {match.group(2).lower()}"
    if _NO_TTY.search(line):
        return f"{program or 'tool'}: not a tty"
    match = _SHELL_SYNTAX.search(line)
    if match:
        return f"bash: {match.group(1).lower()}"
    match = _PY_MODULE.search(line)
    if match:
        return f"ModuleNotFoundError: No module named {match.group(2)}"
    for pattern, template in _CLAUDE_TOOL:
        match = pattern.search(line)
        if match:
            subject = _missing(call[len(tool) :], []) if tool else ""
            return template.format(
                *match.groups(),
                tool=tool or program or "Read",
                subject=f": {subject}" * bool(subject),
            )
    for pattern, signature in _PATCH:
        if pattern.search(line):
            return signature
    match = _ARGUMENTS.search(line)
    if match:
        return f"tool: failed to parse function arguments: {match.group(1)}"
    match = _HTTP.search(line)
    if match and ("status code" in line.lower()) and len(line) < 200:
        return f"{tool or program or 'http'}: request failed with status code {match.group(1)}"
    match = _PY_EXCEPTION.match(line)
    if match and "Warning" not in match.group(1):
        message = _normalise(match.group(2))
        return f"{match.group(1)}: {message}" if message else match.group(1)
    return None


_PS_ERROR_ID = re.compile(r"\s*\((?:[A-Z][a-z0-9]+){2,}\)\s*$")
"""PowerShell's error id after its message in forge's excerpt (``… fehlt. (MissingFileSpecification)``):
the output a hook sees has it on a line of its own, so the message's class is the message."""


def _generic(line: str, program: str, call: str) -> tuple[str, bool] | None:
    """``program: class`` of an error line, and whether the class is an operating-system error
    (those name the failure better than a tool's own wording around them)."""
    line = _LOCATION.sub("", _PS_ERROR_ID.sub("", line)).strip()
    emitters: list[str] = []
    for _ in range(3):  # "bash: line 1: rg: …", "cp: /path: …"
        match = _EMITTER.match(line)
        if not match or match.group(1).lower() in _GENERIC_EMITTERS:
            break
        emitters.append(match.group(1))
        line = _LOCATION.sub("", line[match.end() :]).strip()
    errno = _ERRNO.search(line)
    if errno:
        message = errno.group(0).lower()
        message = {"could not resolve hostname": "could not resolve host"}.get(message, message)
        if message == "no such file or directory":
            subject = _missing(line[: errno.start()], emitters[1:])
            message = f"{message}: {subject}" if subject else message
    else:
        message = _normalise(line)
    if not message:
        return None
    emitter = emitters[0].lower() if emitters else ""
    # a pipeline's failing stage names itself ("ls -R . | sed …" → "sed: …")
    name = emitter if emitter and re.search(rf"(?:^|[|;&]\s*){re.escape(emitter)}\b", call) else ""
    name = name or program or emitter
    if not name:  # prose without a program: not a failure this can recognise again
        return None
    return f"{name}: {message}", errno is not None


_NOT_FOUND_CLASSES = (
    "no such file or directory",
    "file does not exist",
    "directory does not exist",
)


def _missing(before: str, subjects: list[str]) -> str:
    """The base name of what was not found: what the line names before the error (``cannot
    access '/x/y':`` → ``y``), else the last ``name:`` before it (``rg: T021: …`` → ``T021``);
    a file keeps its folder (``/x/steps/step-01.md`` → ``steps/step-01.md``: workflows of one
    tool each have their ``step-01.md``). Two misses of one file in two sessions match; a miss
    of another file does not."""
    quoted = _QUOTED.search(before)
    subject = quoted.group(0)[1:-1] if quoted else before.strip(" :")
    if not subject or " " in subject.strip():
        subject = subjects[-1] if subjects else ""
    parts = [p for p in re.split(r"[/\\]", subject.strip().rstrip("/\\")) if p]
    base = parts[-1] if parts else ""
    if len(parts) > 1 and parts[-2] not in (".", "..", "~", "…") and "." in base:
        base = f"{parts[-2]}/{base}"  # a file with its folder: steps/step-01.md, not steps-c/…
    return base if 0 < len(base) <= MAX_SUBJECT else ""


def _normalise(message: str) -> str:
    message = _PREFIXES.sub("", message.strip())
    message = _QUOTED.sub(" ", message)
    message = _PATH.sub(" ", message)
    message = _IDS.sub(" ", message)
    message = _NOT_WORD.sub(" ", message)
    words = _SPACES.sub(" ", message).strip().lower().split(" ")
    words = [w for w in words if w and w != "-"][:MAX_WORDS]
    return " ".join(words) if len(words) >= MIN_WORDS else ""


def signature_program(signature: str) -> str:
    """The program part of a signature (``""`` when it has none)."""
    head, sep, _ = signature.partition(": ")
    return head if sep and " " not in head else ""


def signature_class(signature: str) -> str:
    """A signature's error class without its program (the fallback key's second half)."""
    program = signature_program(signature)
    return signature[len(program) + 2 :] if program else signature
