"""`memsync consolidate`: a plan that changes nothing, --apply through a journal, --undo byte for byte."""

from __future__ import annotations

import json

import pytest

from memsync import notes
from memsync.lifecycle import sentences

from .conftest import write_card
from .test_lifecycle_audit import EN, ZH, tree_digest

LONG = "The backup job runs nightly at two and keeps thirty days. It writes to the NAS. " * 9


def _vault(vault, cli, home, rules=True):
    write_card(vault, "03-Knowledge/deploy.md", "deploy", EN)
    write_card(vault, "03-Knowledge/deploy-notes.md", "deploy notes", EN + "Check the logs after a reload.")
    write_card(vault, "03-Knowledge/部署.md", "部署", ZH + "记得看日志。")
    write_card(vault, "03-Knowledge/部署笔记.md", "部署笔记", ZH)
    write_card(vault, "03-Knowledge/backup.md", "backup", LONG)
    write_card(vault, "03-Knowledge/oops.md", "oops", "A mistake filed under knowledge, about rsync flags.", kind="mistake")
    if rules:
        home.mkdir(exist_ok=True)
        (home / "config.json").write_text(json.dumps({"folder_rules": {"mistake": "08-Mistakes"}}))
    cli("index")


def vault_bytes(vault) -> dict:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def test_the_dry_run_changes_nothing(cli, vault, home):
    _vault(vault, cli, home)
    before = tree_digest(vault, home)
    code, data = cli("consolidate", "--json")
    assert code == 0 and data["applied"] is False and data["files"] > 0
    assert len(data["merges"]) == 2 and [s["path"] for s in data["summaries"]] == ["03-Knowledge/backup.md"]
    assert [(m["from"], m["to"]) for m in data["moves"]] == [("03-Knowledge/oops.md", "08-Mistakes/oops.md")]
    code, text = cli("consolidate")
    assert "nothing changed" in text
    assert tree_digest(vault, home) == before


def test_apply_merges_summarizes_and_moves_then_undo_restores_every_byte(cli, vault, home):
    _vault(vault, cli, home)
    original = vault_bytes(vault)
    merged_sentences = {rel: sentences.split(notes.parse(data, rel).body) for rel, data in original.items()}
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["applied"] and done["run"]
    after = vault_bytes(vault)
    assert "08-Mistakes/oops.md" in after and "03-Knowledge/oops.md" not in after
    assert len(after) == len(original)  # nothing deleted
    for merge in done["merges"]:
        keeper = notes.parse(after[merge["path"]], merge["path"])
        history = [keeper]
        for m in merge["merged"]:
            card = notes.parse(after[m["path"]], m["path"])
            assert card.invalid_at and card.superseded_by
            history.append(card)
            for sentence in merged_sentences[m["path"]]:  # every sentence is in the keeper
                assert sentences.folded(sentence) in sentences.folded(keeper.body)
        assert keeper.supersedes == merge["merged"][0]["path"]
    backup = notes.parse(after["03-Knowledge/backup.md"], "03-Knowledge/backup.md")
    assert backup.summary and len(backup.summary) <= 150
    assert "summary_generated: true" in after["03-Knowledge/backup.md"].decode()
    code, found = cli("search", "deploy", "--json")
    assert code == 0 and all(h["valid"] for h in found["hits"])
    code, doctor = cli("doctor", "--json")
    assert doctor["sound"], doctor
    code, undone = cli("consolidate", "--undo", done["run"], "--json")
    assert code == 0 and undone["status"] == "undone"
    assert vault_bytes(vault) == original
    code, again = cli("consolidate", "--undo", done["run"], "--json")
    assert again["status"] == "unchanged"


