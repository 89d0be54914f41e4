"""What a tool call and its result say: the command or path a reader needs, the telling line of
an error, the program a shell command runs, and whether a call writes a file another named."""

from __future__ import annotations

import re
import shlex
from typing import Any

from swarmq.knowledge.signature import powershell_command
from swarmq.storage.boundedjson import loads_bounded
from swarmq.transcripts.values import compact, headed_exit

MAX_EVIDENCE = 220
LITERAL_GLOB = r"no matches found: [^\n*?]*[\[(][^\n*?]*"
"""zsh reading a literal path's brackets or parentheses as a pattern (``no matches found:
src/app/(public)/[id]/page.tsx``). A pattern with ``*`` or ``?`` that matched nothing is a
search that found nothing, an answer; a path with ``[id]`` or ``(group)`` and no wildcard was
meant as a file name, and quoting it is the fix."""
_PATCH_FILE = re.compile(r"\*\*\* (?:Update|Add) File: (\S+)")
NOT_FOUND_TRANSLATED = (
    "orden no encontrada|comando não encontrado|commande introuvable|Befehl nicht gefunden|"
    "comando non trovato"
)
"""bash's "command not found" in the user's language (es, pt, fr, de, it): "python: orden no
encontrada" under a Spanish locale says what the English message says."""
ERROR_LINE = re.compile(
    r"error|not found|no such|denied|invalid|failed|unknown|missing|unsupported|not supported|"
    r"timed out|cannot|can't|refused|not permitted|unrecognized|not recognized as|\bbad option\b|exceeds maximum|expected|need|required|could not|unable|notfoundexception\b|"
    r"killed|not a tty|^fatal:|^FAIL(?:ED)?:\s+\S|\bERR_[A-Z0-9_]{4,}|\bERR!|\bEPERM\b|\bEACCES\b|too (?:many|few) arguments|"
    r"\bport \d+ is not available|" + NOT_FOUND_TRANSLATED + "|" + LITERAL_GLOB,
    re.IGNORECASE,
)
WARNING_LINE = re.compile(r"(?:npm )?(?:warn(?:ing)?\b|\[warn(?:ing)?\])", re.IGNORECASE)
"""A warning: printed beside a failure, rarely its cause. An output whose only error-like
lines are warnings does not say why the call failed (a lesson naming the warning misleads).
npm names itself first (``npm warn exec The following package was not found and will be
installed``, which every ``npx`` of a package not yet cached prints)."""
_NOISE_LINE = re.compile(
    r"^(?:chunk id|wall time|original token count|output:|process exited with code \d+$|"
    r"command: \S*(?:bash|zsh|sh|pwsh|powershell)(?:\.exe)? -|"
    r"exit code:? \d+$|now using node v|#{1,6} \w+(?: \w+)?$|"
    r"script (?:failed|error:|completed)$|script running with cell id \d+$|ssh[_-]askpass: )|"
    r"(?:shellenv\.sh|\.bash_profile|\.bashrc|\.zshrc|\.zprofile|\.profile): line \d+:|"
    r"\s(?:PASSED|SKIPPED|XFAIL|XPASS)\s*\[\s*\d+%\]$",
    re.IGNORECASE,
)
"""Lines that are not the failure: the tool's framing (an MCP server's ``### Error`` heading,
Codex's code-mode ``exec`` saying "Script failed" round a command's exit status), and shell
start-up chatter (a broken rc
file, Homebrew's ``shellenv.sh: line 18: /bin/ps: Operation not permitted`` in a sandbox), and
ssh saying it has no graphical helper to ask with (``ssh_askpass: exec(…): No such file or
directory``) above what failed (``Host key verification failed.``)
printed on every call, failing or not; and a verbose test run's progress lines of tests that did
not fail (``test_parse_date_invalid PASSED [ 14%]``), whose names may read as errors."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_RESOLVER = (
    r"name or service not known|temporary failure in name resolution|"
    r"nodename nor servname provided|no address associated with hostname|no route to host|"
    r"could(?:n't| not) resolve host|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
)
"""The resolver or the network saying the host cannot be reached: the cause under every retry
warning a package manager prints before it gives up (``WARNING: Retrying (Retry(total=4, …)) after
connection broken by …: [Errno -2] Name or service not known``)."""
_CARRIER = re.compile(
    r"\b(?:EPERM|EACCES|ENOENT|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|EADDRINUSE)\b|"
    r"operation not permitted|permission denied|command not found|could not resolve|"
    r"not a tty|address already in use|connection refused|no such file or directory|"
    r"\bport \d+ is not available|cannot open shared object file|\bGemNotFound\b|"
    r"ModuleNotFoundError|" + _RESOLVER,
    re.IGNORECASE,
)
"""A line that names the failure itself (an operating-system error): it beats a lead-in such
as ``error when starting dev server:`` or a tool's generic ``Error: command failed``."""
_LOCATION = re.compile(r"^/\S+\.\w+:\d+:in [`'][^`']{1,120}[`']: (?=\S)")
"""A Ruby backtrace's location heading an error (``/…/bundler/definition.rb:697:in
'Bundler::Definition#materialize': Could not find …``): the error follows it."""
_EXIT = re.compile(r"(?:exit[_ ]code\"?:?\s*|exited with code\s+)(-?\d+)", re.IGNORECASE)
_WRAPPER = re.compile(r"failed in sandbox|sandbox denied|execution error", re.IGNORECASE)
"""A sandbox's report that a command failed, wrapping the command's own output."""
_STAMP = re.compile(
    r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+"
)
"""A log line's timestamp (a build service streams its build's log so): when, not what."""
_BARE_SGR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")
"""A terminal colour code whose escape character the transcript dropped (``[31merror``)."""
_SUMMARY = re.compile(
    r"^(?:[x✗×✖]\s+)?(?:build|compilation|deploy(?:ment)?)\s+failed\b(?:\s+in\s+[\d.]+\s*m?s)?\.?$|"
    r"\bcommand\s+\"[^\"]*\"\s+exited with (?:code\s+)?\d+\.?$|"
    r"\bcommand failed with exit code \d+\.?$|"
    r"^(?:g?make|ninja)(?:\[\d+\])?: \*\*\* \S.* error \d+$",
    re.IGNORECASE,
)
"""A line that says only that a wrapped step failed (a deployer's ``Error: Command "npm run
build" exited with 1``, a bundler's ``x Build failed in 4.94s``, make's ``*** [all] Error 2``):
a verdict whose cause is another line of the wrapped step's own output, which the lesson quotes
when the output has one."""
_CAUSE = re.compile(
    r"could(?:n't| not) resolve|network (?:error|is unreachable)|connection refused|"
    r"permission denied|operation not permitted|read-only file system|" + _RESOLVER,
    re.IGNORECASE,
)
"""An environmental root cause in a failed command's output (DNS, network, permissions)."""
_FATAL = re.compile(r"^(?:\S+:\s*)?fatal error\b", re.IGNORECASE)
"""A program's line saying why it stopped (``Fatal error [speechd.c:946]:Can't bind local
socket``): the errors it printed before it were ones it went on past (``can't open logging file
… Using stdout.``)."""
_CLAUSE_CHARS = 80
"""How much of a long line before its cause is quoted with it (the clause it ends)."""
_COMMAND = re.compile(r'"(?:command|cmd)"\s*:\s*\[?\s*"((?:[^"\\]|\\.)*)')
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_SPACES = re.compile(r"\s+")
_INPUT_KEYS = (
    "command",
    "cmd",
    "input",
    "file_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
)


