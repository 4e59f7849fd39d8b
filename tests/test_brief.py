"""`memsync brief` on a vault with two projects, through the real CLI and a real index: the right
cards in the right order, within the budget, never a flagged secret, and what changed since this
agent's last brief."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time

import pytest

from memsync.brief import tokens
from memsync.brief.project import claude_folder_name
from memsync.brief.select import first_line, priority_rank, shorten
from memsync.store.index import Index

from .conftest import MEMSYNC_BIN, write_card

SECRET = "password = hunter2xyz9 for the shop database"


@pytest.fixture
def two_projects(tmp_path, vault, cli):
    """Cards of `shop` (by frontmatter, tag, folder, its AGENTS.md and its Claude Code memory)
    and of `blog`, plus general cards read often."""
    shop = tmp_path / "code" / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / "AGENTS.md").write_text("# Shop agents\n\nRun `make check` before every commit.\n")
    blog = tmp_path / "code" / "blog"
    (blog / ".git").mkdir(parents=True)
    claude = tmp_path / "dot-home" / ".claude"
    memory = claude / "projects" / claude_folder_name(str(shop)) / "memory"
    memory.mkdir(parents=True)
    (memory / "payments.md").write_text("Payments go through the sandbox key in staging only.\n")
    other = claude / "projects" / claude_folder_name(str(blog)) / "memory"
    other.mkdir(parents=True)
    (other / "drafts.md").write_text("Drafts live in the drafts branch of the blog.\n")

    write_card(vault, "02-Projects/shop-deploy.md", "Shop deploy", "Deploy with make deploy from the ops box.\n",
               project="shop", priority="high")
    write_card(vault, "03-Knowledge/shop-cache.md", "Shop cache", "Pages are cached in redis for ten minutes.\n",
               tags=["shop", "redis"])
    write_card(vault, "02-Projects/shop/orders.md", "Orders table", "# Orders table\n\nOrders are kept for seven years.\n")
    write_card(vault, "02-Projects/shop/登录.md", "登录服务器", "先登录跳板机，再用 ssh 进入订单服务器。\n")
    write_card(vault, "02-Projects/shop/db.md", "Shop database", SECRET + "\n", project="shop")
    write_card(vault, "02-Projects/blog-theme.md", "Blog theme", "The blog uses the hugo-paper theme.\n",
               project="blog")
    write_card(vault, "03-Knowledge/blog-posts.md", "Post format", "Posts are Markdown with a date.\n",
               tags=["blog"])
    write_card(vault, "03-Knowledge/git.md", "Git habits", "Rebase, never merge main into a branch.\n")
    write_card(vault, "03-Knowledge/ssh.md", "SSH config", "Hosts are in ~/.ssh/config.d, one file a host.\n")
    cfg = tmp_path / "home" / "config.json"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(json.dumps({"sources": [
        {"name": "claude", "adapter": "agents", "path": str(claude)},
        {"name": "code", "adapter": "agents", "path": str(tmp_path / "code")},
    ]}))
    assert cli("index")[0] == 0
    index = Index(tmp_path / "home" / "memsync.db")
    ids = {row["title"]: row["id"] for row in index.cards()}
    index.close()
    for _ in range(3):
        cli("show", ids["Git habits"])
    cli("show", ids["SSH config"])
    return {"shop": shop, "blog": blog, "home": claude.parent, "ids": ids}


def brief(cli, where, *args):
    code, data = cli("brief", "--project", where, "--json", *args)
    assert code == 0, data
    return data


def titles(data, key):
    return [item["title"] for section in data["sections"] if section["key"] == key for item in section["items"]]


@pytest.fixture
def brief_home(two_projects, monkeypatch):
    monkeypatch.setenv("HOME", str(two_projects["home"]))  # Claude Code's folders live under it
    return two_projects


def test_the_brief_holds_the_projects_cards_by_priority_and_none_of_the_other_project(brief_home, cli):
    data = brief(cli, brief_home["shop"], "--peek")
    shop = titles(data, "project")
    assert shop[0] == "Shop deploy"  # priority: high
    assert set(shop) == {"Shop deploy", "Shop cache", "Orders table", "登录服务器", "AGENTS", "payments"}
    assert not {"Blog theme", "Post format", "drafts"} & set(shop) and "Blog" not in data["text"]
    assert titles(data, "used") == ["Git habits", "SSH config"]  # most read first
    blog = titles(brief(cli, brief_home["blog"], "--peek"), "project")
    assert set(blog) == {"Blog theme", "Post format", "drafts"}


def test_each_item_is_id_title_and_first_line(brief_home, cli):
    text = brief(cli, brief_home["shop"], "--peek")["text"]
    ids = brief_home["ids"]
    assert f"- {ids['Orders table']} Orders table — Orders are kept for seven years." in text.splitlines()
    assert text.rstrip().splitlines()[-1].startswith("Before this session ends, save what you learnt")
    assert "memory_capture" in text.splitlines()[-1] and "memory_search" in text


def test_a_flagged_secret_is_held_back_and_counted(brief_home, cli):
    data = brief(cli, brief_home["shop"], "--peek")
    assert "Shop database" not in data["text"] and "hunter2" not in data["text"]
    assert data["held_back"] == 1 and "Held back: 1 card" in data["text"]


def test_the_budget_is_kept_and_no_item_is_cut(brief_home, cli, vault):
    for n in range(40):
        write_card(vault, f"02-Projects/shop/note-{n:02}.md", f"Shop note {n:02}",
                   f"Shop fact number {n} about the checkout flow and its retries.\n")
    cli("index")
    whole = brief(cli, brief_home["shop"], "--peek", "--budget", "5000")["text"].splitlines()
    for budget in (200, 300, 450, 1200):
        data = brief(cli, brief_home["shop"], "--peek", "--budget", budget)
        assert tokens.estimate(data["text"]) <= budget, budget
        items = [line for line in data["text"].splitlines() if line.startswith("- ")]
        assert items and all(line in whole for line in items)  # each one whole
        assert data["text"].rstrip().splitlines()[-1].startswith("Before this session ends")
    small = brief(cli, brief_home["shop"], "--peek", "--budget", 300)["text"]
    assert "## This project (" in small  # says how many it left out


def test_a_budget_below_the_fixed_lines_is_refused(brief_home, cli):
    code, data = cli("brief", "--project", brief_home["shop"], "--budget", 50, "--json")
    assert code == 2 and "too small" in data["error"]["message"]


def test_a_project_folder_that_does_not_exist_is_refused(brief_home, cli, tmp_path):
    code, data = cli("brief", "--project", tmp_path / "no-such-project", "--json")
    assert code == 2 and "no such folder; give the project's folder" in data["error"]["message"]
    (tmp_path / "notes.txt").write_text("a file, not a project")
    code, data = cli("brief", "--project", tmp_path / "notes.txt", "--json")
    assert code == 2 and "notes.txt: not a folder; give the project's folder" in data["error"]["message"]


def test_cjk_counts_one_token_a_character():
    assert tokens.estimate("登录服务器") == 5
    assert tokens.estimate("abcdefgh") == 2 and tokens.estimate("abcdefghi") == 3
    assert tokens.estimate("用prometheus管理，好。") == 2 + 3 + 2 + 2  # CJK 4, punctuation 2, 10 Latin
    assert tokens.estimate("") == 0


def test_the_same_index_gives_the_same_brief(brief_home, cli):
    first = brief(cli, brief_home["shop"], "--peek")["text"]
    assert brief(cli, brief_home["shop"], "--peek")["text"] == first
    assert brief(cli, brief_home["shop"])["text"] == first  # recording the mark changes nothing yet


def test_changed_since_the_last_brief_after_an_update_and_a_supersede(brief_home, cli):
    ids = brief_home["ids"]
    first = brief(cli, brief_home["shop"])
    assert first["since"] is None and titles(first, "changed") == []
    marks = json.loads((brief_home["home"].parent / "home" / "brief.json").read_text())["last_brief"]
    first_mark = marks[f"cli:{brief_home['shop']}"]
    assert cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for five minutes now.")[0] == 0
    assert cli("supersede", ids["Git habits"], "--title", "Git habits 2",
               "--body", "Merge main into a branch with a merge commit now.")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    data = brief(cli, brief_home["shop"])
    assert data["since"] == first_mark
    project = {i["title"]: i for s in data["sections"] if s["key"] == "project" for i in s["items"]}
    assert project["Shop cache"]["note"] == "updated"  # a project card: shown in its section
    assert project["Shop cache"]["line"] == "Pages are cached in redis for five minutes now."
    changed = {i["title"]: i for s in data["sections"] if s["key"] == "changed" for i in s["items"]}
    new_id = changed["Git habits 2"]["id"]
    assert changed["Git habits 2"]["note"] == f"new, supersedes {ids['Git habits']}"
    assert changed["Git habits"]["note"] == f"superseded by {new_id} Git habits 2"
    assert changed["Git habits"]["line"] == ""
    assert "## Changed since your last brief, " in data["text"]
    again = brief(cli, brief_home["shop"])  # nothing changed since the brief just made
    assert titles(again, "changed") == [] and "(updated)" not in again["text"]


def test_each_agent_has_its_own_last_brief(brief_home, cli):
    ids = brief_home["ids"]
    brief(cli, brief_home["shop"])
    cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for an hour at night.")
    cli("brief", "--project", brief_home["shop"], "--hook", "codex", stdin="{}")
    assert "(updated)" in brief(cli, brief_home["shop"])["text"]  # the CLI's own mark is older


def test_a_hook_run_prints_the_clients_context_json(brief_home, cli):
    code, out = cli("brief", "--hook", "claude-code",
                    stdin=json.dumps({"cwd": str(brief_home["shop"] / "sub"), "source": "startup"}))
    assert code == 0
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and "Shop deploy" in context["additionalContext"]


def test_a_hook_under_a_broken_index_exits_0_with_one_line_on_stderr(brief_home, home, tmp_path):
    (home / "memsync.db").write_bytes(b"this is not a database" * 100)
    for f in home.glob("memsync.db-*"):
        f.unlink()
    proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "gemini"], input=json.dumps({"cwd": str(tmp_path)}),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {}
    assert len(proc.stderr.strip().splitlines()) == 1 and "no brief this time" in proc.stderr


def test_a_hook_kept_out_by_a_load_says_one_line_and_exits_0(brief_home, home, tmp_path):
    """A load through a rollback journal holds the index: the wait notice a search would print is
    not the hook's to say; its own line is."""
    loader = sqlite3.connect(home / "memsync.db", isolation_level=None)
    try:
        assert loader.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        loader.execute("BEGIN EXCLUSIVE")
        proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "gemini"], input=json.dumps({"cwd": str(tmp_path)}),
                              capture_output=True, text=True, timeout=30)
    finally:
        loader.execute("ROLLBACK")
        loader.close()
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}
    assert len(proc.stderr.strip().splitlines()) == 1 and "waiting for it to finish" not in proc.stderr


