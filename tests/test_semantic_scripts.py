"""Telling which script a card is mostly written in (memsync.semantic.scripts): pure."""

import pytest

from memsync.semantic.scripts import SAMPLE, dominant, of_card


@pytest.mark.parametrize("text,script", [
    ("The PostgreSQL database is dumped every night", "latin"),
    ("Überprüfung der Änderungen vor dem Release", "latin"),
    ("猫每天早晚各喂一次干粮", "han"),
    # paths and English terms count by words, each Han character as one: still a Chinese note
    ("生产环境 nginx 的站点根目录是 /srv/www，配置在 /etc/nginx/sites-enabled。", "han"),
    ("東京の天気は晴れです", "kana"),  # Han with Kana between: Japanese, not Chinese
    ("서버 로그인 방식은 nginx 설정을 따른다", "hangul"),
    ("Резервная копия базы данных", "cyrillic"),
    ("12:30 / 45 %", ""),  # no letters at all
    ("", ""),
])
def test_the_dominant_script(text, script):
    assert dominant(text) == script


def test_a_card_is_judged_by_its_title_and_the_start_of_its_body():
    assert of_card("Backups", "数据库每晚备份。" * 3) == "han"
    assert of_card("备份", "x" * 10 + " words" * SAMPLE + "数据库每晚备份。" * 50) == "latin"  # past SAMPLE: unread
