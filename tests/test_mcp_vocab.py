"""One argument vocabulary: `id` for the card in every tool (`old_id` still taken by
memory_supersede), `tags` as a list or a comma string (in the CLI too), and a delete that the
same tool can undo."""

from __future__ import annotations

from memsync import config
from memsync.store.index import Index

from .mcp_helpers import hits as _hits
from .mcp_helpers import refused, scenario, server_log, text_of, tool

__all__ = ["server_log"]  # a fixture, imported for the tests below

BODY = "The nightly backup of the billing database runs at 02:00 from ops-03."


def _tags_of(card_id: int) -> list[str]:
    import json

    index = Index(config.load().db.path)
    try:
        return json.loads(index.card(card_id)["tags"])
    finally:
        index.close()


def test_tags_as_a_list_a_comma_string_or_a_flow_list(server_log):
    async def body(session):
        listed = await tool(session, "memory_capture", title="backup as list", body=BODY, tags=["ops", "backup"])
        comma = await tool(session, "memory_capture", title="backup as string", body=BODY + " (2)",
                           tags="ops, backup")
        assert _tags_of(listed["id"]) == _tags_of(comma["id"]) == ["ops", "backup"]
        await tool(session, "memory_update", id=comma["id"], tags="ops,backup,billing")
        assert _tags_of(comma["id"]) == ["ops", "backup", "billing"]
        await tool(session, "memory_update", id=comma["id"], tags='["ops", "billing"]')  # a JSON list as text
        assert _tags_of(comma["id"]) == ["ops", "billing"]
        await tool(session, "memory_update", id=comma["id"], tags="[ops, backup]")  # YAML's flow list
        assert _tags_of(comma["id"]) == ["ops", "backup"]
        await tool(session, "memory_update", id=comma["id"], tags="")
        assert _tags_of(comma["id"]) == []
        newer = await tool(session, "memory_supersede", id=listed["id"], title="backup moved",
                           body="The nightly billing backup moved to 03:00 on ops-04.", tags="ops,backup")
        assert _tags_of(newer["id"]) == ["ops", "backup"]

    scenario(body)(server_log)


def test_the_cli_takes_tags_as_a_comma_string_a_flow_list_or_repeated(cli):
    code, one = cli("capture", "--title", "cli comma", "--body", BODY, "--tags", "ops,backup", "--json")
    assert code == 0
    code, many = cli("capture", "--title", "cli repeated", "--body", BODY + " (2)", "--tags", "ops",
                     "--tags", "backup", "--json")
    assert code == 0
    assert _tags_of(one["id"]) == _tags_of(many["id"]) == ["ops", "backup"]
    assert cli("update", many["id"], "--tags", "[ops, billing]", "--json")[0] == 0
    assert _tags_of(many["id"]) == ["ops", "billing"]
    assert cli("update", many["id"], "--tags", "", "--json")[0] == 0
    assert _tags_of(many["id"]) == []


def test_tags_typed_with_a_chinese_input_method_are_parted_at_its_commas(cli, server_log):
    """`，` and `、` are what a Chinese keyboard types between items: one tag `监控，运维、看板`
    could not be found by `--tag 监控`."""
    code, card = cli("capture", "--title", "监控面板地址", "--body", BODY, "--tags", "监控，运维、看板", "--json")
    assert code == 0 and _tags_of(card["id"]) == ["监控", "运维", "看板"]
    code, found = cli("search", "billing", "--tag", "运维", "--json")
    assert [hit["id"] for hit in found["hits"]] == [card["id"]]

    async def body(session):
        await tool(session, "memory_update", id=card["id"], tags="部署/生产，网络")
        assert _tags_of(card["id"]) == ["部署/生产", "网络"]

    scenario(body)(server_log)


def test_supersede_takes_id_and_still_takes_old_id(server_log):
    async def body(session):
        first = await tool(session, "memory_capture", title="backup hour", body=BODY)
        second = await tool(session, "memory_supersede", old_id=first["id"], title="backup hour 2",
                            body="The nightly billing backup now runs at 03:00 from ops-03.")
        assert second["status"] == "superseded"
        third = await tool(session, "memory_supersede", id=second["id"], title="backup hour 3",
                           body="The nightly billing backup now runs at 04:00 from ops-05.")
        assert [h["id"] for h in await _hits(session, "nightly billing backup")] == [third["id"]]
        clash = await refused(session, "memory_supersede", id=third["id"], old_id=first["id"],
                              title="t", body="a body that is long enough here")
        assert "pass only id" in clash
        assert "id is required" in await refused(session, "memory_supersede", title="t",
                                                 body="a body that is long enough here")

    scenario(body)(server_log)


def test_memory_delete_can_restore_what_it_deleted(server_log, vault):
    async def body(session):
        made = await tool(session, "memory_capture", title="backup owner", body=BODY)
        gone = await session.call_tool("memory_delete", {"id": made["id"]})
        trash_path = gone.structured_content["trash_path"]
        assert trash_path.startswith(".trash/") and (vault / trash_path).is_file()
        assert f"memory_delete tool with restore={trash_path}" in text_of(gone)  # the undo, in tool words
        assert await _hits(session, "backup owner") == []

        back = await tool(session, "memory_delete", restore=trash_path)
        assert back["status"] == "restored" and back["path"] == made["path"]
        assert (vault / made["path"]).is_file() and not (vault / trash_path).exists()
        assert [h["id"] for h in await _hits(session, "backup owner")] == [made["id"]]  # its id back

        await tool(session, "memory_delete", id=made["id"])
        (vault / made["path"]).write_text("---\ntitle: in the way\n---\nanother file now sits at this path")
        taken = await refused(session, "memory_delete", restore=trash_path)
        assert "force" in taken and "--force" not in taken
        forced = await tool(session, "memory_delete", restore=trash_path, force=True)
        assert forced["status"] == "restored" and "in the way" not in (vault / made["path"]).read_text()

        for wrong in ({}, {"id": made["id"], "restore": trash_path}, {"id": made["id"], "force": True}):
            assert "memory_delete:" in await refused(session, "memory_delete", **wrong)
        assert "nothing at" in await refused(session, "memory_delete", restore=".trash/no-such.md")

    scenario(body)(server_log)


def test_a_write_to_a_read_only_source_is_refused_with_what_to_do_instead(server_log, tmp_path, cli):
    """A model is told what it can do (memory_capture) or what to ask of the user (a source is
    removed by the user), never a bare refusal or a command it cannot run; the file is not touched."""
    other = tmp_path / "agent-notes"
    other.mkdir()
    (other / "egret.md").write_text("# egret\n\nan egret was seen wading at the north pond, kept by another agent\n")
    cli("sources", "--add", "agent", "--path", other)
    before = (other / "egret.md").read_bytes()

    async def body(session):
        card_id = (await _hits(session, "egret"))[0]["id"]
        for name, arguments in (("memory_update", {"tags": "birds"}),
                                ("memory_supersede", {"title": "egret moved", "body": BODY})):
            text = await refused(session, name, id=card_id, **arguments)
            assert "read-only source 'agent'" in text and "the memory_capture tool" in text, text
            assert f"correct it in its own file ({other / 'egret.md'})" in text, text
            assert "memsync capture" not in text
        text = await refused(session, "memory_delete", id=card_id)
        assert text == (f"card {card_id} comes from the read-only source 'agent' (egret.md); "
                        "memsync never writes there: to leave its cards out of search, remove the "
                        "source (`memsync sources --remove agent`, for the user to run)"), text

    scenario(body)(server_log)
    assert (other / "egret.md").read_bytes() == before