def test_undo_refuses_when_a_file_changed_after_the_run(cli, vault, home):
    _vault(vault, cli, home)
    _, done = cli("consolidate", "--apply", "--json")
    edited = vault / done["merges"][0]["path"]
    edited.write_text(edited.read_text() + "\nA line written by hand later.\n")
    before = vault_bytes(vault)
    code, result = cli("consolidate", "--undo", done["run"], "--json")
    assert code == 1 and vault_bytes(vault) == before


def test_a_file_edited_while_a_run_is_written_leaves_the_vault_as_before(cli, vault, home, monkeypatch):
    """The docs promise before or after, never between: the files already written go back."""
    from memsync.write import runs

    _vault(vault, cli, home, rules=False)
    original = vault_bytes(vault)
    save = runs.save
    edited: list[str] = []

    def save_then_edit(cfg, run, changes):
        files = save(cfg, run, changes)
        edited.append(files[-1]["rel"])  # the last file of the run, edited before the run gets to it
        (vault / edited[0]).write_text((vault / edited[0]).read_text() + "\nA line written meanwhile.\n")
        return files

    monkeypatch.setattr(runs, "save", save_then_edit)
    code, out = cli("consolidate", "--apply", "--json")
    assert code == 1 and "was edited while run" in out["error"]["message"]
    now = vault_bytes(vault)
    assert now.pop(edited[0]).endswith(b"A line written meanwhile.\n")
    assert now == {rel: data for rel, data in original.items() if rel != edited[0]}


def test_read_only_sources_are_never_changed(cli, vault, home, tmp_path):
    other = tmp_path / "notes"
    write_card(other, "deploy.md", "deploy", EN)
    write_card(other, "deploy-copy.md", "deploy copy", EN + "One more line here.")
    write_card(other, "long.md", "long", LONG)
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sources": [
        {"name": "notes", "adapter": "markdown", "path": str(other)}]}))
    cli("index")
    before = tree_digest(other)
    code, plan = cli("consolidate", "--json")
    assert any("read-only" in s["why"] for s in plan["skipped"])
    code, text = cli("consolidate")
    left = [line for line in text.splitlines() if line.startswith("left alone")]
    assert left and all(line.startswith("left alone (merge) notes:deploy") for line in left), text
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and tree_digest(other) == before
    assert done["summaries"] == [] and done["merges"] == []


def test_often_read_cards_are_only_keepers(cli, vault, home):
    _vault(vault, cli, home, rules=False)
    _, found = cli("search", "deploy", "--json")
    ids = {h["path"]: h["id"] for h in found["hits"]}
    short = ids["03-Knowledge/deploy.md"]
    for _ in range(6):
        cli("show", short)
    _, plan = cli("consolidate", "--json")
    merge = next(m for m in plan["merges"] if m["path"].startswith("03-Knowledge/deploy"))
    assert merge["keeper"] == short and "read most" in merge["why"]


@pytest.mark.parametrize(("use", "times"), [(("show",), 5), (("feedback", "--helpful"), 2)])
def test_a_card_read_five_times_or_marked_helpful_twice_is_never_merged_into_another(cli, vault, home, use, times):
    _vault(vault, cli, home, rules=False)
    ids = {h["path"]: h["id"] for h in cli("search", "deploy", "--json")[1]["hits"]}
    read, helped = ids["03-Knowledge/deploy.md"], ids["03-Knowledge/deploy-notes.md"]
    for _ in range(7):
        cli("show", read)  # the keeper: read more than the other
    for _ in range(times):
        cli(use[0], helped, *use[1:])
    group = next(g for g in cli("audit", "--json")[1]["duplicates"] if g["keeper"] == read)
    (other,) = [c for c in group["cards"] if c["id"] == helped]
    assert other["protected"] is True and other["merge"] is False
    before = (vault / "03-Knowledge/deploy-notes.md").read_bytes()
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and not any(m["path"] == "03-Knowledge/deploy.md" for m in done["merges"])
    assert (vault / "03-Knowledge/deploy-notes.md").read_bytes() == before


