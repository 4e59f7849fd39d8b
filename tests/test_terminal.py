"""Terminal manners: what a person sees on a terminal, what a pipe gets, shell completion."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

import pytest

from .conftest import MEMSYNC_BIN, write_card

BOLD_RED = "\x1b[31m\x1b[1m"
SHOW_CURSOR, HIDE_CURSOR = "\x1b[?25h", "\x1b[?25l"


def on_terminal(*args, stdout_too=True, env=None, stdin_tty=False, seconds=30.0, until=()):
    """Run memsync with stderr (and stdout, unless told) on a pseudo-terminal; returns
    (exit code, what the terminal showed, what a piped stdout got). Reading stops when the
    process ends, when every text in `until` has been shown (a server that waits for input), or
    after `seconds`."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [MEMSYNC_BIN, *map(str, args)], stdin=slave if stdin_tty else subprocess.DEVNULL,
        stdout=slave if stdout_too else subprocess.PIPE, stderr=slave,
        env={**os.environ, **(env or {})},
    )
    os.close(slave)
    shown, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            shown += chunk
            if until and all(text.encode() in shown for text in until):
                break
        elif proc.poll() is not None:
            break
    if proc.poll() is None:  # a server waiting for input: enough has been shown
        proc.terminate()
    piped = ""
    if proc.stdout:
        with proc.stdout:
            piped = proc.stdout.read().decode()
    proc.wait(timeout=30)
    os.close(master)
    return proc.returncode, shown.decode(errors="replace").replace("\r\n", "\n"), piped


@pytest.fixture
def cards(vault, run_cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "the site root of nginx is /srv/www")
    write_card(vault, "03-Knowledge/login.md", "服务器登录", "生产服务器登录使用私钥，禁止密码")
    assert run_cli("index")[0] == 0


def test_index_on_a_terminal_shows_the_cursor_again_and_ends_the_bar_line(vault):
    for n in range(30):
        write_card(vault, f"n{n}.md", f"note {n}", "a body that is long enough to index")
    code, shown, _ = on_terminal("index")
    assert code == 0
    assert HIDE_CURSOR in shown and shown.rindex(SHOW_CURSOR) > shown.rindex(HIDE_CURSOR)
    after_bar = shown[shown.rindex(SHOW_CURSOR) + len(SHOW_CURSOR):]
    assert after_bar.startswith("\n") and after_bar.strip().startswith("30 scanned")
    assert "30/30" in shown  # the bar ends full: done/total (it shows count, rate and ETA)


def test_a_bar_with_nothing_to_do_ends_full_not_at_zero(vault):
    write_card(vault, "n.md", "note", "a body that is long enough to index")
    assert on_terminal("index")[0] == 0
    code, shown, _ = on_terminal("index")  # nothing changed: no file to read
    assert code == 0 and "1 unchanged" in shown
    bar = shown[:shown.rindex(SHOW_CURSOR)]
    assert bar.rstrip().endswith("1/1"), bar  # full, not 0/1


def test_matched_terms_are_highlighted_on_a_terminal_only(cards, run_cli):
    code, shown, _ = on_terminal("search", "nginx")
    assert code == 0 and f"{BOLD_RED}nginx" in shown
    code, shown, _ = on_terminal("search", "私钥")
    assert f"{BOLD_RED}私钥" in shown
    code, shown, _ = on_terminal("search", "登录服务器")  # found in the any tier: words apart
    assert code == 0 and f"{BOLD_RED}服务器登录" in shown
    code, shown, _ = on_terminal("search", "nginx", env={"NO_COLOR": "1"})
    assert code == 0 and "nginx" in shown and "\x1b[" not in shown
    code, out, _err = run_cli("search", "nginx")
    assert code == 0 and "\x1b[" not in out and "nginx" in out


