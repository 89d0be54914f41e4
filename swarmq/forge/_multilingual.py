"""Cue phrases of lessons, decisions and gotchas in languages other than English.

Agents answer in their user's language: a Vietnamese or Chinese session states its findings
("Không có quyền sudo từ đây", "未安装 Node.js", "注意：…") in words the English keyword
classifier never sees. These tables give the same four signals (decision, failure, solution,
learning) and the same two modifiers (a reason, narration of the next step) for Vietnamese,
Chinese, Japanese, Korean, Spanish, Portuguese, French and German, from general knowledge of how
each language states a rule, a cause, a fix or a finding. They only run on text that is not
plain ASCII or that holds one of the Latin-script anchor words, so English transcripts pay one
``str.isascii`` per message.

Kept narrow on purpose: only phrases that state a finding (not installed, not supported, note:,
instead of, root cause), never common words ("không", "是", "no") on their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from swarmq.flywheel.model import KnowledgeType

STRONG, WEAK = 1.0, 0.5

_SIGNALS: list[tuple[KnowledgeType, float, str]] = [
    # decisions
    (
        KnowledgeType.DECISION,
        STRONG,
        r"(?:đã|chúng ta|chúng tôi|tôi) quyết định|quyết định (?:dùng|sử dụng|chọn|giữ)|chọn dùng|chuyển sang dùng|"  # vi
        r"我们决定|决定(?:使用|用|采用|改用|保留)|我们选择|改用|统一使用|決定しました|採用しました|にしました|"  # zh, ja
        r"결정했|사용하기로|"  # ko
        r"decidimos|optamos por|elegimos|decidiu-se|"  # es, pt
        r"nous avons décidé|on a décidé|wir haben (?:uns )?entschieden",
    ),  # fr, de
    (
        KnowledgeType.DECISION,
        WEAK,
        r"thay vì|thay cho|而不是|而非|代わりに|ではなく|대신|"
        r"en lugar de|en vez de|em vez de|au lieu de|statt(?:dessen)?\b",
    ),
    # failures: a cause
    (
        KnowledgeType.FAILURE,
        STRONG,
        r"nguyên nhân(?: là| gốc)?|lỗi là do|bị lỗi (?:vì|do)|"
        r"根本原因|根因|原因是|原因在于|问题在于|导致了?|根本原因は|原因は|"
        r"원인은|"
        r"causa raíz|la causa (?:es|era|fue)|a causa (?:é|era|foi)|la cause (?:est|était)|ursache (?:ist|war)",
    ),
    # solutions: a fix
    (
        KnowledgeType.SOLUTION,
        STRONG,
        r"cách (?:khắc phục|sửa)|khắc phục bằng|đã sửa bằng|giải pháp(?: là)?|"
        r"解决方法|解决方案|解决办法|修复方法|通过.{1,30}解决|绕过|変更して解決|で解決|解決策|回避策|"
        r"해결 방법|해결책|"
        r"la solución (?:es|fue)|se soluciona|solución:|a solução (?:é|foi)|la solution (?:est|était)|"
        r"behoben durch|die lösung (?:ist|war)",
    ),
    # learnings: rules, warnings, facts about the machine
    (
        KnowledgeType.LEARNING,
        STRONG,
        r"lưu ý\s*[:：]|chú ý\s*[:：]|cảnh báo(?: quan trọng)?\s*[:：]|bài học|hóa ra|"
        r"không có quyền|chưa (?:được )?cài(?: đặt)?|không được hỗ trợ|không hỗ trợ|luôn luôn|không bao giờ|"
        r"chưa (?:được )?cấu hình|chưa kết nối|未配置|没有配置|未连接|設定されていません|接続されていません|"
        r"설정되어 있지 않|연결되어 있지 않|no está (?:configurad|conectad)|não está (?:configurad|conectad)|"
        r"n'est pas (?:configuré|connecté)|ist nicht (?:konfiguriert|verbunden)|"
        r"注意[:：]|注意事项|需要注意|教训|踩坑|原来是|不支持|未安装|没有安装|没安装|无法访问|没有网络|"
        r"切勿|务必|千万不要|不要(?:在|用|使用|直接)|"
        r"注意点|落とし穴|教訓|インストールされていません|インストールされていない|サポートされていません|"
        r"サポートされていない|必ず|してはいけません|しないでください|"
        r"주의[:：]|설치되어 있지 않|지원되지 않|반드시|"
        r"\bnota\s*:|importante\s*:|no está instalad[oa]|no es compatible|nunca (?:uses|use|hagas)|"
        r"siempre (?:usa|use|hay que)|resulta que|lección aprendida|não está instalad[oa]|sempre use|nunca use|"
        r"attention\s*:|n'est pas installé|toujours utiliser|ne jamais|"
        r"achtung\s*:|hinweis\s*:|ist nicht installiert|immer (?:zuerst )?|niemals",
    ),
]
_MACHINE_FACTS = re.compile(
    r"không có quyền|chưa (?:được )?cài|未安装|没有安装|没安装|无法访问|没有网络|インストールされていな|"
    r"설치되어 있지 않|no está instalad|não está instalad|n'est pas installé|ist nicht installiert|"
    r"chưa (?:được )?cấu hình|chưa kết nối|未配置|没有配置|未连接|設定されていません|接続されていません|"
    r"설정되어 있지 않|연결되어 있지 않|no está (?:configurad|conectad)|não está (?:configurad|conectad)|"
    r"n'est pas (?:configuré|connecté)|ist nicht (?:konfiguriert|verbunden)",
    re.IGNORECASE,
)
"""Facts about the machine: only what the agent says counts (a user's pasted error does not)."""
_STANDING = re.compile(
    r"từ (?:giờ|nay) (?:trở đi|về sau)?|hãy nhớ|"  # vi
    r"记住|记得以后|(?:以后|往后|今后)(?:的|都|请|要|一律|每次)|从现在(?:开始|起)|从今以后|"
    r"(?:同意|确认)(?:之)?后再|"  # zh
    r"今後は|これからは|以後は|覚えておいて|"  # ja
    r"앞으로는|기억해|"  # ko
    r"a partir de ahora|de ahora en adelante|recuerda que|a partir de agora|"
    r"daqui (?:em|pra) diante|lembre-se|à partir de maintenant|désormais|dorénavant|"
    r"ab jetzt|von nun an|ab sofort|merk dir",
    re.IGNORECASE,
)
"""A rule the user gives a standing scope ("from now on", "remember"): for every later session,
not this task (the English cue is in ``forge._signals``). The user's words only: an agent that
says "remember" is talking about its own memory."""

_COMPILED = [(ktype, weight, re.compile(p, re.IGNORECASE)) for ktype, weight, p in _SIGNALS]

REASON = re.compile(
    r"\bvì\b|bởi vì|do đó|因为|由于|所以|ので|ため|から、|때문에|\bporque\b|\bpuisque\b|\bweil\b",
    re.IGNORECASE,
)
NARRATION = re.compile(
    r"^(?:để tôi|tôi sẽ|tôi đang|bây giờ|tiếp theo|được rồi|tốt[!,.]|xong[!,.]|đã xong|hoàn thành|"
    r"让我|我来|我将|我会|我先|现在|接下来|好的|完成了|已完成|"
    r"まず|次に|では、|了解|完了しました|"
    r"먼저|이제|"
    r"voy a|vamos a|ahora (?:voy|vamos)|listo|vou |agora vou|je vais|maintenant|ich werde|jetzt)",
    re.IGNORECASE,
)
"""The agent narrating its next step or reporting progress, in the same languages."""
HEDGE = re.compile(
    r"có thể|có lẽ|hình như|可能|也许|或许|大概|かもしれ|たぶん|아마|quizás|tal vez|talvez|"
    r"peut-être|vielleicht|것 같|似乎|看起来|看起來|ようです|みたい",
    re.IGNORECASE,
)
"""Hedging: what the speaker is not sure of is not yet a finding."""
LATIN_ANCHORS = frozenset(
    {
        "decidimos",
        "optamos",
        "elegimos",
        "nota",
        "importante",
        "siempre",
        "nunca",
        "sempre",
        "solucion",
        "solucao",
        "causa",
        "lugar",
        "vez",
        "resulta",
        "instalado",
        "instalada",
        "attention",
        "toujours",
        "jamais",
        "cause",
        "solution",
        "achtung",
        "hinweis",
        "immer",
        "niemals",
        "ursache",
        "statt",
        "stattdessen",
        "entschieden",
        "installiert",
        "configurado",
        "configurada",
        "conectado",
        "conectada",
        "konfiguriert",
        "verbunden",
        "porque",
        "weil",
        "puisque",
        "ahora",
        "agora",
        "adelante",
        "diante",
        "recuerda",
        "jetzt",
        "nun",
        "sofort",
    }
)
"""Latin-script cue words that can occur in pure-ASCII text ("Nota: siempre ...")."""


def foreign(text: str, text_words: Iterable[str]) -> bool:
    """Whether the non-English tables should run on ``text`` (cheap: one ``isascii``)."""
    return not text.isascii() or not LATIN_ANCHORS.isdisjoint(text_words)


def signals(text: str, *, observed: bool = True) -> dict[KnowledgeType, tuple[int, int, int]]:
    """Per knowledge type: (strong cues, weak cues, position of the first) found in ``text``."""
    found: dict[KnowledgeType, tuple[int, int, int]] = {}
    for ktype, weight, pattern in _COMPILED:
        match = pattern.search(text)
        if match is None:
            continue
        if not observed and ktype is KnowledgeType.LEARNING and _only_machine_facts(pattern, text):
            continue
        strong, weak, first = found.get(ktype, (0, 0, len(text)))
        if weight >= STRONG:
            strong += 1
        else:
            weak += 1
        found[ktype] = (strong, weak, min(first, match.start()))
    if not observed:
        match = _STANDING.search(text)
        if match is not None:
            strong, weak, first = found.get(KnowledgeType.LEARNING, (0, 0, len(text)))
            found[KnowledgeType.LEARNING] = (strong + 1, weak, min(first, match.start()))
    return found


def _only_machine_facts(pattern: re.Pattern[str], text: str) -> bool:
    """Every learning cue in ``text`` is a machine fact (which a user's paste does not prove)."""
    return all(_MACHINE_FACTS.fullmatch(m.group(0)) for m in pattern.finditer(text))
