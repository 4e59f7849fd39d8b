"""What the brief tests share: a home of two projects, `shop` and `blog` (`two_projects`, and
`brief_home`, which sets HOME to it), a brief of it through the CLI, and the titles of a section.
A test module takes the fixtures by naming them: `two_projects = briefing.two_projects`."""

from __future__ import annotations

import json

import pytest

from memsync.brief.project import claude_folder_name
from memsync.store.index import Index

from .conftest import write_card

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