def test_a_sentence_is_held_only_as_a_whole_sentence_and_ends_only_at_a_space():
    keeper = "Never deploy on Friday afternoons without approval. Use port 8080 for the app."
    assert sentences.missing(keeper, "- Never deploy on Friday\n- Use port 80\n- use port 8080 for the app") == [
        "Never deploy on Friday", "Use port 80"]
    assert sentences.split("See page?id=42 for it. <!-- a note --> Is it [!note] done? Yes! 好。是的！") == [
        "See page?id=42 for it.", "<!-- a note --> Is it [!note] done?", "Yes!", "好。", "是的！"]


def test_headings_and_table_rows_are_no_sentences_to_merge_or_sum_up():
    other = "# Release\n\nA release is cut on Monday.\n\n| env | host |\n|---|---|\n| prod | web-1 |\n\n- [x] tag it\n"
    assert sentences.split(other) == ["A release is cut on Monday.", "tag it"]
    assert sentences.summary(other) == "A release is cut on Monday. tag it"


def test_a_merge_refused_partway_leaves_every_card_of_its_group_alone(cli, vault, home):
    """The merged-away card's frontmatter ends with `...`, which its edit cannot keep: the keeper,
    edited before that refusal, must not be written either."""
    body = "The deploy lock lives in redis under deploy:lock. Take it before a release and drop it after."
    (vault / "lock a.md").write_text(f"---\ntitle: deploy lock\nupdated: 2026-11-01\n...\n{body} Keeper-only line.\n")
    (vault / "lock b.md").write_text(f"---\ntitle: deploy lock b\nupdated: 2026-10-01\n---\n{body}\n")
    cli("index")
    before = vault_bytes(vault)
    code, plan = cli("consolidate", "--threshold", "0.2", "--json")
    assert code == 0 and plan["merges"] == [] and plan["files"] == 0
    assert any(s["step"] == "merge" for s in plan["skipped"])
    code, done = cli("consolidate", "--threshold", "0.2", "--apply", "--json")
    assert code == 0 and vault_bytes(vault) == before


def test_apply_pairs_cards_by_what_their_files_hold_now(cli, vault, home):
    """No watcher saw deploy-notes.md rewritten on another subject: the index still holds it as
    deploy.md's twin, but --apply must not merge it."""
    _vault(vault, cli, home, rules=False)
    wifi = "---\ntitle: office wifi\n---\nThe office wifi is called shop-guest; its password is on the fridge.\n"
    (vault / "03-Knowledge/deploy-notes.md").write_text(wifi)
    before = (vault / "03-Knowledge/deploy.md").read_bytes()
    code, done = cli("consolidate", "--apply", "--json")
    merged = {m["path"] for m in done["merges"]} | {c["path"] for m in done["merges"] for c in m["merged"]}
    assert code == 0 and not merged & {"03-Knowledge/deploy.md", "03-Knowledge/deploy-notes.md"}
    assert (vault / "03-Knowledge/deploy-notes.md").read_text() == wifi
    assert (vault / "03-Knowledge/deploy.md").read_bytes() == before


def test_a_private_card_moved_by_a_run_stays_private_and_bad_run_names_are_refused(cli, vault, home, run_cli):
    _vault(vault, cli, home)
    (vault / "03-Knowledge/oops.md").chmod(0o600)  # as a capture that held a secret left it
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and (vault / "08-Mistakes/oops.md").stat().st_mode & 0o777 == 0o600
    assert cli("consolidate", "--undo", done["run"])[0] == 0
    assert (vault / "03-Knowledge/oops.md").stat().st_mode & 0o777 == 0o600
    assert cli("consolidate", "--save")[0] == 0
    plan_name = next(p.name for p in (home / "consolidate").glob("plan-*.json"))
    code, _, err = run_cli("consolidate", "--undo", plan_name)
    assert code == 1 and "no consolidate run" in err and "Traceback" not in err
    (home / "consolidate" / done["run"] / "manifest.json").write_text("{broken")
    code, _, err = run_cli("consolidate", "--undo", done["run"])
    assert code == 1 and "cannot be read" in err and "Traceback" not in err


