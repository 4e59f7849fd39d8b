"""A deterministic synthetic vault for the performance bench.

Mixed Chinese/English cards, bodies from a few hundred to a few thousand characters, frontmatter
as a real vault has it (title, kind, tags, created, updated; one in twenty invalid), spread
over the kind folders. Words follow a Zipf law over a vocabulary of thousands, as real text does,
so a query word may match most cards or a handful. Each card carries one marker token found in no other card, so a search for it has
exactly one right answer.

    python -m bench.generate DIR N [--seed S]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import random
from pathlib import Path

from memsync.model import KIND_FOLDERS


def _split(text: str) -> list[str]:
    return text.split()


ZH_WORDS = _split(
    "服务器 数据库 备份 恢复 部署 发布 监控 告警 日志 磁盘 内存 网络 证书 域名 缓存 队列 "
    "任务 定时 配置 环境 生产 测试 预发 版本 回滚 迁移 索引 查询 性能 延迟 吞吐 容器 镜像 "
    "集群 节点 负载 均衡 安全 权限 密钥 账号 登录 跳板 防火墙 端口 协议 接口 文档 需求 "
    "设计 决策 会议 复盘 事故 教训 客户 订单 支付 退款 物流 库存 价格 会员 活动 报表 财务 "
    "发票 合同 供应商 预算 费用 账单 项目 计划 进度 周报 目标 风险 依赖 升级 补丁 漏洞 "
    "同步 异步 重试 超时 限流 熔断 降级 灰度 开关 模型 提示词 向量 检索 分词 笔记 卡片"
)
EN_WORDS = _split(
    "server database backup restore deploy release monitor alert log disk memory network "
    "certificate domain cache queue job cron config staging production test version rollback "
    "migration index query latency throughput container image cluster node balancer security "
    "permission secret account login bastion firewall port protocol api docs design decision "
    "meeting incident lesson customer order payment refund shipping stock price member report "
    "invoice contract vendor budget cost bill project plan progress weekly goal risk upgrade "
    "patch sync async retry timeout ratelimit feature flag model prompt vector search token "
    "nginx redis postgres sqlite docker compose systemd prometheus grafana restic wireguard"
)
# Common Han characters, from which the long tail of two-character words is drawn.
HAN = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产"
    "种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业"
    "本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利"
    "比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文"
    "总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干"
    "做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共"
    "权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张"
)
ZH_PUNCT = "，，，。；"
KINDS = list(KIND_FOLDERS)
HOSTS = [f"{p}-{e}" for p in ("ecs", "rds", "redis", "web", "api", "job") for e in ("prod", "staging", "dev")]


SYLLABLES = _split("ka ro mi ten sul vor pa lin dex tor qua bel fi nor gra zu hex mon tri ved")
VOCAB_SIZE = 4000


def _vocabulary() -> tuple[list[str], list[str]]:
    """The curated words first (most frequent), then a fixed long tail. Independent of the seed."""
    rng = random.Random(20260101)
    zh = list(dict.fromkeys(ZH_WORDS + ["".join(rng.sample(HAN, 2)) for _ in range(VOCAB_SIZE)]))
    en = list(dict.fromkeys(
        EN_WORDS + ["".join(rng.choices(SYLLABLES, k=rng.randint(2, 3))) for _ in range(VOCAB_SIZE)]
    ))
    return zh[:VOCAB_SIZE], en[:VOCAB_SIZE]


ZH_VOCAB, EN_VOCAB = _vocabulary()
# Zipf: the word of rank r turns up in proportion to 1/r.
ZIPF = list(itertools.accumulate(1 / r for r in range(1, VOCAB_SIZE + 1)))


def words(rng: random.Random, vocab: list[str], k: int) -> list[str]:
    return rng.choices(vocab, cum_weights=ZIPF[: len(vocab)], k=k)


def marker(seed: int, i: int) -> str:
    """A token no other card (and no generated text) contains: letters and digits only, so
    memsync's tokenizer keeps it whole."""
    return f"qz{seed:x}k{i:07d}"


def superseded(i: int) -> bool:
    """One card in twenty is no longer valid (default searches hide it)."""
    return i % 20 == 19


def _zh_sentence(rng: random.Random) -> str:
    picked = words(rng, ZH_VOCAB, rng.randint(4, 12))
    text = "".join(w + (rng.choice(ZH_PUNCT) if rng.random() < 0.2 else "") for w in picked)
    return text.rstrip("，；。") + "。"