def writes_same_file(failed: str, call: str) -> bool:
    """Whether ``call`` (another tool's) writes a file the failed edit ``failed`` named: its last
    two path components appear after a redirection or a write in the call."""
    paths = _PATCH_FILE.findall(failed) or ([failed] if failed and " " not in failed else [])
    for path in paths:
        tail = "/".join(path.rstrip("/").split("/")[-2:])
        at = call.find(tail) if len(tail) >= 6 else -1
        while at >= 0:  # every mention: a script may read the file before it writes it
            if re.search(r"(?:>|\btee\b|write\w*\(|\bcp\b|\bmv\b)\s*['\"]?\S*$", call[:at]):
                return True
            at = call.find(tail, at + len(tail))
    return False


MIN_NAMED_FILE = 4
"""A file's base name shorter than this (``a``, ``x.c``) is too common a word of a command to
say the command names that file."""


def edited_named(call: str, failed: str) -> str:
    """The file an editing tool's ``call`` wrote (its path as the call gives it) when the failed
    command ``failed`` names that file, by its path or its base name as a word of the command
    (``verify-sync.ps1`` in ``& "…\\scripts\\verify-sync.ps1" -Detailed``): the file the command
    ran or read, so an edit of it is the first suspect for what changed; ``""`` otherwise."""
    paths: list[str] = _PATCH_FILE.findall(call) or (
        [call.strip()] if "\n" not in call.strip() else []
    )
    for path in paths:
        base = re.split(r"[/\\]", path.strip().strip("'\"").rstrip("/\\"))[-1]
        if len(base) >= MIN_NAMED_FILE and re.search(
            rf"(?<![\w.-]){re.escape(base)}(?![\w.-])", failed, re.IGNORECASE
        ):
            return path.strip()
    return ""