def test_summaries_are_cut_at_sentence_ends():
    assert sentences.summary("第一句话在这里。第二句话也在。第三句不要。") == "第一句话在这里。第二句话也在。"
    assert sentences.summary("One. Two. Three.") == "One. Two."
    cut = sentences.summary("word " * 100)
    assert len(cut) <= 150 and cut.endswith("…")


def test_a_long_chinese_first_sentence_is_cut_at_a_character_not_back_at_a_space():
    """Going back to the last space cut the Chinese after `ecs-prod-01` away: 19 characters of 149."""
    first = "发布前先在预发布环境验证配置" * 8 + "，然后部署到 ecs-prod-01 上" + "，检查监控告警并通知值班同事" * 4 + "。"
    cut = sentences.summary(first)
    assert cut is not None and cut.endswith("…") and len(cut) == 150
    assert first.startswith(cut[:-1])


def test_sentences_are_parted_by_a_space_unless_both_sides_are_cjk():
    """Non-ASCII text is not CJK text: a dash, an accent or a curly quote once glued sentences."""
    added = ["Approval comes from the on-call lead — Zoë.", "Hotfixes skip staging — two reviewers."]
    assert sentences.merged_body("Deploys run on Fridays.\n", added) == (
        "Deploys run on Fridays.\n\n- Approval comes from the on-call lead — Zoë.\n- Hotfixes skip staging — two reviewers.")
    assert sentences.merged_body("旧的。", ["第一句。", "第二句。"]) == "旧的。\n\n- 第一句。\n- 第二句。"
    assert sentences.summary("The café opens at nine. Its Wi-Fi is “shop-guest”.") == (
        "The café opens at nine. Its Wi-Fi is “shop-guest”.")
    assert sentences.summary("部署用nginx\ngamma 服务器在上海") == "部署用nginx gamma 服务器在上海"
    assert sentences.summary("用nginx部署。然后重启。") == "用nginx部署。然后重启。"
    assert sentences.summary("It is done. 然后重启。") == "It is done. 然后重启。"


def _state_after_kill(vault, home, original: dict) -> str:
    """'before' or 'after' (checked against the run's saved copies); anything else fails."""
    now = vault_bytes(vault)
    if now == original:
        return "before"
    runs = sorted((home / "consolidate").glob("*/manifest.json"))
    assert runs, "the vault changed but no run was saved"
    manifest = json.loads(runs[-1].read_text())
    expected = dict(original)
    for item in manifest["files"]:
        del expected[item["rel"]]
    for item in manifest["files"]:
        expected[item["to"]] = (runs[-1].parent / f"{item['n']}.after").read_bytes()
    assert now == expected, "the vault is between before and after"
    return "after"


@pytest.mark.parametrize("edited_meanwhile", [False, True])
def test_a_move_killed_between_its_two_names_is_finished_or_rolled_back(cli, vault, home, tmp_path,
                                                                         edited_meanwhile):
    """The one instant a kill leaves a moved card under both names: the new name linked, the
    old not yet unlinked. Recovery ends the move one way; it never keeps both."""
    import shutil

    from memsync.write import journal

    _vault(vault, cli, home)
    original = vault_bytes(vault)
    shutil.copytree(vault, tmp_path / "pristine")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0
    after = vault_bytes(vault)
    shutil.rmtree(vault)
    shutil.copytree(tmp_path / "pristine", vault)
    (vault / "08-Mistakes").mkdir()
    (vault / "08-Mistakes/oops.md").write_bytes(after["08-Mistakes/oops.md"])
    if edited_meanwhile:
        (vault / "03-Knowledge/deploy.md").write_text("---\ntitle: deploy\n---\nEdited by hand.\n")
    journal.Entry(home, {"op": "consolidate", "run": done["run"], "direction": "apply",
                         "vault": str(vault)}).release()  # as if its writer died right there
    code, text = cli("consolidate")  # the person at the terminal is told what was settled
    action = "rolled back" if edited_meanwhile else "finished"
    assert code == 0 and text.startswith(f"an interrupted run {done['run']} (apply): {action}\n")
    if edited_meanwhile:
        assert vault_bytes(vault) == {**original, "03-Knowledge/deploy.md": b"---\ntitle: deploy\n---\nEdited by hand.\n"}
    else:
        assert vault_bytes(vault) == after
    assert not list((home / "journal").glob("consolidate-*.json"))


