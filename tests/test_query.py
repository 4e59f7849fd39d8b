from memsync.search import query


def tiers(q):
    return dict(query.plan(q).tiers)


def test_every_token_is_quoted():
    plan = tiers('a*b -c NEAR( "x" OR:')
    for expr in plan.values():
        # the only unquoted words are the operators we add
        outside = expr.split('"')[::2]
        assert all(part.strip() in ("", "AND", "OR", "*", "* OR", "* AND") for part in outside), expr


def test_all_tier_makes_cjk_runs_phrases():
    assert tiers("东京都")["all"] == '"东京 京都"'


def test_any_tier_counts_bigrams_separately():
    assert tiers("东京都")["any"] == '"东京" OR "京都"'


def test_prefix_only_for_terms_of_two_chars_or_more():
    plan = tiers("a sqlite")
    assert plan["all-prefix"] == '"a" AND "sqlite" *'
    assert plan["any-prefix"] == '"a" OR "sqlite" *'


def test_single_word_query_has_no_duplicate_any_tier():
    assert [name for name, _ in query.plan("nginx").tiers] == ["all", "all-prefix"]


def test_query_without_words_has_no_tiers():
    assert query.plan("*** ()").tiers == ()


def test_a_cjk_character_typed_as_a_word_is_its_prefix_in_every_tier():
    plan = tiers("锁 redis")
    assert plan["all"] == '"锁" * AND "redis"'
    assert plan["all-prefix"] == '"锁" * AND "redis" *'
    assert plan["any"] == '"锁" * OR "redis"'


def test_a_character_left_between_punctuation_stays_exact_in_the_or_tiers():
    # in questions such characters are mostly particles (的, 年 after a number)
    plan = tiers("1990年，范廷颂")
    assert plan["all"] == '"1990" AND "年" * AND "范廷 廷颂"'
    assert plan["any"] == '"1990" OR "年" OR "范廷" OR "廷颂"'


def test_short_fields_are_credited_for_a_cjk_run_only_whole_in_every_tier():
    # A bigram is a fragment of a word, not a word: a title or heading earns its extra credit
    # only by holding the whole run, as in the strict tiers. A word of a hyphenated group is a
    # word, credited alone in the any tiers.
    short = dict(query.plan("东京都 nginx").short)
    assert short["any"] == short["all"] == '"东京 京都" OR "nginx"'
    assert short["any-prefix"] == '"东京 京都" * OR "nginx" *'
    assert dict(query.plan("ecs-prod 东京都").short)["any"] == '"ecs" OR "prod" OR "东京 京都"'
    assert dict(query.plan("1990年，范廷颂").short)["any"] == '"1990" OR "年" OR "范廷 廷颂"'  # 年 as its tier has it


def test_highlights_mark_what_the_query_tokens_match():
    from memsync.output import mark

    def marked(q, text):
        return mark(text, query.plan(q).terms, lambda word: f"[{word}]")

    # a CJK run's bigrams merge into the run; found apart, each part is marked
    assert marked("服务器登录", "生产服务器登录使用私钥") == "生产[服务器登录]使用私钥"
    assert marked("东京都", "东京 和 京都") == "[东京] 和 [京都]"
    # a word inside a CJK run, any case, full-width folded in the query
    assert marked("Ｐrometheus", "用Prometheus单独管理") == "用[Prometheus]单独管理"
    # a Latin term only where a word starts, as the index matches it
    assert marked("a data", "a database of data") == "[a] [data]base of [data]"
    assert marked("ecs-prod", "on ecs-prod now") == "on [ecs]-[prod] now"


