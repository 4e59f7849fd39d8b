"""A small memory vault for the semantic tests: everyday cards in Chinese and English, a few
pairs that say the same thing in the other language, and filler on unrelated subjects."""

CARDS = {
    "03-Knowledge/ollama-models.md": ("本机 Ollama 已装模型清单",
        "qwen2.5:7b、llama3.1:8b 和 nomic-embed-text，放在 ~/.ollama 下，占用约 15 GB。"),
    "03-Knowledge/backup.md": ("Database backups",
        "The PostgreSQL database is dumped every night at 02:00 and copied to the S3 bucket "
        "acme-backups; dumps are kept for 30 days."),
    "03-Knowledge/cat.md": ("家里的猫",
        "猫每天早晚各喂一次干粮，周末加一个罐头；猫砂每三天换一次。"),
    "03-Knowledge/dentist.md": ("Dentist appointment",
        "Teeth cleaning is booked with Dr. Weber every six months; the next visit is in March."),
    "03-Knowledge/nginx.md": ("nginx 站点根目录",
        "生产环境 nginx 的站点根目录是 /srv/www，配置在 /etc/nginx/sites-enabled。"),
    "03-Knowledge/ssh.md": ("服务器登录方式", "生产服务器只允许私钥登录，禁止密码；密钥是 ~/.ssh/id_ed25519。"),
    "03-Knowledge/coffee.md": ("Coffee at the office",
        "The office espresso machine needs descaling every month; beans are ordered from a local roaster."),
    "03-Knowledge/garden.md": ("阳台花园", "阳台上种了番茄和罗勒，夏天每天傍晚浇水一次。"),
    "03-Knowledge/bike.md": ("Bike maintenance",
        "Chain oiled every 300 km; the tyres are kept at 4.5 bar and the brakes were replaced in May."),
    "03-Knowledge/geshui.md": ("报税", "每年三月前在个税 App 上完成年度汇算，专项附加扣除填房租。"),
    "03-Knowledge/python.md": ("Python versions",
        "Projects use Python 3.11 managed by pyenv; the system Python is left alone."),
    "03-Knowledge/train.md": ("Commute", "The 7:42 train to the city is usually on time; the bus is the fallback."),
    "03-Knowledge/longjing.md": ("茶叶", "龙井放在冰箱里保存，泡的时候水温八十度左右。"),
    "03-Knowledge/router.md": ("Home network",
        "The router is at 192.168.1.1; the guest Wi-Fi is called acme-guest and is off at night."),
    "03-Knowledge/piano.md": ("钢琴课", "女儿每周六上午十点上钢琴课，老师姓王，学费按月付。"),
    "03-Knowledge/passport.md": ("Passport", "The passport expires in 2031; it is kept in the drawer of the desk."),
    "03-Knowledge/car.md": ("车辆保养", "汽车每一万公里换一次机油，上次保养在四月，轮胎是米其林。"),
    "03-Knowledge/run.md": ("Running", "Long run on Sundays, 15 km along the river, easy pace."),
    "03-Knowledge/books.md": ("读书清单", "今年想读完《三体》和《活着》，每天睡前读半小时。"),
    "03-Knowledge/plants.md": ("Houseplants", "The fern wants shade and humidity; the cactus is watered once a month."),
    "03-Knowledge/cook.md": ("周末做饭", "周末常做红烧肉和番茄炒蛋，米饭用电饭煲定时。"),
    "03-Knowledge/git.md": ("Git conventions", "Commit messages are in the imperative; main is protected and needs a review."),
    "03-Knowledge/weather.md": ("天气", "这里冬天很冷，经常下雪，出门要穿羽绒服。"),
    "03-Knowledge/music.md": ("Music", "Jazz in the morning, classical while working, no lyrics."),
    "02-Projects/deploy.md": ("部署流程", "ecs-prod 先在 staging 验证，再由 CI 打标签后发布到生产。"),
}
# Pairs in one language each way: the query shares no word with its card.
CROSS = [
    ("数据库每天晚上备份到哪里", "03-Knowledge/backup.md"),
    ("how often is the cat fed", "03-Knowledge/cat.md"),
    ("什么时候去看牙医", "03-Knowledge/dentist.md"),
    ("when do I water the tomatoes on the balcony", "03-Knowledge/garden.md"),
]