def _en_sentence(rng: random.Random) -> str:
    return " ".join(words(rng, EN_VOCAB, rng.randint(6, 16))).capitalize() + "."


def _mixed_sentence(rng: random.Random) -> str:
    # The way people really write: Chinese with English identifiers and hosts inside.
    parts = words(rng, ZH_VOCAB, rng.randint(3, 8))
    parts.insert(rng.randrange(len(parts)), rng.choice(HOSTS) if rng.random() < 0.3 else words(rng, EN_VOCAB, 1)[0])
    return "".join(parts) + "。"


def _pool(rng: random.Random, n: int = 20000) -> list[str]:
    makers = (_zh_sentence, _en_sentence, _mixed_sentence)
    return [makers[i % 3](rng) for i in range(n)]


def _body(rng: random.Random, pool: list[str], mark: str) -> str:
    target = int(300 * 10 ** rng.random())  # 300 .. 3000 characters, log-uniform
    paragraphs, size = [], 0
    while size < target:
        para = "".join(rng.choices(pool, k=rng.randint(2, 6)))
        paragraphs.append(("- " if rng.random() < 0.25 else "") + para)
        size += len(para)
    paragraphs.insert(rng.randrange(len(paragraphs) + 1), f"标记 {mark}")
    return "\n\n".join(paragraphs)


def card_file(rng: random.Random, pool: list[str], i: int, mark: str, day: dt.date) -> tuple[str, str]:
    kind = KINDS[i % len(KINDS)]
    title = "".join(rng.choices(ZH_VOCAB[:2000], k=2)) + " " + " ".join(rng.choices(EN_VOCAB[:2000], k=2))
    tags = rng.sample(ZH_WORDS[:40] + EN_WORDS[:40], k=rng.randint(1, 3))
    created = f"{day.isoformat()}T{rng.randint(8, 22):02d}:{rng.randint(0, 59):02d}:00+08:00"
    lines = ["---", f"title: {title} {i}", f"kind: {kind}", f"tags: [{', '.join(tags)}]",
             f"created: {created}", f"updated: {created}"]
    if superseded(i):
        lines.append(f"invalid_at: {(day + dt.timedelta(days=30)).isoformat()}")
    lines.append("---")
    folder = KIND_FOLDERS[kind]
    sub = f"{folder}/g{i // 500:03d}"  # a few hundred files per folder, like a real vault
    return f"{sub}/card-{i:07d}.md", "\n".join(lines) + "\n" + _body(rng, pool, mark) + "\n"


def see_also(rng: random.Random, i: int, n: int, links: int) -> str:
    """A closing line of `links` wikilinks from card i, as notes link: half to cards written
    near it (the same project, the same week), half to any card; some with a label."""
    picked = []
    for k in range(links):
        j = (i + rng.randint(1, 50)) % n if k % 2 == 0 else rng.randrange(n)
        picked.append(f"[[card-{j:07d}|{' '.join(words(rng, EN_VOCAB, 2))}]]" if rng.random() < 0.3
                      else f"[[card-{j:07d}]]")
    return "\n\n相关 see also: " + ", ".join(picked)


def generate_vault(root: Path, n: int, seed: int = 0, links: int = 0) -> list[tuple[str, str]]:
    """Write n cards under root; returns (relative path, marker) for each. Same seed, same bytes.
    `links`: wikilinks at the end of each card; the cards are the same with or without them."""
    root = Path(root)
    rng = random.Random(seed)
    linking = random.Random(seed + 1)  # its own stream: the text does not depend on the links
    pool = _pool(rng)
    start = dt.date(2024, 1, 1)
    out = []
    made: set[str] = set()
    for i in range(n):
        mark = marker(seed, i)
        rel, text = card_file(rng, pool, i, mark, start + dt.timedelta(days=i % 900))
        if links:
            text = text[:-1] + see_also(linking, i, n, links) + "\n"
        path = root / rel
        folder = str(path.parent)
        if folder not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        path.write_text(text, encoding="utf-8")
        out.append((rel, mark))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--links", type=int, default=0, help="wikilinks at the end of each card")
    args = parser.parse_args(argv)
    cards = generate_vault(args.root, args.n, args.seed, args.links)
    print(f"{len(cards)} cards under {args.root}")


if __name__ == "__main__":
    main()
