"""Cutting cards into passages the model can take: a pure function, tested with a character
count standing in for the model's token count."""

from memsync.semantic import passages


def chars(text: str) -> int:
    return len(text) + 2  # two special tokens, as the model counts them


def test_a_short_card_is_one_passage_of_title_and_body():
    assert passages.split("nginx root", "The site root is /srv/www.", chars) == [
        "nginx root\n\nThe site root is /srv/www."]


def test_a_long_card_is_cut_into_passages_that_each_fit_and_keep_the_title():
    body = "\n\n".join(f"Paragraph {n}. " + "word " * 30 for n in range(12))
    parts = passages.split("Handbook", body, chars, limit=200)
    assert len(parts) > 1
    assert all(chars(p) <= 200 for p in parts)
    assert all(p.startswith("Handbook\n\n") for p in parts)
    assert "Paragraph 11." in parts[-1]  # nothing dropped at the end


def test_an_unbroken_run_is_cut_by_characters():
    body = "字" * 1000  # CJK without punctuation: no paragraph or sentence to cut at
    parts = passages.split("", body, chars, limit=120)
    assert all(chars(p) <= 120 for p in parts)
    assert "".join(parts) == body


def test_sentences_are_the_second_cut():
    body = "。".join(f"第{n}句话说了一件事" for n in range(40)) + "。"
    parts = passages.split("标题", body, chars, limit=80)
    assert all(chars(p) <= 80 for p in parts)
    assert all(p.startswith("标题\n\n") for p in parts)
    assert sum(p.count("句话") for p in parts) == 40