def as_text(value: Any) -> str:
    """:func:`compact`, except that ``None`` reads as ``null`` (a tool call's empty input)."""
    return "null" if value is None else compact(value)


MCP_PREFIX = "mcp__"


def mcp_server(tool: str) -> str:
    """The MCP server a Claude Code tool name belongs to (``mcp__plugin_playwright_playwright__
    browser_navigate`` → ``plugin_playwright_playwright``); ``""`` for the agent's own tools."""
    if not tool.startswith(MCP_PREFIX):
        return ""
    return tool[len(MCP_PREFIX) :].rsplit("__", 1)[0]


def mcp_call(tool: str, call: str) -> str:
    """An MCP tool call as a lesson names it: the tool, then what it was given (``browser_navigate
    http://localhost:5173``; ``browser_install`` alone when it took nothing)."""
    name = tool.rsplit("__", 1)[-1]
    return name if call in ("", "{}", "null") else f"{name} {call}"


def summarise_call(call: Any) -> str:
    """The part of a tool call's input a reader needs: the command, path, pattern or patch head
    (marked ``(escalated)`` when the call asked to leave the sandbox). ``call`` is the input as
    the record holds it: an object, or a JSON or plain string."""
    summary, escalated = _command(call)
    return clip(summary, 160) + (" (escalated)" if escalated else "")


def call_texts(call: Any) -> tuple[str, str]:
    """:func:`summarise_call` and the call unclipped and unmarked (what tells two long calls
    apart), from one parse."""
    summary, escalated = _command(call)
    return clip(summary, 160) + (" (escalated)" if escalated else ""), summary


def _command(call: Any) -> tuple[str, bool]:
    text = as_text(call)
    value: object = call if isinstance(call, dict | list) else text
    escalated = '"with_escalated_permissions":true' in text or '"require_escalated"' in text
    if isinstance(value, str) and text[:1] == "{":
        try:
            value = loads_bounded(text)
        except ValueError:  # clipped: take the command string as far as it goes
            match = _COMMAND.search(text)
            value = match.group(1).replace('\\"', '"') if match else text
    if isinstance(value, dict):
        for key in _INPUT_KEYS:
            if key in value:
                value = value[key]
                break
        else:
            value = text
    if isinstance(value, list):
        parts = [str(v) for v in value]
        if len(parts) >= 3 and parts[0] in ("bash", "zsh", "sh") and parts[1] in ("-lc", "-c"):
            parts = parts[2:]
        value = " ".join(parts)
    return " ".join(str(value).split()), escalated


_PS_RECORD = re.compile(r"^\+ CategoryInfo\s*:")
_PS_ERROR_ID = re.compile(r"^\+ FullyQualifiedErrorId\s*:\s*([\w.-]+)")
_PS_POSITION = re.compile(r"^(?:\S+\s+){0,2}\S+\s*:\s*\d+\s+\S+\s*:\s*\d+\s*$")
"""PowerShell's position line, in any language (``At line:1 char:1``, ``In Zeile:1 Zeichen:9``)."""
_PS_HEADED = re.compile(r"^[\w.\\/:-]+ : \S")
"""The first line of a runtime error's message, headed by the command that failed (``sed : …``,
``Get-Content : …``)."""


def _powershell_record(lines: list[str]) -> str:
    """PowerShell's error record as one line: its message and its error id, which is English in
    every locale (``Die Zeichenfolge hat kein Abschlusszeichen: "."
    (TerminatorExpectedAtEndOfString)``); ``""`` when there is none. Its ``+ CategoryInfo``
    line says only "ParserError" and is no excerpt.

    The id names the first error, so the message is the first error's: a parse report lists
    every error (position, code, message) and ends with "Not all parse errors were reported",
    which says nothing. A runtime error's message stands above its position instead, wrapped
    at the console's width and headed by the command that failed (``pwsh : Die Benennung
    "pwsh" wurde nicht … erkannt``): its wrapped lines are joined."""
    start = next((n for n, line in enumerate(lines) if _PS_RECORD.match(line)), -1)
    if start < 0:
        return ""
    ident = next(
        (m.group(1) for m in map(_PS_ERROR_ID.match, lines[start : start + 3]) if m), ""
    ).split(",")[0]
    message = _first_message(lines[:start])
    if not message:
        return ""
    if not ident:
        return message
    return f"{clip(message, MAX_EVIDENCE - len(ident) - 3)} ({ident})"