def test_a_hook_without_an_index_exits_0(tmp_path):
    proc = subprocess.run([MEMSYNC_BIN, "brief", "--hook", "codex"], input="not json",
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "{}" and "run `memsync index`" in proc.stderr


@pytest.mark.parametrize(("value", "rank"), [("high", 3), ("P0", 4), ("p2", 2), ("5", 4), ("3", 2), ("1", 0),
                                             ("low", 0), (None, 0), ("soon", 0), ("Critical", 4),
                                             ("P3", 0), ("p4", 0)])
def test_priority_words_and_numbers(value, rank):
    assert priority_rank(value) == rank


def test_the_first_line_skips_headings_fences_and_the_title():
    body = "# Title\n\n```sh\nmake x\n```\n- [ ] Check the **logs** first\nmore"
    assert first_line(body, "Title") == "Check the **logs** first"
    assert first_line("Title\n\n> quoted  text", "title") == "quoted text"
    assert shorten("word " * 50, 10).endswith("…") and tokens.estimate(shorten("word " * 50, 10)) <= 10
    assert tokens.estimate(shorten("登" * 100, 12)) <= 12


def test_a_section_whose_query_stopped_says_its_count_is_a_lower_bound():
    from memsync.brief.select import select

    rows = [{"id": n, "source": "vault", "path": f"{n}.md", "title": f"Card {n}", "kind": None,
             "priority": None, "created": None, "updated": None, "invalid_at": None,
             "superseded_by": None, "supersedes": None, "reads": 100 - n} for n in range(1, 40)]
    texts = {r["id"]: (f"Body of card {r['id']} with a fact.", None) for r in rows}
    chosen = select([], [], rows, texts, {}, None, lambda s, p: None, 60, capped=frozenset({"used"}))
    used = chosen.sections["used"]
    assert used.capped and 0 < len(used.items) < used.total
    from memsync.brief.select import heading_text

    assert heading_text("used", len(used.items), used.total, None, used.capped).endswith(f"of {used.total}+)")


def test_a_slow_brief_is_given_up_at_the_time_limit():
    import io
    import threading

    from memsync.brief.hookrun import run

    release = threading.Event()
    started = time.monotonic()
    out, problem, stuck = run("claude-code", lambda where: release.wait(30) and "late",
                              io.StringIO('{"cwd": "/tmp"}'), limit=0.2)
    release.set()
    assert time.monotonic() - started < 5
    assert out == "{}" and stuck and "took longer than 0.2 s" in problem


def test_a_cards_summary_is_its_line(brief_home, cli, vault):
    write_card(vault, "02-Projects/shop/refunds.md", "Refunds", "# Refunds\n\nA long story about refunds.\n",
               summary="Refunds over 100 EUR need a second approver.")
    cli("index")
    items = {i["title"]: i for s in brief(cli, brief_home["shop"], "--peek")["sections"] for i in s["items"]}
    assert items["Refunds"]["line"] == "Refunds over 100 EUR need a second approver."


def test_a_secret_in_the_title_of_a_newer_card_is_not_shown_beside_the_old_one(brief_home, cli):
    """The old card is shown (superseded by ...) while the new one is held back: the note names
    the new card by its id alone."""
    ids = brief_home["ids"]
    brief(cli, brief_home["shop"])
    key = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    code, new = cli("supersede", ids["Shop cache"], "--title", f"Shop cache key {key}",
                    "--body", "The cache now lives in the managed redis of the shop.", "--json")
    assert code == 0
    time.sleep(1.01 - time.time() % 1)
    data = brief(cli, brief_home["shop"])
    assert key not in data["text"] and key not in json.dumps(data)
    notes = [i["note"] for s in data["sections"] for i in s["items"] if i["title"] == "Shop cache"]
    assert notes and all(n == f"superseded by {new['id']}" for n in notes)


def test_a_project_named_beyond_ascii_finds_its_cards_in_any_case(brief_home, cli, vault, tmp_path):
    """SQLite folds ASCII letters only: `Über` and `über` once missed each other."""
    uber = tmp_path / "code" / "Über"
    (uber / ".git").mkdir(parents=True)
    write_card(vault, "02-Projects/uber-plan.md", "Über plan", "The plan of the Über project.\n", project="über")
    write_card(vault, "02-Projects/ÜBER/notes.md", "Über notes", "Notes kept in a folder of its name.\n")
    assert cli("index")[0] == 0
    assert sorted(titles(brief(cli, uber, "--peek"), "project")) == ["Über notes", "Über plan"]


def test_a_change_written_in_another_time_zone_is_still_told(brief_home, run_cli, monkeypatch):
    """The mark is written 14 hours ahead of UTC, the update 11 hours behind, a moment later:
    25 hours apart on the clock, so always on an earlier day (up to two)."""
    ids, shop = brief_home["ids"], brief_home["shop"]
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    assert run_cli("brief", "--project", shop)[0] == 0
    time.sleep(1.01 - time.time() % 1)
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")
    assert run_cli("update", ids["Shop cache"], "--body", "Pages are cached in redis for an hour now.")[0] == 0
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    code, data, _err = run_cli("brief", "--project", shop, "--json")
    project = {i["title"]: i for s in data["sections"] if s["key"] == "project" for i in s["items"]}
    assert code == 0 and project["Shop cache"]["note"] == "updated"


@pytest.mark.parametrize("where", ["home", "root"])
def test_the_home_or_the_root_names_no_project(brief_home, cli, where):
    # every source lies inside them: none of its cards is "this project" for that alone
    folder = brief_home["home"] if where == "home" else brief_home["home"].anchor
    memory = brief_home["home"] / ".claude" / "projects" / claude_folder_name(str(folder)) / "memory"
    memory.mkdir(parents=True)
    (memory / "dotfiles.md").write_text("The dotfiles are linked with stow from ~/dotfiles.\n")
    assert cli("index")[0] == 0
    data = brief(cli, folder, "--peek")
    assert titles(data, "project") == ["dotfiles"]  # what Claude Code kept for sessions there
    assert {"Shop deploy", "Git habits"} <= set(titles(data, "used"))  # still the most used


def test_a_project_named_by_a_wikilink_or_a_path_from_the_home_finds_its_cards(brief_home, cli, vault):
    site = brief_home["home"] / "code" / "site"
    (site / ".git").mkdir(parents=True)
    named = {"tilde": "~/code/site", "tilde-slash": "~/code/site/", "link": "[[site]]",
             "link-alias": "[[Projects/site|The site]]", "path": f"{site}/",
             "other-link": "[[site-old]]", "other-path": "~/code/site-old"}
    for title, value in named.items():
        write_card(vault, f"03-Knowledge/{title}.md", title, f"A card whose project is {value}.\n",
                   project=json.dumps(value))  # quoted, as Obsidian writes a link in a property
    assert cli("index")[0] == 0
    assert sorted(titles(brief(cli, site, "--peek"), "project")) == [
        "link", "link-alias", "path", "tilde", "tilde-slash"]


@pytest.mark.parametrize("value, key", [
    ("Blog", "blog"), ("[[blog]]", "blog"), ("[[Projects/blog.md|The Blog]]", "blog"),
    ("[[blog#Plans]]", "blog"), ("~/code/blog/", "/home/me/code/blog"), ("~", "/home/me"),
    ("/", "/"), ("~other/x", "~other/x"), ("[[a]] and [[b]]", "[[a]] and [[b]]"),
])
def test_a_project_value_as_the_brief_compares_it(value, key):
    from memsync.brief.project import project_key

    assert project_key(value, "/home/me") == key


def test_an_edit_of_another_agents_file_is_told_by_the_files_time(brief_home, cli, tmp_path):
    # CLAUDE.md, AGENTS.md and Claude Code's memories carry no `updated` date of their own
    gemini = tmp_path / "code" / "GEMINI.md"
    gemini.write_text("## Gemini Added Memories\n- the linter is ruff-9\n")
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    assert brief(cli, brief_home["shop"])["since"] is None
    time.sleep(1.01 - time.time() % 1)
    agents = brief_home["shop"] / "AGENTS.md"
    drafts = next(brief_home["home"].glob(".claude/projects/*/memory/drafts.md"))
    agents.write_text("# Shop agents\n\nRun `make check` and `make lint` before every commit.\n")
    drafts.write_text("Drafts live in the drafts branch of the blog, published on Fridays.\n")
    gemini.write_text("## Gemini Added Memories\n- the linter is ruff-9\n- the formatter is black-3\n")
    assert cli("index")[0] == 0
    data = brief(cli, brief_home["shop"])
    notes = {i["title"]: i["note"] for s in data["sections"] for i in s["items"]}
    assert notes["AGENTS"] == "changed"  # a project card: in the project section
    assert notes["drafts"] == "changed"
    # of a file of many cards (the Gemini bullets) the time does not say which changed: the file
    # is told, with its cards
    assert sorted(titles(data, "changed")) == ["code:GEMINI.md", "drafts"]
    assert notes["code:GEMINI.md"] == "changed: one or more of its 2 cards"


def add_graph_source(tmp_path, graph) -> None:
    """A memory graph (mcp-memory) at `graph` added to the home's sources."""
    config = tmp_path / "home" / "config.json"
    settings = json.loads(config.read_text())
    settings["sources"].append({"name": "graph", "adapter": "mcp-memory", "path": str(graph)})
    config.write_text(json.dumps(settings))


def write_people(graph, observations: dict[str, list[str]]) -> None:
    """The graph's memory.jsonl: a `person` entity for each name, with its observations."""
    lines = [{"type": "entity", "name": name, "entityType": "person", "observations": seen}
             for name, seen in observations.items()]
    (graph / "memory.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


GITHUB_TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz" + "0123456789"


def write_flagged_graph(graph, bob_also: str = "") -> None:
    """Four people, the first named with a GitHub token (a title the secrets scanner flags);
    `bob_also`: one more observation of Bob's."""
    people = [f"Deploy token {GITHUB_TOKEN}", "Bob", "Carol", "Dave"]
    write_people(graph, {name: [f"{name[:6]} works on the shop", *([bob_also] if bob_also and name == "Bob" else [])]
                         for name in people})


def changed_file_item(cli, brief_home, tmp_path) -> tuple[dict, dict, dict]:
    """Once the graph changed: `memsync index`, then the brief, its one changed item, and the
    graph's card ids by title."""
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice
    data = brief(cli, brief_home["shop"])
    [item] = [i for s in data["sections"] if s["key"] == "changed" for i in s["items"]]
    index = Index(tmp_path / "home" / "memsync.db")
    ids = {row["title"]: row["id"] for row in index.cards() if row["source"] == "graph"}
    index.close()
    return data, item, ids


def test_an_edit_of_one_entity_of_a_memory_graph_tells_the_file(brief_home, cli, tmp_path):
    graph = tmp_path / "graph"
    graph.mkdir()
    people = ["Alice", "Bob", "Carol", "Dave"]

    def write_graph(alice: list[str]) -> None:
        write_people(graph, {name: alice if name == "Alice" else [f"{name} works on the shop"] for name in people})

    write_graph(["Alice likes tea"])
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    write_graph(["Alice likes tea", "Alice moved to Berlin"])  # one entity of four changed
    data, item, ids = changed_file_item(cli, brief_home, tmp_path)
    assert item["title"] == "graph:memory.jsonl" and item["id"] is None and item["file"]
    assert item["note"] == "changed: one or more of its 4 cards"
    assert item["cards"] == [ids[name] for name in people[:3]]  # the first few, for memory_get
    assert f"- graph:memory.jsonl (changed: one or more of its 4 cards) — {ids['Alice']} Alice;" in data["text"]
    time.sleep(1.01 - time.time() % 1)
    assert "graph:memory.jsonl" not in titles(brief(cli, brief_home["shop"]), "changed")  # told once


def test_a_flagged_title_in_a_changed_file_is_held_back_and_not_pointed_to(brief_home, cli, tmp_path):
    """A file's item names its first cards; one whose title the scanner flags is counted held
    back, and its id is left out of `cards` as its title is left out of the text."""
    graph = tmp_path / "graph"
    graph.mkdir()
    key = GITHUB_TOKEN
    write_flagged_graph(graph)
    add_graph_source(tmp_path, graph)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    before = brief(cli, brief_home["shop"])["held_back"]
    time.sleep(1.01 - time.time() % 1)
    write_flagged_graph(graph, "Bob moved to Berlin")
    data, item, ids = changed_file_item(cli, brief_home, tmp_path)
    assert key not in json.dumps(data)
    assert item["cards"] == [ids["Bob"], ids["Carol"]]  # as the line names them
    assert item["line"] == f"{ids['Bob']} Bob; {ids['Carol']} Carol; …"
    assert data["held_back"] == before + 1 and "Held back: " in data["text"]


def query_plan(tmp_path, sql: str) -> str:
    """SQLite's plan for a brief query over the newest FILES_LOOKED changes, in a new index."""
    from memsync.store import brief as store

    index = Index(tmp_path / "plan.db")
    try:
        return " | ".join(row[3] for row in index._conn.execute(
            "EXPLAIN QUERY PLAN " + sql, (0, 20, store.FILES_LOOKED)))
    finally:
        index.close()


def test_the_changed_files_are_found_from_the_newest_file_down(tmp_path):
    # Most notes of a vault carry no `updated` date: a plan that began from those cards read
    # every one of them on each brief (160-200 ms at 100,000 cards).
    from memsync.store import brief as store

    plan = query_plan(tmp_path, store.CHANGED_FILES)
    assert "SEARCH file_changes USING COVERING INDEX file_changes_by_time" in plan, plan
    assert "cards_updated" not in plan and "SCAN c" not in plan, plan


def test_the_changed_files_of_many_cards_are_found_through_indexes_only(tmp_path):
    # A memory graph holds up to some 200,000 entities: its cards are counted and named through
    # cards_file, never read row by row, and only the newest changes are looked through.
    from memsync.store import brief as store

    plan = query_plan(tmp_path, store.CHANGED_MANY)
    assert "SEARCH file_changes USING COVERING INDEX file_changes_by_time" in plan, plan
    assert "SEARCH c USING COVERING INDEX cards_file" in plan and "SCAN c" not in plan, plan


def test_only_the_newest_content_changes_are_looked_through_for_undated_cards(tmp_path, monkeypatch):
    # When every file changed since the last brief (a checkout) and the cards carry dates, a
    # look at every change for the few without one read every card (117 ms at 100,000 cards).
    from memsync.store import brief as store

    index = Index(tmp_path / "bound.db")
    try:
        conn = store.connection(index)
        with conn:
            for n in range(4):  # n0 the oldest change and the one card without an `updated` date
                conn.execute("INSERT INTO file_changes VALUES ('vault', ?, ?)", (f"n{n}.md", 100 + n))
                conn.execute("INSERT INTO cards (id, source, path, file, kind, title, body, updated) "
                             "VALUES (?, 'vault', ?, ?, 'note', ?, 'text', ?)",
                             (n + 1, f"n{n}.md", f"n{n}.md", f"n{n}", None if n == 0 else "2026-01-01"))
        monkeypatch.setattr(store, "FILES_LOOKED", 4)
        assert [r["path"] for r in store.changed_files(conn, 0, 20)] == ["n0.md"]
        monkeypatch.setattr(store, "FILES_LOOKED", 3)  # the three newest changes hold no such card
        assert store.changed_files(conn, 0, 20) == []
    finally:
        index.close()


def test_a_file_dated_in_the_future_is_told_changed_once_not_at_every_brief(brief_home, cli, vault):
    # A clock set wrong or an archive from a machine ahead: the file's time is always after the
    # last brief, but the file changed once, when it was written.
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    ahead = vault / "03-Knowledge/clock-ahead.md"
    ahead.write_text("A note written on a laptop whose clock ran years ahead, about rsync flags.\n")
    os.utime(ahead, (time.time() + 3 * 365 * 86400,) * 2)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)  # a change in the second of a brief is told twice: not here
    assert titles(brief(cli, brief_home["shop"]), "changed") == ["clock-ahead"]
    time.sleep(1.01 - time.time() % 1)
    assert cli("index")[0] == 0  # read again (its time is after the read): still no change
    assert "clock-ahead" not in titles(brief(cli, brief_home["shop"]), "changed")


def test_a_file_touched_with_its_content_as_it_was_is_no_change(brief_home, cli, vault):
    # `touch`, a `git checkout` to a branch and back, a sync that rewrites a file unchanged:
    # the file's time moves, its content (all the brief shows of it) does not.
    note = vault / "03-Knowledge/untouched.md"
    note.write_text("A note without dates, about the staging database on port 5433.\n")
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    brief(cli, brief_home["shop"])
    time.sleep(1.01 - time.time() % 1)
    os.utime(note)
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    assert "untouched" not in titles(brief(cli, brief_home["shop"]), "changed")
    note.write_text(note.read_text() + "It moved to port 5434.\n")  # a real edit still is one
    assert cli("index")[0] == 0
    time.sleep(1.01 - time.time() % 1)
    assert titles(brief(cli, brief_home["shop"]), "changed") == ["untouched"]


def test_a_p3_card_counts_as_low_and_a_listed_priority_is_reported(tmp_path, vault, cli):
    """docs/brief.md: `low`, `P3` and lower count as none; P3 ranked above a low card. A priority
    written as a list was dropped without a word."""
    project = tmp_path / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    for name in ("a", "b", "c"):  # the ids decide among cards of the same rank
        write_card(vault, f"02-Projects/{name}.md", f"Shop {name}", f"The {name} part of the shop.\n",
                   project="shop")
    assert cli("index")[0] == 0
    index = Index(tmp_path / "home" / "memsync.db")
    by_id = [row["path"] for row in sorted(index.cards(), key=lambda row: row["id"])]
    index.close()
    for path, priority in zip(by_id, ("low", "P3", "[high]"), strict=True):
        text = (vault / path).read_text().replace("project: shop", f"project: shop\npriority: {priority}")
        (vault / path).write_text(text)
    assert cli("index")[0] == 0
    order = titles(brief(cli, project, "--peek"), "project")
    assert order == [f"Shop {p.split('/')[-1][:-3]}" for p in by_id]
    problems = {p["path"]: p["message"] for p in cli("stats", "--json")[1]["problems"]}
    assert problems == {by_id[2]: "priority '[high]' is not one value, so the card has no priority; "
                                  "write one word or number, such as high or P1"}
