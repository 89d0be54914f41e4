"""What a failing call's error says about the machine on its own, and which programs stand in
for one another.

Some errors are lessons whatever the agent does next: ``pnpm: command not found`` says that
``pnpm`` is not installed here, ``listen EPERM`` that the sandbox refuses the port, ``Could not
resolve host`` that there is no network, ``the input device is not a TTY`` that the agent has no
terminal. The next session needs the fact even when no retry fixed anything (or the agent gave
up), so the lesson states it in words a reader (and the project-fact rule) can use.

A missing program is only cured by something that does its job: a program of the same family
(``python3`` for ``python``, ``npm`` for ``pnpm``, ``grep``/``find``/``ls`` for ``rg``), a call
that names the missing program (``python3 -m pytest``), or a call on the same target. Whatever
else the agent runs next is the next step of its task, not the way round.
"""

from __future__ import annotations

import re

from swarmq.forge._calls import LITERAL_GLOB, NOT_FOUND_TRANSLATED
from swarmq.forge._gitbash import cmd_idioms
from swarmq.knowledge.msys import rewritten_argument

_PS_NOT_FOUND = re.compile(
    r"ObjectNotFound: \((\w[\w.+-]*):String\) \[\], CommandNotFoundException|"
    r"^(\w[\w.+-]*) : .*\(CommandNotFoundException\)$"
)
"""PowerShell's error record for a command it cannot find, the same in every display language
(German: 'Die Benennung "sed" wurde nicht … erkannt'), in the output ("ObjectNotFound:
(sed:String) [], CommandNotFoundException") or as forge's excerpt of it ("sed : Die Benennung …
(CommandNotFoundException)")."""
_MISSING_PROGRAM = (
    re.compile(r"command not found: ([\w.+-]+)"),
    re.compile(r"(?:^|[\s:])([A-Za-z_][\w.+-]*): command not found\b"),
    re.compile(
        r"^(?:/bin/|/usr/bin/)?(?:sh|dash|bash)(?::\s*(?:line )?\d+)?: ([\w.+-]+): not found\b"
    ),
    re.compile(r"(?:^|[\s:])([A-Za-z_][\w.+-]*): (?:" + NOT_FOUND_TRANSLATED + ")"),
    re.compile(r"^'?([\w.+-]+)'? is not recognized as"),
    # uv run: "error: Failed to spawn: `flake8`" (the program run, not uv, is missing)
    re.compile(r"Failed to spawn: [`']([\w.+-]+)[`']"),
    # PowerShell: "The term 'sed' is not recognized as a name of a cmdlet, function, …"
    re.compile(r"The term '([\w.+-]+)' is not recognized as (?:the|a) name of a cmdlet"),
    _PS_NOT_FOUND,
    # a tool naming the program it needs: "[explore] cargo was not found. Install a Rust toolchain"
    re.compile(
        r"\b([A-Za-z][\w.+-]*) (?:was |is )?not found[.;,:]?\s+(?:please\s+)?install\b", re.I
    ),
)
_DIRECT_MISSING = re.compile(r"No such file or directory \(os error 2\)")
"""Codex running argv directly: the program itself does not exist."""
_PIPELINE = re.compile(r"\||&&|;")
_NO_TERMINAL = re.compile(
    r"not a tty|no tty present|a terminal is required|must have a tty|is not a terminal",
    re.IGNORECASE,
)
_NO_NETWORK = re.compile(
    r"could not resolve|\bENOTFOUND\b|\bEAI_AGAIN\b|getaddrinfo|network is unreachable|"
    r"temporary failure in name resolution",
    re.IGNORECASE,
)
_REFUSED = re.compile(
    r"operation not permitted|permission denied|\bEPERM\b|\bEACCES\b|sandbox ?denied|"
    r"access (?:is )?denied",
    re.IGNORECASE,
)
_NOT_STARTED = re.compile(r"ApplicationFailedException|\bNativeCommandFailed\b")
"""PowerShell's record of a program Windows would not start (in every display language)."""
_GLOBBED = re.compile(r"\b(zsh|bash|fish)\b[^\n]{0,12}" + LITERAL_GLOB, re.IGNORECASE)
"""The shell that read a literal path as a pattern, when its error names it (``zsh:1:``; Claude
Code's Bash tool runs zsh through ``eval``, printing ``(eval):1:``)."""
PORT_TAKEN = re.compile(
    r"address already in use|\bEADDRINUSE\b|\bport (\d+) is (?:not available|already in use)",
    re.IGNORECASE,
)
"""A server that cannot listen because its port is taken (uvicorn's ``[Errno 98] … address
already in use``, Node's ``EADDRINUSE``, Streamlit's ``Port 8501 is not available``)."""
_PORT_NUMBER = re.compile(r"(?<=[:, ])(\d{4,5})\b")
_SPAWNED = re.compile(r"spawn (\S+) E[A-Z]+")
"""Node's error when a tool it runs cannot be started (Claude Code's Grep running ``rg``)."""

FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"python", "python2", "python3", "py", "pip", "pip3", "uv", "pipx", "poetry"}),
    frozenset({"npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "corepack", "node"}),
    frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack", "git-grep", "find", "fd", "ls"}),
    frozenset({"docker", "docker-compose", "podman", "nerdctl"}),
    frozenset({"pytest", "py.test"}),
    frozenset({"cargo", "rustup", "nix"}),
    frozenset({"go", "gofmt"}),
    frozenset({"cat", "head", "tail", "sed", "less", "more", "type", "get-content", "gc", "nl"}),
)
"""Programs that do one another's job when one is missing (a version suffix is ignored)."""
_VERSION_SUFFIX = re.compile(r"[\d.]+$")
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
"""Package managers that run a project's scripts: a program such a script runs that is missing
(``sh: 1: vite: not found`` under ``npm run build``) is a dependency not installed yet."""


def _base(program: str) -> str:
    stripped = _VERSION_SUFFIX.sub("", program.lower().removesuffix(".exe"))
    return stripped or program.lower()


def same_family(missing: str, other: str) -> bool:
    """Whether ``other`` may do the job of the missing ``missing`` (``python`` → ``python3``)."""
    a, b = _base(missing), _base(other)
    if a == b:
        return True
    return any(a in family and b in family for family in FAMILIES)


STORE_ALIAS_EXIT = "Exit code 49"
"""All Windows' App Execution Alias for Python (``WindowsApps\\python.exe``, installed with the
system) says when it is run with arguments and no Store Python is installed: nothing on stdout or
stderr, exit status 49."""


def store_alias(program: str, output: str) -> bool:
    """Whether ``output`` is a ``python``/``python3`` call answered by Windows' Store alias, not
    an interpreter (a bare "Exit code 49"; the agent's tool adds nothing else)."""
    return (
        len(output) < 40
        and output.strip().removeprefix("Error: ") == STORE_ALIAS_EXIT
        and _base(program) == "python"
    )


def family(program: str) -> str:
    """One name for a program and those that do its job (``gofmt`` → ``go``), for telling one
    failure from another: the same refusal of ``go`` and ``gofmt`` is one fact, of ``git`` and
    a project's script two."""
    base = _base(program)
    group = next((f for f in FAMILIES if base in f), None)
    return min(group) if group else base


def missing_program(program: str, error: str, call: str = "") -> str:
    """The program an error says is not there (``""`` when it says no such thing). An argv run
    directly that does not exist names no program when ``call`` is a pipeline or a list (which
    of its programs is missing is not said)."""
    if store_alias(program, error):
        return program
    for pattern in _MISSING_PROGRAM:
        match = pattern.search(error)
        name = next((group for group in match.groups() if group), "") if match else ""
        if name and name.lower() not in ("command", "the", "file", "line"):
            return name
    if _DIRECT_MISSING.search(error) and not _PIPELINE.search(call):
        return program
    return ""


def not_started(program: str, error: str) -> str:
    """The program an error says Windows would not start (``""`` when it says no such thing):
    like a missing one, whatever does its job next is the way round."""
    return program if program and _NOT_STARTED.search(error) else ""


def literal_glob(error: str) -> bool:
    """Whether the shell read a literal path as a pattern (its fix does not make the fact moot:
    every later call on such a path needs the quotes)."""
    return re.search(LITERAL_GLOB, error, re.IGNORECASE) is not None


_CODEX_TIMEOUT = re.compile(r"command timed out after (\d{4,5}) milliseconds")
TOO_LARGE = re.compile(r"File content \(\d+ tokens\) exceeds maximum allowed tokens")
"""Claude Code's Read refusing a file over its token limit (the same file is refused again in
every session that reads it whole)."""
_PS_HEREDOC = re.compile(
    r"Missing file specification after redirection operator|The '<' operator is reserved",
    re.IGNORECASE,
)


_SEARCH_MISSING = re.compile(r"^(?:rg|grep): ([^:\n]+): No such file or directory", re.MULTILINE)


def pattern_as_path(program: str, error: str, call: str) -> str:
    """The second pattern a search read as a path (``rg -n "def a" -n "def b" core.py``: "rg: def
    b: No such file or directory"), ``""`` when the error names no such word. rg and grep take
    one positional pattern; every later word is a path, and a word with a space in it that the
    call quoted is a pattern the agent meant, not a file name it looked for."""
    if program not in ("rg", "grep"):
        return ""
    for found in _SEARCH_MISSING.finditer(error):
        word = found.group(1).strip()
        if (
            " " in word
            and not re.search(r"[/\\]", word)
            and (f'"{word}"' in call or f"'{word}'" in call)
        ):
            return word
    return ""


_UNEXPANDED = re.compile(r"^(?:rg|grep): ([^\n]*?[*?][^\n]*?): .*\(os error 123\)", re.MULTILINE)
"""Windows refusing a file name with a wildcard in it (``rg: src\\Controllers\\*.cs: IO error for
operation on …: The filename, directory name, or volume label syntax is incorrect. (os error
123)``, in the system's language): the shell passed the pattern on unexpanded."""


def unexpanded_wildcard(program: str, error: str) -> str:
    """The path with a wildcard that a search got unexpanded (``""`` when none): PowerShell and
    cmd do not expand ``*`` for a native program, and rg does not either, so on Windows a path
    pattern reaches the file system as a name."""
    if program not in ("rg", "grep"):
        return ""
    found = _UNEXPANDED.search(error)
    return found.group(1) if found else ""


NOT_GRANTED = re.compile(
    r"requested permissions? to (?:use ([\w.-]+)|(\w+))[^\n]{0,300}?haven'?t granted it yet",
    re.IGNORECASE,
)
"""Claude Code's answer when a tool needs a permission the session was not given ("Claude
requested permissions to use WebSearch, but you haven't granted it yet", "… to write to
/workspace/report.md, …"): in a headless or unattended run nobody grants it, so every retry
is refused alike."""


def not_granted(error: str) -> str:
    """The permission ``error`` says was never granted (``use WebSearch``, ``write``), or
    ``""``."""
    found = NOT_GRANTED.search(error)
    if found is None:
        return ""
    return f"use {found.group(1)}" if found.group(1) else found.group(2).lower()


_NO_SYSTEMD = re.compile(
    r"System has not been booted with systemd as init system|"
    r"Failed to (?:get D-Bus connection|connect to bus): (?:Operation not permitted|Host is down)"
)
"""systemctl on a machine whose first process is not systemd: a container, Google Cloud Shell,
WSL without systemd enabled. The second form (no bus to systemd) is only read beside a call of
systemd's own tools."""
_SYSTEMD_CALL = re.compile(r"\b(?:systemctl|journalctl|loginctl|hostnamectl|timedatectl)\b")

_UNIT = re.compile(
    r"\bsystemctl\s+(?:--\S+\s+)*(?:start|enable|restart|reload|status)\s+(?:--\S+\s+)*"
    r"([\w@.-]+)"
)
"""The unit a systemctl call was asked to start (``enable --now n8n`` → ``n8n.service``)."""


def init_fact(error: str, call: str) -> str:
    """What a failure says about the machine's init system (``""`` when nothing): with no
    systemd no service is started, enabled or restarted through systemctl, whatever the unit
    says, so the next session must run the program another way from its first attempt."""
    found = _NO_SYSTEMD.search(error)
    if found is None or (
        not found.group(0).startswith("System") and not _SYSTEMD_CALL.search(call)
    ):
        return ""
    unit = _UNIT.search(call)
    name = unit.group(1) if unit else ""
    if name and "." not in name:
        name += ".service"
    what = f"`{name}`" if name else "services"
    return (
        "there is no systemd here (PID 1 is not systemd: a container, Cloud Shell, or WSL "
        f"without systemd), so `systemctl` cannot start, enable or restart {what}: run the "
        "program directly in the background (`nohup … &`), under a process manager (pm2, "
        "supervisord), or with `service NAME start` where an init script exists"
    )


_NO_MATCH = re.compile(r"\bno matches found: ([^\n]*[*?][^\n]*)")
_SEGMENT_END = re.compile(r"&&|\|\||;|\||\n")


def unmatched_glob_stops(error: str, call: str) -> str:
    """The pattern zsh refused to run ``rm -f`` for (``""`` when none): ``rm -f cache/*.npz &&
    python train.py`` never trains. In bash a pattern that matches nothing is passed on as
    written and ``rm -f`` ignores a missing operand, so the call succeeds; zsh stops it, and the
    rest of its chain. Any other command on an unmatched pattern fails in bash too (``ls``
    cannot access it), and a ``ls pattern*`` that matched nothing is a search that found
    nothing, an answer: neither is said here."""
    found = _NO_MATCH.search(error)
    if found is None:
        return ""
    pattern = found.group(1).strip()
    at = call.find(pattern)
    if at < 0:
        return ""
    starts = [m.end() for m in _SEGMENT_END.finditer(call, 0, at)]
    segment = call[starts[-1] if starts else 0 : at]
    return pattern if re.match(r"\s*(?:sudo\s+)?rm\s+-\w*f", segment) else ""


def tool_rule(program: str, error: str, call: str = "") -> str:
    """A rule of the agent's own tools, or of the machine, that ``error`` shows, stated whether
    or not a retry worked (the retry's call does not say what changed): Codex's
    ``apply_patch`` wants every line of an added file prefixed with ``+``; its shell tool stops
    a call after 10 seconds unless the call sets ``timeout_ms``; PowerShell has no heredoc;
    there is no systemd to start a service. ``""`` when none."""
    if "is not a valid hunk header" in error and "*** Add File:" in call:
        return (
            "in an apply_patch `*** Add File:` hunk every line of the new file needs a `+` prefix"
        )
    timeout = _CODEX_TIMEOUT.search(error)
    if timeout and 9000 <= int(timeout.group(1)) <= 12500:
        return (
            "the shell tool stops a call after about 10 seconds unless it sets `timeout_ms` "
            "(e.g. 120000)"
        )
    second = pattern_as_path(program, error, call) if "No such file" in error else ""
    if second:
        return (
            f"`{program}` takes one pattern: a later one (`{second}`) is read as a path; give "
            "each pattern with `-e PATTERN` (or join them into one regex `A|B`)"
        )
    wildcard = unexpanded_wildcard(program, error) if "os error 123" in error else ""
    if wildcard:
        return (
            f"the shell here (PowerShell/cmd on Windows) passes `*` in a path to `{program}` "
            "unexpanded: give the directory and filter the files with a glob (`-g '*.ext'`, "
            "`--glob`)"
        )
    if TOO_LARGE.search(error):
        name = re.split(r"[/\\]", call.strip())[-1] or "the file"
        return f"`{name}` is too large to read at once: read it in parts with offset and limit"
    wanted = not_granted(error) if "granted" in error else ""
    if wanted:
        return (
            f"the permission to {wanted} is not granted in this setup: retrying does not help "
            "(it must be allowed in the settings, or the work done without it)"
        )
    init = init_fact(error, call) if "systemd" in error or "bus" in error else ""
    if init:
        return init
    if "<<" in call and _PS_HEREDOC.search(error):
        return (
            "PowerShell has no heredoc (`<<`): send a patch with the apply_patch tool itself, "
            "or text through a here-string (@' … '@)"
        )
    return ""


_CRLF = re.compile(r"\$'\\r'|\bbash\\r\b|\bsh\\r\b|\r: command not found")
"""A script saved with Windows line endings: bash reads the ``\\r`` as part of each command
(``$'\\r': command not found``) or of the interpreter's name (``/usr/bin/env: 'bash\\r'``)."""
_NO_SUBCOMMAND = (
    re.compile(r"unknown command [\"'](?P<word>[^\"'\s]+)[\"'] for [\"'](?P<parent>[^\"']+)[\"']"),
    re.compile(r"unrecognized subcommand [\"'`](?P<word>[^\"'`\s]+)[\"'`]"),
    re.compile(r"No such command [\"'`](?P<word>[^\"'`\s]+)[\"'`]"),
    re.compile(r"invalid choice: [\"'](?P<word>[^\"'\s]+)[\"'] \(choose from"),
    re.compile(r"(?P<parent>[\w.-]+): [\"'](?P<word>[^\"'\s]+)[\"'] is not a [\w.-]+ command"),
    re.compile(r"^Unknown command: [\"'](?P<word>[^\"'\s]+)[\"']", re.MULTILINE),
)
"""How command-line frameworks say a subcommand does not exist: cobra (``unknown command
"pending" for "gt deacon"``), clap, click, argparse, git and docker, npm."""


def crlf_script(error: str) -> bool:
    """Whether ``error`` is bash failing on a script's Windows line endings."""
    return _CRLF.search(error) is not None


def _asked_of(word: str, call: str) -> str:
    """The command the missing subcommand ``word`` was asked of in ``call``: the word before it
    in the step that names it (``npx @railway/cli projects`` → ``@railway/cli``, ``source
    .venv/bin/activate && uv python3 -c …`` → ``uv``), so a runner or a set-up step before the
    program is not named for it; ``""`` when the call does not name it so."""
    for step in re.split(r"&&|\|\||;|\|", call):
        words = step.split()
        if word in words[1:]:
            before = words[words.index(word) - 1]
            if not before.startswith("-") and "=" not in before:
                return (
                    before.rsplit("/", 1)[-1]
                    if "/" in before and not before.startswith("@")
                    else before
                )
    return ""


def missing_subcommand(program: str, error: str) -> tuple[str, str] | None:
    """The subcommand ``error`` says the program has not, and the command it was asked of
    (``("pending", "gt deacon")``); ``None`` when the error says no such thing. Which commands
    an installed program has is a fact of this machine: the next session's agent, trained on
    another version's documentation, calls the same missing command again."""
    for pattern in _NO_SUBCOMMAND:
        found = pattern.search(error)
        if found:
            groups = found.groupdict()
            return found.group("word"), groups.get("parent") or program
    return None


_SWITCH = re.compile(r"(?:^|\s)/([A-Za-z][A-Za-z?]{0,15})(?=\s|$)")
"""A Windows program's switch in a call (``/F``, ``/Query``; not ``//F``, not a path)."""
_LEGACY_CODEC = re.compile(
    r"'(gbk|gb2312|gb18030|big5|cp9\d\d|cp125\d|shift_jis|euc[-_]kr|charmap)' codec can't "
    r"(?:en|de)code",
    re.IGNORECASE,
)
"""Python reading or printing text in a Windows code page, not UTF-8: the console's or the
locale's encoding, so every script that prints or opens non-ASCII text fails alike here."""


def rewritten_switch(call: str, output: str) -> tuple[str, str] | None:
    """The Windows switch of ``call`` that Git Bash (MSYS) turned into a path before the
    program saw it, and the path the program complained of: ``/F`` became ``F:/`` (a drive),
    ``/Query`` became ``E:/Git/Query`` (under Git's install root). The program's error is in
    the console's code page, often unreadable, so the rewritten path is the only sign."""
    if "/" not in call or ":/" not in output:
        return None
    for found in _SWITCH.finditer(call):
        word = found.group(1)
        if len(word) == 1 and f"'{word}:/'" in output:
            return word, f"{word}:/"
        if len(word) > 1:
            shown = re.search(rf"[A-Za-z]:/(?:[^'\n/]+/)*{re.escape(word)}(?=['\s])", output)
            if shown:
                return word, shown.group(0)
    return None


_PS_TERM = re.compile(r"The term '([^'\s()]+)' is not recognized as")
"""PowerShell's error for a command it cannot find, in English (the name is what it ran)."""


def _subexpression(call: str, error: str) -> str:
    """The name PowerShell ran as a command because it stood in parentheses in an unquoted
    path (``Get-Content src\\app\\(dashboard)\\layout.tsx`` runs ``dashboard``), ``""`` when the
    error is no such thing: the parentheses of a route group are a subexpression to PowerShell
    unless the path is quoted."""
    term = _PS_TERM.search(error) or _PS_NOT_FOUND.search(error)
    if term is None:
        return ""
    name = next(group for group in term.groups() if group)
    at = call.find(f"({name})")
    while at >= 0:
        before = call[:at]
        if (
            before.count('"') % 2 == 0
            and before.count("'") % 2 == 0
            and before.endswith(("\\", "/"))
        ):
            return name
        at = call.find(f"({name})", at + 1)
    return ""


_CMDLET = re.compile(
    r"^(?:Get|Set|Select|Where|ForEach|Test|New|Remove|Out|Write|Invoke|Start|Stop|Copy|Move|"
    r"Measure|Sort|Format|Import|Export|ConvertTo|ConvertFrom|Add|Clear|Join|Split|Resolve|"
    r"Expand|Compress|Rename|Group|Read)-[A-Z][A-Za-z]+$"
)
"""A PowerShell cmdlet's name (verb-noun: ``Get-ChildItem``, ``Select-String``)."""


def cmdlet_in_bash(missing: str, error: str) -> bool:
    """Whether bash (or another POSIX shell) was asked to run a PowerShell cmdlet
    (``/usr/bin/bash: line 1: Get-ChildItem: command not found``): on Windows the Bash tool is
    Git Bash, and the cmdlet is there, only in another shell."""
    return (
        bool(missing)
        and _CMDLET.match(missing) is not None
        and "not recognized" not in error
        and "CommandNotFoundException" not in error
    )


_PS5_CHAIN = re.compile(
    r"The token '(?:&&|\|\|)' is not a valid statement separator|"
    r"FullyQualifiedErrorId : InvalidEndOfLine"
)
"""Windows PowerShell 5.1 refusing bash's ``&&``/``||`` (PowerShell 7 has them): the English
message, or the error id every display language prints."""


_ELEVATION = re.compile(
    r"requested operation requires elevation|\bERROR_ELEVATION_REQUIRED\b", re.IGNORECASE
)
"""Windows refusing a call that needs administrator rights (error 740): the shell the agent
was started in is not elevated, and no retry from it changes that."""


def windows_fact(call: str, error: str) -> str:
    """What a failure says about the machine's shell or console, whatever fixed it (every
    later call meets it again): PowerShell running a parenthesised path component as a command,
    Windows PowerShell 5.1 refusing ``&&``, Git Bash rewriting ``/switch`` or a root-like
    argument into a path, zsh stopping a command on a pattern that matches nothing, or Python's
    text in a legacy code page (GBK, cp1252) instead of UTF-8. ``""`` when none. (Named for its
    first facts, all Windows'; the failure miner opens a failure on it before any other test,
    which is what a shell's fact needs.)"""
    term = _subexpression(call, error) if "(" in call else ""
    if term:
        return (
            f"PowerShell reads `({term})` in an unquoted path as a subexpression and runs "
            f"`{term}` as a command: quoting the path fixes it (`-LiteralPath` when the path "
            "also holds brackets such as `[id]`)"
        )
    switch = rewritten_switch(call, error)
    if switch:
        word, shown = switch
        return (
            f"Git Bash rewrites the Windows switch `/{word}` into a path ({shown}): "
            f"write it with a double slash (`//{word}`)"
        )
    argument = rewritten_argument(call, error)
    if argument:
        head = argument[0].split("/", 1)[0]
        cure = f"as a relative path (`./{head}/…`)" if head else "with a double slash (`//…`)"
        return (
            f"Git Bash (MSYS path conversion) rewrites an argument beginning with `{head}/` into "
            f"a path under Git's install root: run the call with `MSYS_NO_PATHCONV=1` or write "
            f"it {cure}"
        )
    if _ELEVATION.search(error):
        return (
            "the agent's shell on this Windows machine is not elevated (not run as "
            "administrator): a command that needs admin rights fails on every retry; the user "
            "runs it in an elevated terminal (or starts the agent from one)"
        )
    if _PS5_CHAIN.search(error) and ("&&" in call or "||" in call):
        return (
            "the shell here is Windows PowerShell 5.1, which has no `&&` or `||` (nor bash "
            "syntax): chain with `;` and test `$?` (`cmd1; if ($?) { cmd2 }`), or run the line "
            "with `pwsh` (PowerShell 7) or `bash -c`"
        )
    unmatched = unmatched_glob_stops(error, call) if "no matches found" in error else ""
    if unmatched:
        return (
            f"the shell is zsh, where a pattern that matches nothing (`{unmatched}`) is an error "
            "that stops the command, even `rm -f`, and the rest of an `&&` chain: add zsh's "
            "`(N)` qualifier (`rm -f cache/*.tmp(N)`), use `find … -delete`, or run the line "
            "with `bash -c`"
        )
    codec = _LEGACY_CODEC.search(error)
    if codec:
        name = codec.group(1).upper()
        return (
            f"Python's text encoding here is {name}, not UTF-8: open files with "
            "`encoding='utf-8'` and set `PYTHONIOENCODING=utf-8` (or "
            "`sys.stdout.reconfigure(encoding='utf-8')`) before printing non-ASCII text"
        )
    return cmd_idioms(call, error)


def environment_fact(program: str, error: str, call: str = "") -> str:
    """A sentence stating what ``error`` (of a call running ``program``) says about the machine,
    or ``""`` when it says nothing about it."""
    missing = missing_program(program, error, call)
    if missing and store_alias(program, error):
        return (
            f"`{missing}` here is Windows' Store alias in WindowsApps (it prints nothing and "
            "exits 49), not an interpreter: run an installed one (another name, or python.exe by its "
            "full path)"
        )
    windows = windows_fact(call, error)
    if windows:
        return windows
    if cmdlet_in_bash(missing, error):
        return (
            f"`{missing}` is a PowerShell cmdlet and this shell is bash (on Windows, Git Bash): "
            "run it with the PowerShell tool, or `powershell -Command` (`pwsh`)"
        )
    if (
        missing
        and _base(program) in _SCRIPT_RUNNERS
        and not any(_base(missing) in group for group in FAMILIES)
    ):
        return (
            f"`{missing}`, which the project's `{program}` script runs, is not installed here: "
            f"the project's dependencies are missing (run `{program} install` first)"
        )
    if missing:
        return f"`{missing}` is not installed here (not on PATH)"
    if literal_glob(error):
        shell = _GLOBBED.search(error)
        named = shell.group(1).lower() if shell else "zsh"
        return f"quote paths with brackets or parentheses here ({named} reads them as patterns)"
    if _NO_TERMINAL.search(error):
        if program == "sudo" or "sudo" in error.lower():
            return "sudo cannot ask for a password here (the agent has no terminal)"
        return f"`{program}` needs a terminal (a TTY), which the agent does not have here"
    port = PORT_TAKEN.search(error)
    if port:
        number = port.group(1) or next(iter(_PORT_NUMBER.findall(error)), "")
        which = f"port {number}" if number else "the port"
        return (
            f"{which} is already in use here (the app may be already running from an earlier "
            f"start): check what listens on it (`ss -ltnp`, `lsof -i :{number or 'PORT'}`) "
            "before starting it again, or start it on a free port"
        )
    if _NO_NETWORK.search(error):
        return f"`{program}` cannot reach the network here"
    if error.startswith("bwrap:") and not _REFUSED.search(error):
        return (
            "Codex's sandbox (bwrap) cannot start here, so every sandboxed command fails: run "
            "commands with escalated permissions"
        )
    if _NOT_STARTED.search(error):
        return (
            f"`{program}` cannot be started here (Windows refuses to run it): use another program"
        )
    spawned = _SPAWNED.search(error)
    if spawned and _REFUSED.search(error):
        name = re.split(r"[/\\]", spawned.group(1))[-1]
        return f"`{name}` may not be run here (sandbox or permissions)"
    if _REFUSED.search(error):
        return f"`{program}` is refused here (sandbox or permissions)"
    if _CRLF.search(error):
        return "the script has Windows (CRLF) line endings, which bash cannot run: convert it to LF"
    absent = missing_subcommand(program, error)
    if absent and program:
        parent = _asked_of(absent[0], call) if absent[1] == program else ""
        return f"the `{parent or absent[1]}` installed here has no `{absent[0]}` command"
    return ""


__all__ = [
    "FAMILIES",
    "PORT_TAKEN",
    "STORE_ALIAS_EXIT",
    "TOO_LARGE",
    "cmdlet_in_bash",
    "crlf_script",
    "environment_fact",
    "family",
    "init_fact",
    "literal_glob",
    "missing_program",
    "missing_subcommand",
    "not_started",
    "pattern_as_path",
    "rewritten_argument",
    "rewritten_switch",
    "same_family",
    "store_alias",
    "tool_rule",
    "unexpanded_wildcard",
    "windows_fact",
]