def _first_message(lines: list[str]) -> str:
    """The message of the first error of a PowerShell report (``lines`` end before its
    ``+ CategoryInfo``), ``""`` when there is none."""
    glued = next(
        (line for line in lines[1:6] if len(line) < len(lines[0]) and lines[0].endswith(line)), ""
    )
    if glued and not glued.startswith("+"):  # Windows PowerShell writes a message that does not
        return lines[0][: -len(glued)].strip()  # end its line and its position on one line
    first = next((n for n, line in enumerate(lines) if _PS_POSITION.match(line)), -1)
    if first < 0:
        at = len(lines) - 1
        while at >= 0 and lines[at].startswith("+"):
            at -= 1
        return lines[at] if at >= 0 else ""
    after = first + 1
    while after < len(lines) and lines[after].startswith("+"):
        after += 1
    if after < len(lines) and not _PS_POSITION.match(lines[after]):
        return lines[after]  # a parse error: the message follows the code it points at
    head = next(
        (n for n in range(first - 1, max(first - 5, -1), -1) if _PS_HEADED.match(lines[n])), -1
    )
    if head >= 0:
        return " ".join(lines[head:first])
    return lines[first - 1] if first > 0 else ""


_DENIED = re.compile(r"Sandbox\(Denied \{|SandboxDenied \{")
_DENIED_STREAM = re.compile(
    r'(?:stderr|aggregated_output): StreamOutput \{ text: \\*"(.*?)\\*", truncated_after_lines'
)
"""Codex's report of a sandboxed call that failed, and the command's own stderr inside it
(``CreateProcess { message: "Codex(Sandbox(Denied { … stderr: StreamOutput { text: \"bwrap:
loopback: Failed RTM_NEWADDR: Operation not permitted\\n\" …``; in later Codex ``SandboxDenied {
message: "…", output: ExecToolCallOutput { … stderr: StreamOutput { text: "…"``)."""
_ESCAPED = re.compile(r'\\+([nt"])')
_UNESCAPED = {"n": "\n", "t": " ", '"': '"'}
_VERDICT_LIMIT = 80
"""The longest last line that is read as the output's verdict (``sudo: a password is required``,
``Host key verification failed.``): a longer one is a log line, not a verdict."""


def _denied(text: str) -> str:
    """The command's own words inside Codex's sandbox report (``""`` when it is no such report
    or the command printed nothing): the report's framing (``exec_command failed for …:
    CreateProcess { message: …``) is put round every failing sandboxed call, so it says nothing
    of its own; the command's stderr says what went wrong: what the sandbox refused (a sandbox
    that cannot start at all, a file it may not write), or the program's own error."""
    if _DENIED.search(text, 0, 600) is None:
        return ""
    for found in _DENIED_STREAM.finditer(text):
        inner = _ESCAPED.sub(lambda m: _UNESCAPED[m.group(1)], found.group(1))
        if inner.strip():
            return error_excerpt(inner)
    return ""


def _verdict(lines: list[str], best: str) -> str:
    """The output's short last line when it is an error of its own beside the chosen one: a
    program's closing verdict says what failed (``sudo: a password is required`` under the
    terminal's complaint, ``Host key verification failed.`` under ssh-askpass missing), which
    the first telling line alone does not (``""`` when there is none)."""
    last = lines[-1]
    if (
        len(lines) < 2
        or last == best
        or last in best
        or len(last) > _VERDICT_LIMIT
        or last.endswith(":")
        or not ERROR_LINE.search(last)
        or WARNING_LINE.match(last)
        or _WRAPPER.search(last)
    ):
        return ""
    return last


_PUSH_REFUSED = re.compile(r"!\s*\[(?:remote )?rejected\]")
"""git push's line for a ref it could not update, with the reason (``! [rejected] main -> main
(stale info)``, ``(fetch first)``, ``! [remote rejected] … (pre-receive hook declined)``)."""


_ESCAPED_LINE_END = re.compile(r"""\\r\\n|(?<!["'])\\n|\\n(?!["'])""")
"""A line end kept as text, but not one a message quotes (rg: the literal "\\n" is not allowed
in a regex): that is the message's own words, and a line cut there loses them."""


