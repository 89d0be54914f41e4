"""Issue 24, forge precision: a long error is quoted by the line that names its cause, and the
failures of one session that share a cause are one lesson, not one per failing call."""

from __future__ import annotations

from swarmq.forge._calls import error_excerpt

_RETRIES = "".join(
    f"WARNING: Retrying (Retry(total={n}, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object at 0x7f00aa>: Failed to establish a new connection: [Errno -3] "
    "Temporary failure in name resolution')': /simple/requests/\n"
    for n in (2, 1, 0)
)


def test_retry_warnings_give_way_to_the_resolver_error_they_carry() -> None:
    output = (
        _RETRIES + "ERROR: Could not find a version that satisfies the requirement requests (from "
        "versions: none)\nERROR: No matching distribution found for requests\n"
    )
    excerpt = error_excerpt(output)
    assert "Temporary failure in name resolution" in excerpt
    assert "Retry(total" not in excerpt


def test_a_sandboxed_retry_warning_gives_way_to_its_cause() -> None:
    excerpt = error_excerpt("failed in sandbox: " + _RETRIES + "ERROR: no distribution\n")
    assert excerpt.startswith("failed in sandbox: …")
    assert "Temporary failure in name resolution" in excerpt


def test_a_sandboxed_traceback_is_quoted_by_its_root_exception() -> None:
    output = (
        "failed in sandbox: Traceback (most recent call last):\n"
        '  File "/srv/tool/render.py", line 12, in load\n'
        "    import yaml\n"
        "ModuleNotFoundError: No module named 'yaml'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/tool/render.py", line 40, in <module>\n'
        "SystemExit: render.py cannot read its templates without PyYAML; install it first, then "
        "run this again\n"
    )
    assert "No module named 'yaml'" in error_excerpt(output)


def test_a_fatal_line_beats_the_errors_a_program_went_on_past() -> None:
    output = (
        "failed in sandbox: Error: can't open log file /var/log/tiled/tiled.log! Using stderr.\n"
        "Error reading configuration file '/etc/tiled/extra.conf'\n"
        "Fatal error [server.c:88]: Can't bind local socket\n"
        "shutting down\n"
    )
    excerpt = error_excerpt(output)
    assert excerpt == "failed in sandbox: Fatal error [server.c:88]: Can't bind local socket"