def test_a_kill_during_apply_leaves_the_vault_before_or_after(cli, vault, home, tmp_path):
    import random
    import shutil
    import signal
    import subprocess
    import time

    from .conftest import MEMSYNC_BIN

    _vault(vault, cli, home)
    original = vault_bytes(vault)
    pristine_vault, pristine_home = tmp_path / "pv", tmp_path / "ph"
    shutil.copytree(vault, pristine_vault)
    shutil.copytree(home, pristine_home)
    started = time.monotonic()
    subprocess.run([MEMSYNC_BIN, "consolidate", "--apply"], check=True, capture_output=True)
    whole = time.monotonic() - started
    rng = random.Random(20)
    seen = []
    for _trial in range(6):
        shutil.rmtree(vault)
        shutil.rmtree(home)
        shutil.copytree(pristine_vault, vault)
        shutil.copytree(pristine_home, home)
        proc = subprocess.Popen([MEMSYNC_BIN, "consolidate", "--apply"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * whole)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        code, _ = cli("consolidate", "--json")  # any consolidate finishes or rolls back first
        assert code == 0
        seen.append(_state_after_kill(vault, home, original))
        assert not list((home / "journal").glob("consolidate-*.json"))
    assert set(seen) <= {"before", "after"}
    print("kills during apply:", seen)


def test_the_daily_plan_timer_runs_the_dry_run_only(tmp_path):
    from pathlib import Path

    from memsync import service

    home = tmp_path / "home"
    linux = service.describe_plan(Path("/opt/bin/memsync"), home, "linux", tmp_path)
    assert linux.name.endswith(".timer") and "OnCalendar=" in linux.text and "Persistent=true" in linux.text
    ((unit_file, unit),) = linux.extra
    assert f"ExecStart=/opt/bin/memsync --home {home} consolidate --save" in unit
    assert "--apply" not in unit and unit_file.name.endswith(".service")
    mac = service.describe_plan(Path("/opt/bin/memsync"), home, "darwin", tmp_path)
    assert "StartCalendarInterval" in mac.text and "--apply" not in mac.text


def test_save_and_apply_together_are_refused(cli, vault, home):
    _vault(vault, cli, home)
    before = vault_bytes(vault)
    code, out = cli("consolidate", "--apply", "--save", "--json")
    assert code == 2 and "give one" in out["error"]["message"] and vault_bytes(vault) == before


@pytest.mark.parametrize("args", [(), ("--apply",), ("--save",)])
def test_without_an_index_a_plan_is_refused_and_leaves_nothing_behind(cli, vault, home, args):
    code, out = cli("consolidate", *args, "--json")
    assert code == 2 and "no index" in out["error"]["message"] and "memsync index" in out["error"]["message"]
    # neither the reindex turn's lock nor the journal: the home holds what it held before
    left = sorted(p.name for p in home.rglob("*")) if home.exists() else []
    assert not [name for name in left if "lock" in name or name == "journal"], left


def test_a_saved_plan_is_left_in_the_home_and_the_vault_is_untouched(cli, vault, home):
    _vault(vault, cli, home)
    before = vault_bytes(vault)
    code, data = cli("consolidate", "--save", "--json")
    assert code == 0 and data["applied"] is False
    from pathlib import Path

    saved = json.loads(Path(data["saved"]).read_text())
    assert saved["merges"] == data["merges"] and vault_bytes(vault) == before


def test_a_plan_with_nothing_to_do_is_not_saved(cli, vault, home):
    """The daily timer runs `consolidate --save`: over a tidy vault it left an empty plan a day."""
    write_card(vault, "03-Knowledge/one.md", "one", "A short card about one thing only.")
    assert cli("index")[0] == 0
    code, data = cli("consolidate", "--save", "--json")
    assert code == 0 and data["empty"] and data["saved"] is None
    assert not list((home / "consolidate").glob("plan-*.json"))
    code, text = cli("consolidate", "--save")
    assert code == 0 and "nothing to tidy, so no plan was saved" in text


def test_service_install_consolidate_writes_the_timer_and_its_service(run_cli, tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert run_cli("init")[0] == 0
    monkeypatch.delenv("MEMSYNC_VAULT")
    code, out, _err = run_cli("service", "install", "--consolidate", "--json")
    assert code == 0 and out["status"] == "installed"
    timer = Path(out["file"])
    assert timer.name.endswith(".timer") and "OnCalendar=" in timer.read_text()
    unit = timer.with_suffix(".service")
    assert "consolidate --save" in unit.read_text() and "--apply" not in unit.read_text()
    code, gone, _err = run_cli("service", "uninstall", "--consolidate", "--json")
    assert code == 0 and not timer.exists() and not unit.exists()


def _a_move(vault, cli, home):
    """A vault whose only plan step moves oops.md to 08-Mistakes/ (a folder not there yet)."""
    write_card(vault, "03-Knowledge/oops.md", "oops", "A mistake filed under knowledge, about rsync flags.", kind="mistake")
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"folder_rules": {"mistake": "08-Mistakes"}}))
    cli("index")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and [(m["from"], m["to"]) for m in done["moves"]] == [("03-Knowledge/oops.md", "08-Mistakes/oops.md")]
    return done["run"]