def error_excerpt(text: str) -> str:
    """The most telling line of a failed call's output: the command's own words inside Codex's
    sandbox report, a sandbox's wrapper line with the cause under it, else the first line that
    names an operating-system error, else the first error line that is not a lead-in (ending in
    a colon), else the first error line; followed by the output's short last line when that is
    an error of its own (its verdict)."""
    denied = (
        _denied(text) if "Sandbox(Denied" in text[:600] or "SandboxDenied" in text[:600] else ""
    )
    if denied:
        return denied
    try:
        parsed = loads_bounded(text) if text[:1] == "{" else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        text = parsed["output"] or text
    if "\x1b[" in text:
        text = _ANSI.sub("", text)
    text = _ESCAPED_LINE_END.sub("\n", text)  # escaped line ends (a Windows console's \r\n
    # kept as text, a message printed with its \n escaped): the same lines
    lines = [_STAMP.sub("", _BARE_SGR.sub("", line).strip()) for line in text.splitlines()]
    lines = [line for line in lines if line and not _NOISE_LINE.search(line)]
    if not lines:
        return ""  # a bare non-zero status: nothing was said, so nothing failed that can be told
    errors = [line for line in lines if ERROR_LINE.search(line)]
    errors.sort(key=lambda line: WARNING_LINE.match(line) is not None)  # warnings last
    record = _powershell_record(lines) if "+ CategoryInfo" in text else ""
    best = (
        record
        or (errors[0] if errors and _WRAPPER.search(errors[0]) else None)
        or next((line for line in errors if _CARRIER.search(line)), None)
        or _told(errors)
        or (errors[0] if errors else lines[0])
    )
    best = _worded(errors, _decisive(lines, errors, best))
    if best.startswith("error: failed to push some refs"):
        refused = next((line for line in lines if _PUSH_REFUSED.match(line)), "")
        if refused:  # git's summary says only that the push failed; the ref's line says why
            best = f"{' '.join(refused.split())}; {best}"
    at = lines.index(best) if best in lines else -1
    if best.startswith("Caused by:") and at > 0 and ERROR_LINE.search(lines[at - 1]):
        best = f"{lines[at - 1]} ({best})"  # the error the cause belongs to says what failed
    verdict = "" if record else _verdict(lines, best)
    if verdict:
        best = f"{clip(best, MAX_EVIDENCE - len(verdict) - 2)}; {verdict}"
    best = _LOCATION.sub("", best)  # where in a library the error was raised says nothing
    excerpt = clip(best.replace("`", "'"), MAX_EVIDENCE)
    if _WRAPPER.search(best) and not _CAUSE.search(excerpt) and not _FATAL.search(excerpt):
        cause = next((line for line in reversed(lines) if _CAUSE.search(line)), "")
        if cause:  # the sandbox's wrapper line, then what actually went wrong under it
            excerpt += f"; {clip(cause.replace('`', chr(39)), MAX_EVIDENCE // 2)}"
        else:
            own = _wrapped_error(text).replace("`", "'")
            if own and own not in excerpt:  # the command's own error, which the wrapper's
                excerpt += f"; {clip(own, MAX_EVIDENCE // 2)}"  # line cuts
    return excerpt


def _cause_clause(line: str, found: re.Match[str]) -> str:
    """The clause of a long ``line`` that ends in its cause ``found``: the line cut after the
    cause, and before it from the last ``": "`` that keeps the clause short (``…Failed to
    establish a new connection: [Errno -2] Name or service not known``); the whole line when the
    cause is near its start."""
    end = found.end()
    if end <= MAX_EVIDENCE // 2:
        return line
    head = line[: found.start()]
    start = found.start()
    for part in reversed(re.split(r"(?<=: )", head)):
        if found.start() - (start - len(part)) > _CLAUSE_CHARS:
            break
        start -= len(part)
    if start == found.start():  # no clause boundary near it: its words then
        start = max(0, line.find(" ", max(0, found.start() - _CLAUSE_CHARS)) + 1)
    return "…" + line[start:end].lstrip()