def test_a_hit_found_by_a_head_of_the_query_word_shows_it_marked(vault, cli):
    write_card(vault, "03-Knowledge/db.md", "database", "the orders database runs on postgres 15 on db-prod")
    assert cli("index")[0] == 0
    code, shown, _ = on_terminal("search", "postgresql")
    assert code == 0 and f"{BOLD_RED}postgres\x1b[0m 15" in shown
    # where the whole word shows, only it is marked: the head elsewhere found nothing here
    write_card(vault, "03-Knowledge/db.md", "database", "the replica runs postgresql 16; the old box runs postgres 9")
    assert cli("index")[0] == 0
    code, shown, _ = on_terminal("search", "postgresql")
    assert code == 0 and f"{BOLD_RED}postgresql\x1b[0m 16" in shown and "runs postgres 9" in shown


def test_notes_go_to_stderr_and_pipes_get_only_results(cards, run_cli):
    code, out, err = run_cli("search", "kubernetes")
    assert code == 1 and out == "" and "no card matched" in err
    code, out, err = run_cli("search", "nginx")
    assert code == 0 and out.splitlines()[0].split()[1:3] == ["nginx", "root"]


def test_an_out_of_range_limit_says_it_was_clamped(cards, run_cli):
    code, out, err = run_cli("search", "nginx", "-n", "50", "--json")
    assert code == 0 and "-n 50 is outside 1-20: showing at most 20" in err
    assert out["hits"]  # stdout stays the JSON alone
    code, _out, err = run_cli("search", "nginx", "-n", "0")
    assert "showing at most 1" in err
    assert "outside" not in run_cli("search", "nginx", "-n", "5")[2]


def test_a_query_that_looks_like_an_option_gets_the_double_dash_hint(cards, run_cli):
    code, _out, err = run_cli("search", "-x")
    assert code == 2 and "memsync search -- -x" in err
    code, out, _err = run_cli("search", "--json", "--", "-nginx")
    assert code == 0 and out["hits"]  # searched for, not refused


def test_mcp_started_on_a_terminal_says_what_it_is_on_stderr(home, vault):
    said = ("speaks the Model Context Protocol", "memsync init")
    code, shown, _ = on_terminal("mcp", stdout_too=False, stdin_tty=True, until=said)
    assert "speaks the Model Context Protocol" in shown and "memsync init" in shown