def test_an_undo_refused_for_a_taken_old_path_names_that_path(cli, vault, home):
    run = _a_move(vault, cli, home)
    write_card(vault, "03-Knowledge/oops.md", "new oops", "Another card written at the old path since.")
    code, out = cli("consolidate", "--undo", run, "--json")
    message = out["error"]["message"]
    assert code == 1 and "(03-Knowledge/oops.md (taken by another file" in message
    assert (vault / "08-Mistakes/oops.md").exists()


def test_undo_of_a_move_takes_away_the_folder_the_run_made_and_only_that(cli, vault, home):
    run = _a_move(vault, cli, home)
    assert cli("consolidate", "--undo", run)[0] == 0
    assert (vault / "03-Knowledge/oops.md").exists() and not (vault / "08-Mistakes").exists()
    (vault / "08-Mistakes").mkdir()  # a folder that was there before the run stays
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and cli("consolidate", "--undo", done["run"])[0] == 0
    assert (vault / "08-Mistakes").is_dir()


def test_a_run_killed_while_its_copies_were_saved_is_recognised_and_its_folder_removed(cli, vault, home):
    """The copies are saved before the manifest, and the journal comes after both: a kill in
    between leaves a folder of copies that no undo can use, and a vault that never changed."""
    _vault(vault, cli, home)
    original = vault_bytes(vault)
    for run in ("20261201-100000-aaaaaa", "20261201-100001-bbbbbb"):
        (home / "consolidate" / run).mkdir(parents=True)
        (home / "consolidate" / run / "0.before").write_bytes(original["03-Knowledge/deploy.md"])
    code, out = cli("consolidate", "--undo", "20261201-100000-aaaaaa", "--json")
    assert code == 1 and "killed while its copies were saved" in out["error"]["message"]
    assert not (home / "consolidate" / "20261201-100000-aaaaaa").exists()
    (home / "consolidate" / "20261201-100000-aaaaaa").mkdir()
    code, text = cli("consolidate")
    assert code == 0 and text.startswith("an interrupted run 20261201-100000-aaaaaa: killed while its copies")
    assert [p.name for p in (home / "consolidate").iterdir()] == [] and vault_bytes(vault) == original