def _decisive(lines: list[str], errors: list[str], best: str) -> str:
    """The line that names the cause, in place of ``best`` when ``best`` says only that
    something failed or is about to be tried again: a sandbox's wrapper line whose own words are
    a lead-in (``failed in sandbox: Traceback (most recent call last):``) or a warning, or a
    retry warning itself. Then the cause is, in order: a line that says why the program
    stopped (``Fatal error …``), one that names an operating-system or network error (its
    clause, when the line is long: ``[Errno -2] Name or service not known`` after a retry
    warning's preamble), or the first error line that is not a lead-in. A sandbox's wrapper
    words are kept before it (they say the sandbox refused it)."""
    if "sandbox denied exec error" in best:
        return best  # the older one-line report: its streams are read by :func:`_wrapped_error`
    if _HTTP_STATUS.match(best):  # ``gh api``'s status line, then why (the scope it needs)
        return _with_next(lines, best, "; ")
    if _VERDICT.match(best):  # a check's verdict, then its first finding as the example
        return _with_next(lines, best, " ")
    wrapper = _WRAPPER.search(best)
    rest = best[wrapper.end() :].lstrip(" :") if wrapper else best
    prefix = best[: len(best) - len(rest)] if wrapper else ""
    warning = WARNING_LINE.match(rest) is not None
    if not (rest.endswith(":") or warning or (wrapper and not rest)):
        fatal = next((line for line in lines if _FATAL.search(line)), "")
        if not wrapper or not fatal or _CARRIER.search(rest):
            return best
        return prefix + fatal
    others = [line for line in lines if line != best]
    fatal = next((line for line in others if _FATAL.search(line)), "")
    if fatal:
        return prefix + fatal
    for line in [best, *others]:
        found = _CAUSE.search(line) or _CARRIER.search(line)
        if found:
            return prefix + _cause_clause(line, found)
    own = next(
        (e for e in errors if e != best and not e.endswith(":") and not WARNING_LINE.match(e)),
        "",
    )
    return prefix + own if own else best


_ERRNO_CODE = re.compile(r"\b(EPERM|EACCES|ENOENT|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|EADDRINUSE)\b")


def _worded(errors: list[str], best: str) -> str:
    """Node's own line for an error code, in place of a line that gives only the code: npm
    prints ``npm error code EACCES``, ``… syscall mkdir``, ``… path …`` and only then ``npm error
    Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/@google'``, the line that
    says what was refused and where (Node words every system error ``CODE: message, syscall
    'path'``)."""
    found = _ERRNO_CODE.search(best)
    if found is None or f"{found.group(1)}: " in best:
        return best
    worded = f"{found.group(1)}: "
    return next((line for line in errors if worded in line), best)


def _with_next(lines: list[str], best: str, joiner: str) -> str:
    """``best`` followed by the output's line after it, when there is one."""
    at = lines.index(best) if best in lines else -1
    return f"{best}{joiner}{lines[at + 1]}" if 0 <= at < len(lines) - 1 else best


_VERDICT = re.compile(r"(?:FAIL(?:ED)?|ERROR):\s+\S.{8,}:$")
"""A check's own verdict that leads into its findings ("FAIL: Found placeholder/stub
markers:"): what failed, in the check's words, though it ends in a colon; the lines after it
are its evidence (one of them may hold the word "error" by chance)."""


_HTTP_STATUS = re.compile(r"HTTP \d{3}: [\w ]{2,40}(?: \(\S+\))?$")
"""gh's report of a refused API call, ``HTTP 404: Not Found (https://api.github.com/user/keys)``:
the status only; the next line says why ("This API operation needs the "admin:public_key"
scope")."""


def _told(errors: list[str]) -> str | None:
    """The first error line that is not a lead-in (ending in a colon); when that line is only a
    wrapper's verdict (:data:`_SUMMARY`), the first line that says what went wrong instead,
    when the output has one (not a warning: a warning beside a failure is rarely its cause)."""
    first = next(
        (e for e in errors if not e.endswith(":") or _WRAPPER.search(e) or _VERDICT.match(e)),
        None,
    )
    if first is None or _SUMMARY.search(first) is None:
        return first
    cause = next(
        (
            e
            for e in errors
            if not e.endswith(":") and not _SUMMARY.search(e) and not WARNING_LINE.match(e)
        ),
        None,
    )
    return cause or first


_STREAMS = re.compile(r"\b(stdout|stderr): (.*?)(?=,\s*(?:stdout|stderr):|$)", re.DOTALL)
"""The command's own streams inside the older Codex report "failed in sandbox … sandbox denied
exec error, exit code: 1, stdout: …, stderr: …"."""