@pytest.mark.parametrize("shell, marker", [
    ("bash", "_memsync_completion"), ("zsh", "#compdef memsync"), ("fish", "complete --no-files --command memsync"),
])
def test_shell_completion_scripts(shell, marker):
    proc = subprocess.run([MEMSYNC_BIN], env={**os.environ, "_MEMSYNC_COMPLETE": f"{shell}_source"},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and marker in proc.stdout


def test_bash_completion_completes_commands_and_options():
    env = {**os.environ, "_MEMSYNC_COMPLETE": "bash_complete", "COMP_WORDS": "memsync sea", "COMP_CWORD": "1"}
    proc = subprocess.run([MEMSYNC_BIN], env=env, capture_output=True, text=True, timeout=30)
    assert "plain,search" in proc.stdout.splitlines()
    env.update(COMP_WORDS="memsync search --inc", COMP_CWORD="2")
    proc = subprocess.run([MEMSYNC_BIN], env=env, capture_output=True, text=True, timeout=30)
    assert "plain,--include-invalid" in proc.stdout.splitlines()


# --- issue 19: the small ones a person meets at a terminal ------------------------------------

def _complete(words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {**os.environ, "_MEMSYNC_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    proc = subprocess.run([MEMSYNC_BIN], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines() if line.startswith("plain,")]


def test_completion_offers_kinds_adapters_and_the_indexs_sources_and_tags(vault, run_cli):
    write_card(vault, "03-Knowledge/nginx.md", "nginx root", "the site root of nginx is /srv/www",
               tags="[nginx, ops]")
    write_card(vault, "03-Knowledge/net.md", "network", "the office network is 10.1.0.0/16", tags="[network]")
    assert run_cli("index")[0] == 0
    assert _complete("memsync search x --kind kn") == ["knowledge"]
    assert "mistake" in _complete("memsync update 5 --kind ")
    assert _complete("memsync sources --add a --adapter ") == ["agents", "cursor", "markdown", "mcp-memory"]
    assert _complete("memsync search x --source ") == ["vault"]
    assert _complete("memsync search x --tag n") == ["network", "nginx"]
    assert _complete("memsync search x --tag ") == ["network", "nginx", "ops"]


def test_completion_without_an_index_offers_nothing_and_says_nothing(home):
    assert _complete("memsync search x --tag ") == []
    assert _complete("memsync search x --source ") == []


@pytest.mark.parametrize(("args", "says"), [
    (["search", "x", "--vault", "/tmp/v"], "memsync --vault /tmp/v search x"),
    (["search", "nginx", "root", "--home=/tmp/h", "-n", "3"], "memsync --home /tmp/h search nginx root -n 3"),
    (["capture", "--title", "t", "--db", "/tmp/x.db"], "memsync --db /tmp/x.db capture --title t"),
])
def test_a_global_option_after_the_command_says_where_it_goes(run_cli, args, says):
    code, _out, err = run_cli(*args)
    assert code == 2 and f"global options go before the command: {says}" in err
    assert "--`" not in err  # not the advice for a query that starts with a dash


def test_a_query_starting_with_a_dash_still_gets_the_double_dash_advice(run_cli):
    code, _out, err = run_cli("search", "--nope")
    assert code == 2 and "memsync search -- --nope" in err


def _trash_two(vault, run_cli):
    for name in ("a", "b"):
        write_card(vault, f"03-Knowledge/{name}.md", name, f"card {name} that goes to the trash now")
    assert run_cli("index")[0] == 0
    for word in ("a", "b"):
        _code, found, _err = run_cli("search", "card", word, "--json")
        card = next(h for h in found["hits"] if h["title"] == word)
        assert run_cli("delete", card["id"])[0] == 0


def test_purge_all_asks_on_a_terminal_and_no_keeps_the_trash(vault, run_cli):
    _trash_two(vault, run_cli)
    master, slave = pty.openpty()
    proc = subprocess.Popen([MEMSYNC_BIN, "delete", "--purge", "--all"], stdin=slave, stdout=slave,
                            stderr=slave, env=os.environ.copy())
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 30
    while b"for good?" not in shown and time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            shown += os.read(master, 65536)
    assert b"delete the 2 file(s) in the trash for good?" in shown
    os.write(master, b"n\n")
    assert proc.wait(timeout=30) == 1
    os.close(master)
    assert len(list((vault / ".trash").rglob("*.md"))) == 2


def test_purge_all_with_yes_on_a_terminal_asks_nothing_and_prints_the_count(vault, run_cli):
    _trash_two(vault, run_cli)
    code, shown, _piped = on_terminal("delete", "--purge", "--all", "--yes", stdin_tty=True)
    assert code == 0 and "for good?" not in shown
    assert "deleted 2 file(s) in the trash for good" in shown
    assert not list((vault / ".trash").rglob("*.md"))


def test_control_characters_in_a_note_are_shown_not_sent_to_the_terminal(vault, run_cli):
    """Terminal output pasted into a note keeps its escape codes; printed as they are, they
    clear the screen or set the window's title. A file name may hold them too."""
    body = "build log \x1b[2J\x1b]0;pwned\x07 quokka \x00 done\r\nnext\tline\n"
    (vault / "log.md").write_text(body)
    (vault / "esc\x1b[31m.md").write_bytes(b"quokka \xff\n")  # reported: not UTF-8
    run_cli("index")
    code, out, _ = run_cli("search", "quokka")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\x00" not in out
    assert "␛[2J␛]0;pwned␇ quokka ␀ done" in out and "esc␛[31m.md" in out
    card = run_cli("search", "--json", "quokka")[1]["hits"]
    assert any("\x1b[2J" in h["snippet"] for h in card)  # JSON carries the text as it is
    code, shown, _ = run_cli("show", next(h["id"] for h in card if h["path"] == "log.md"))
    assert "\x1b" not in shown and "␛]0;pwned␇ quokka ␀ done\nnext\tline" in shown
    for command in ("stats", "doctor"):
        out = run_cli(command)[1]
        assert "esc␛[31m.md" in out and "\x1b" not in out