@pytest.mark.parametrize("space", ["\t", "\u00a0", "\u3000", "\u2003"])
def test_a_summary_is_written_when_the_body_holds_a_tab_or_a_no_break_space(cli, vault, home, space):
    write_card(vault, "backup.md", "backup", LONG.replace("backup job", f"backup{space}job"))
    cli("index")
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["skipped"] == []
    assert [s["summary"] for s in done["summaries"]] == ["The backup job runs nightly at two and keeps thirty days. It writes to the NAS."]
    assert notes.parse((vault / "backup.md").read_bytes(), "backup.md").summary == done["summaries"][0]["summary"]


def test_a_plan_only_shown_keeps_no_file_text_and_shows_what_the_full_plan_shows(cli, vault, home):
    """The dry run lets each summarized file's texts go (at 100,000 cards, hundreds of MB): same
    steps, same file count, and a move of a file a summary changed is still put off."""
    from memsync import config
    from memsync.lifecycle import consolidate

    _vault(vault, cli, home)
    rsync = "Never run rsync with --delete against the NAS share without a dry run first. " * 9
    write_card(vault, "03-Knowledge/rsync.md", "rsync", rsync, kind="mistake")
    cli("index")
    cfg = config.load()
    full = consolidate._plan(cfg, None, keep_texts=True)
    shown = consolidate._plan(cfg, None, keep_texts=False)
    assert shown.to_dict() == full.to_dict()
    summarized = {s["path"] for s in full.summaries}
    assert summarized == {"03-Knowledge/backup.md", "03-Knowledge/rsync.md"}
    assert [(s["path"], s["why"]) for s in shown.skipped if s["step"] == "move"] == [
        ("03-Knowledge/rsync.md", "changed by another step of this run: it moves on the next one")]
    assert summarized <= set(full.changes) and not summarized & set(shown.changes)
    assert shown.let_go == summarized
    code, data = cli("consolidate", "--json")
    assert code == 0 and {k: v for k, v in data.items() if k != "applied"} == full.to_dict()


def test_a_summary_written_as_a_list_is_the_cards_summary_and_is_kept(cli, vault, home):
    """It was read as no summary: audit listed the card as long without one, and --apply wrote
    an extracted sentence over the lines the user had written."""
    (vault / "backup.md").write_text("---\ntitle: backup\nsummary:\n  - nightly backup to the NAS\n"
                                     "  - kept thirty days\n---\n" + LONG)
    before = vault_bytes(vault)
    cli("index")
    assert cli("audit", "--json")[1]["long_without_summary"] == []
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["summaries"] == [] and vault_bytes(vault) == before
    hits = cli("search", "backup", "--json")[1]["hits"]
    assert [h["snippet"] for h in hits] == ["nightly backup to the NAS kept thirty days"]


def test_apply_opens_the_index_once_for_its_catch_up_and_its_plan(cli, vault, home, monkeypatch):
    """The catch-up and the audit it plans from each opened the index; one connection does both
    (and one more brings the index in line with the run's files, after the write lock)."""
    from memsync.store.index import Index

    _vault(vault, cli, home)
    opened: list[str] = []
    real = Index._begin

    def counted(self, path, conn, lean):
        opened.append(str(path))
        real(self, path, conn, lean)

    monkeypatch.setattr(Index, "_begin", counted)
    code, done = cli("consolidate", "--apply", "--json")
    assert code == 0 and done["run"] and done["indexed"] is True
    assert len(opened) == 2, opened