def _wrapped_error(text: str) -> str:
    """The command's own error inside a sandbox's older one-line report, when the report names
    no cause of its own (``""`` when none is said): the first error line of its stderr, else of
    its stdout when that says a few lines only (Nx's "Failed to start plugin worker.", bash's
    "syntax error near unexpected token"). A cause the report names (a permission, the
    network) says more, and is kept."""
    head = text[:3000]
    if "sandbox denied exec error" not in head:
        return ""
    streams = {name: body for name, body in _STREAMS.findall(head)}
    for name in ("stderr", "stdout"):
        said = [
            line
            for line in (_ANSI.sub("", raw).strip() for raw in streams.get(name, "").splitlines())
            if line
        ]
        if len(said) > WRAPPED_LINES:
            continue  # a log (a build, a test run): its error is the code's, found elsewhere
        for line in said:
            if ERROR_LINE.search(line) and not _WRAPPER.search(line):
                return line
    return ""


WRAPPED_LINES = 3
"""A stream this short inside the report is the command's message; a longer one is its log."""


def sandbox_wrapped(text: str) -> bool:
    """Whether a result is a sandbox's report wrapping the command's own output."""
    return _WRAPPER.search(text[:400]) is not None


def exit_status(text: str) -> int | None:
    """The exit code a tool result reports (Codex puts it first or in trailing metadata, Claude
    Code first), or ``None`` when it says none."""
    headed = headed_exit(text)
    if headed is not None:
        return headed
    match = _EXIT.search(text, 0, 400) or _EXIT.search(text, max(0, len(text) - 200))
    return int(match.group(1)) if match else None


_PATHLIKE = re.compile(r"[/\\.]")
_VERSION = re.compile(r"(?:==|@|:)[\w.+-]*\d[\w.+-]*$")
"""A version or tag pinned to a name (``pkg==1.2``, ``pkg@2``, ``image:1-24-trixie``): which
release is how the thing is asked for, not another thing."""


def _shell_words(call: str) -> list[str]:
    """The words of ``call`` as the shell splits them, a leading ``cd`` dropped (the words as
    typed when a quote is unbalanced)."""
    call = CD_PREFIX.sub("", call)
    try:
        return shlex.split(call, posix=True)
    except ValueError:
        return call.split()