def test_a_japanese_sentences_words_count_once_more_and_credit_the_short_fields():
    # The words between the hiragana (金沢, 海鮮丼) are matched as well as every bigram: the
    # tier matches the same cards, but a word weighs beside the particle pairs, and a title
    # holding it is credited although it holds no whole run.
    plan = query.plan("金沢で海鮮丼")
    tiers = dict(plan.tiers)
    assert tiers["any"] == '"金沢" OR "沢で" OR "で海" OR "海鮮" OR "鮮丼" OR "金沢" OR "海鮮 鮮丼"'
    assert dict(plan.short)["any"] == '"金沢 沢で で海 海鮮 鮮丼" OR "金沢" OR "海鮮 鮮丼"'
    long_word = dict(query.plan("パスワードは金沢で").tiers)["any"]
    assert long_word.count('"金沢"') == 2 and '"パス スワ ワー ード"' not in long_word
    chinese = query.plan("东京都的天气")  # no hiragana: nothing added
    assert dict(chinese.tiers)["any"] == '"东京" OR "京都" OR "都的" OR "的天" OR "天气"'


def test_a_prefix_is_cut_back_to_the_head_its_stems_share():
    # porter: deploy -> deploi, deployment -> deploy -> deploi; the head all keep is `deplo`
    assert query.bridge("deploy", ["deploi", "deploi"]) == "deplo"
    assert query.bridge("deployment", ["deploy", "deploi"]) == "deplo"
    assert query.bridge("request", ["request", "request"]) == "request"  # stems keep it whole
    assert query.bridge("happy", ["happi", "happi"]) == "happy"  # `happ` is too short a head
    p = query.plan("deployment ecs-deploy", stems={"deployment": "deploy", "deploy": "deploi",
                                                  "deploi": "deploi"})
    tiers = dict(p.tiers)
    assert tiers["all"] == '"deployment" AND "ecs deploy"'  # exact tiers as typed
    assert tiers["all-prefix"] == '"deplo" * AND "ecs deplo" *'
    assert p.term_expr("deployment", True) == '"deplo" *'


def test_the_prefix_tiers_also_match_a_long_words_heads_as_whole_words():
    tiers = dict(query.plan("postgresql ecs-postgresql").tiers)
    heads = '"postgresq" OR "postgres" OR "postgre" OR "postgr"'
    assert tiers["all"] == '"postgresql" AND "ecs postgresql"'  # the exact tiers as typed
    assert tiers["all-prefix"] == (f'("postgresql" * OR {heads}) AND ("ecs postgresql" * OR '
                                   '"ecs postgresq" OR "ecs postgres" OR "ecs postgre" OR "ecs postgr")')
    assert query.cuts("python3", "python3") == ["python"]
    assert query.cuts("ticket1234", "ticket1234") == ["ticket"]  # never another number
    assert query.cuts("nodejs", "nodejs") == []  # heads of 5 (under of understand): too often a word
    assert query.cuts("deployment", "deplo") == []  # its bridge's prefix reaches every head already
    assert len(query.cuts("x" * 40, "x" * 40)) == query.MAX_CUTS
    assert query.cuts("2026120601", "2026120601") == [] and query.cuts("数据库迁移", "数据库迁移") == []
    # what snippets and a terminal's highlight look for: each head once, longest first
    assert query.heads(("postgresql", "postgres", "数据库")) == ["postgresq", "postgres", "postgre", "postgr"]


def test_two_words_the_index_holds_joined_are_one_clause_of_the_all_tiers():
    p = query.plan("back up the database", weak=frozenset({"the"}), held_joined=frozenset({"backup"}))
    tiers = dict(p.tiers)
    assert tiers["all"] == '(("back" AND "up") OR "backup") AND "database"'
    assert tiers["all-prefix"] == ('(("back" * AND "up" *) OR "backup" *) '
                                   'AND ("database" * OR "databas" OR "databa")')  # cuts: MIN_CUT
    assert "backup" not in tiers["any"]  # the `any` tiers match the words as typed
    assert dict(p.held)["all"] == '(("back" AND "up") OR "backup") AND "the" AND "database"'
    assert query.plan("back up", weak=frozenset({"up"}), held_joined=frozenset({"backup"})).tiers[0] == (
        "all", '(("back") OR "backup")')
    assert query.compounds("set up the db") == ["setup", "upthe", "thedb"]