def operands(call: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a shell command works on: its words after the program that are not options (and the
    values of ``--option=value``), as (all of them, the path-like ones), each path reduced to its
    last component and lower-cased, so ``cat "E:\\a\\b.json"`` and ``cat E:/a/b.json`` work on
    the same ``b.json``."""
    words = _shell_words(call)
    while words and _ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]  # ``FOO=1 cmd``: the assignments before the program, not ``pkg==1.2``
    if words[:1] in (["env"], ["/usr/bin/env"]):
        words = words[1:]
        while words and _ENV_ASSIGNMENT.match(words[0]):
            words = words[1:]
    out: set[str] = set()
    paths: set[str] = set()
    for word in words[1:]:
        if word.startswith("--") and "=" in word:
            word = word.split("=", 1)[1]  # an option's value names what it works on
        if not word or word[0] == "-" or word in ("|", "&&", ";", ">", "2>&1"):
            continue
        if "://" in word:  # a URL: its host and path are the target, not just its last part
            tail = word.split("://", 1)[1].rstrip("/").lower()
        else:
            tail = re.split(r"[/\\]", word.rstrip("/\\"))[-1].lower() or word.lower()
            tail = _bare(tail)
        tail = _VERSION.sub("", tail) or tail  # ``image:1-24`` and ``image:24`` are one image
        out.add(tail)
        if _PATHLIKE.search(word) and len(tail) > 2:
            paths.add(tail)
    return frozenset(out), frozenset(paths)


def _bare(name: str) -> str:
    """A file's name without what closes the code around it (``Path('/a/b.md')`` in a script, a
    summary's ``…``): ``b.md``."""
    return name.rstrip("'\")…") or name


def folders(call: str) -> dict[str, str]:
    """The folder each path of ``call`` names its file in, by the file's lower-cased base name
    (``app/api/a/route.ts`` → ``route.ts: a``), for the paths that name one: two calls on
    ``route.ts`` of two folders work on two files, though :func:`operands` reduces both to the
    base name so that one file spelt two ways stays one."""
    found: dict[str, str] = {}
    for word in (
        part for quoted in _shell_words(call)[1:] for part in quoted.split()
    ):  # inner commands too
        if "://" in word or word[:1] == "-":
            continue
        parts = [p for p in re.split(r"[/\\]", word.strip("'\"`")) if p and p != "."]
        if len(parts) >= 2:
            found[_bare(parts[-1].lower())] = parts[-2].lower()
    return found


def reason_of(text: str) -> str:
    """The agent's first sentence after a failure when it explains something, clipped: a cue
    of a cause (``because``, ``not``, ``must``) or of a fault named (``the script has encoding
    issues``). A sentence ending in a colon leads into something else (a list of next steps),
    not a cause, also when the line it ends is followed by what it leads into (a report's
    heading)."""
    line = text.strip().split("\n", 1)[0]
    sentence = re.split(r"(?<=[.!?。])\s?", " ".join(line.split()), maxsplit=1)[0]
    if sentence.rstrip("*_ ").endswith((":", "：")):
        return ""
    letters = [c for c in sentence if c.isalpha()]
    if len(sentence) >= 25 and sum(not c.isascii() for c in letters) > 0.3 * len(letters):
        return clip(sentence, 240)  # another language: no English cue words to look for (its
        # letters, not box-drawing banners or emoji, tell)
    if len(sentence) < 25 or not re.search(
        r"\b(?:so|because|since|doesn'?t|does not|isn'?t|not|instead|"
        r"need|must|requires?|only|issues?)\b",
        sentence,
        re.IGNORECASE,
    ):
        return ""
    return clip(sentence, 240)


CD_PREFIX = re.compile(
    r"^\s*cd\s+(?:/d\s+)?(?:\"[^\"\n]*\"|'[^'\n]*'|(?:\\ |[^\s;&])+)\s*(?:&&|;)\s*"
)
"""A leading change of directory (quoted, escaped, or cmd's ``cd /d``): not the program run."""


_PROXY = re.compile(r"^\s*rtk\s+(?:proxy\s+)?(?=[^\s-])")
"""``rtk`` (a proxy that agents are set up to put before their commands, to shorten what the
commands print) runs the command after it: ``rtk swift test`` runs ``swift test``, ``rtk proxy
find …`` runs ``find …`` unfiltered."""


def unproxied(call: str) -> str:
    """``call`` without a leading ``rtk`` / ``rtk proxy``."""
    return _PROXY.sub("", call, count=1) if "rtk" in call[:8] else call


_EXPORT_PREFIX = re.compile(
    r"^\s*export\s+(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*[A-Za-z_][A-Za-z0-9_]*=\S*\s*(?:&&|;)\s*"
)
"""A leading ``export VAR=value &&``: it sets the environment of the program run next."""


_QUOTED_ASSIGNMENT = re.compile(
    r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*')(?:\s*(?:;|&&)\s*|\s+))+"
)
"""Shell variables set to a quoted value before the command (``BRANCH="feat/x-$(date +'%H')";
git checkout -b "$BRANCH"``): the quotes may hold spaces, so split into words they would
name a piece of the value as the program."""


def program(call: str) -> str:
    """The program a shell command runs (``cd x && VAR=1 /usr/bin/env python y`` → ``python``,
    ``export GIT_INDEX_FILE=/tmp/i && git add`` → ``git``)."""
    call = unproxied(CD_PREFIX.sub("", call))
    if "=" in call[:80]:
        call = _QUOTED_ASSIGNMENT.sub("", call, count=1)
    if call.lstrip().startswith("export "):
        call = CD_PREFIX.sub("", _EXPORT_PREFIX.sub("", call))
    words = [w for w in call.split() if not _ENV_ASSIGNMENT.match(w)]
    if words[:1] == ["env"] or words[:1] == ["/usr/bin/env"]:
        words = words[1:]
    command = powershell_command(words)
    if command:
        return program(command)
    quoted = _QUOTED_PROGRAM.match(call.lstrip()) if words[:1] and words[0][:1] in "\"'" else None
    if quoted:  # a path with spaces: its last component, whichever separator
        return _WINDOWS_LAUNCHER.sub("", _PATH_SEPARATOR.split(quoted.group(2))[-1])
    return _WINDOWS_LAUNCHER.sub("", words[0].strip("\"'").rsplit("/", 1)[-1]) if words else ""


_QUOTED_PROGRAM = re.compile(r"([\"'])(.+?)\1")
_PATH_SEPARATOR = re.compile(r"[/\\]")
"""A program called by a quoted path, which may hold spaces (``"/c/Program Files/x/code.cmd"``)."""
_WINDOWS_LAUNCHER = re.compile(r"\.(?:cmd|bat)$", re.IGNORECASE)
"""Windows' batch launcher of a program (VS Code's ``bin/code.cmd``) runs that program."""


def normal(call: str) -> str:
    return _SPACES.sub(" ", call.strip().lower())


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "…"
