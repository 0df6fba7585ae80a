"""The training text of the tiny built-in model: the Debian corpora the lesson vectors use
(dict-gcide, wordnet-base, fortunes, dict-devil), read from their installed files, cleaned to plain
ASCII prose, one document per dictionary entry, synset, cookie or paragraph.

Deterministic: files are read in sorted order and nothing here draws random numbers.
"""
import glob
import gzip
import os
import re
import unicodedata

GCIDE = "/usr/share/dictd/gcide.dict.dz"
DEVIL = "/usr/share/dictd/devil.dict.dz"
WORDNET = "/usr/share/wordnet"
FORTUNES = "/usr/share/games/fortunes"

# Fortune files that are pictures, not prose.
SKIPPED_FORTUNE_FILES = {"art", "ascii-art"}

# Documents containing one of these (whole words, any case) are left out. The 1911 Devil's
# Dictionary and some cookies use racial slurs; a model shown in classrooms should not learn to
# continue text with them.
BLOCKED_WORDS = re.compile(r"\b(nigger|niggers|nigga|chink|chinks|kike|kikes|wop|wops|spic|spics|"
                           r"faggot|faggots|fag|fags|coon|coons|darky|darkies|jap|japs)\b", re.I)


def ascii_text(s):
    """NFKD, then only printable ASCII, spaces and newlines; runs of spaces become one."""
    s = unicodedata.normalize("NFKD", s)
    s = s.replace("\t", " ").replace("\r", "")
    s = "".join(c for c in s if c == "\n" or " " <= c <= "~")
    lines = [re.sub(r" +", " ", line).strip() for line in s.split("\n")]
    return "\n".join(line for line in lines if line)


def paragraphs(text):
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def dict_body(path):
    """A dictd database without its 00-database-* header entries."""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read()
    return [p for p in paragraphs(text) if not p.lstrip().startswith("00-database")
            and not p.lstrip().startswith("00database")]


# GCIDE markup: accent codes ("na[i^]ve", "[=e]"), ligatures, nested [brackets] (etymologies,
# "[1913 Webster]", "[Obs.]"), pronunciations "\Ab*do"men\", "--Author." attributions.
_ACCENT = re.compile(r"\[([A-Za-z])[\^=`'\"~.,:]\]|\[[\^=`'\"~.,:]([A-Za-z])\]")
_LIGATURE = re.compile(r"\[(ae|oe|AE|OE)\]")
_BRACKET = re.compile(r"\[[^\[\]]*\]")
_PRONUNCIATION = re.compile(r"\\[^\\\n]*\\")
_ATTRIBUTION = re.compile(r"--\s*[A-Z][^.\n]{0,40}\.")
_BRACES = re.compile(r"[{}]")


def clean_gcide(p):
    p = _ACCENT.sub(lambda m: m.group(1) or m.group(2), p)
    p = _LIGATURE.sub(lambda m: m.group(1), p)
    for _ in range(4):  # nested brackets, innermost first
        p = _BRACKET.sub("", p)
    p = _PRONUNCIATION.sub("", p)
    p = _ATTRIBUTION.sub("", p)
    p = _BRACES.sub("", p)
    p = p.replace("*", "").replace("`", "")
    p = " ".join(p.split())  # a definition is one line of prose
    p = re.sub(r" ([,.;:])", r"\1", p)
    return ascii_text(p)


def gcide_documents():
    docs = []
    for p in dict_body(GCIDE):
        t = clean_gcide(p)
        if len(t) >= 20:
            docs.append(t)
    return docs


def devil_documents():
    return [t for t in (ascii_text(p) for p in dict_body(DEVIL)) if len(t) >= 20]


def wordnet_documents():
    """One per synset: its words, a colon, the gloss and its example sentences."""
    docs = []
    for part in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, "data." + part), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # licence header
                fields, gloss = line.split(" | ", 1)
                f_ = fields.split()
                count = int(f_[3], 16)
                words = [f_[4 + 2 * i].replace("_", " ") for i in range(count)]
                words = [re.sub(r"\([a-z]+\)$", "", w) for w in words]  # adjective markers (a)
                t = ascii_text(", ".join(words) + ": " + gloss.strip())
                if len(t) >= 20:
                    docs.append(t)
    return docs


def fortune_documents():
    docs = []
    for path in sorted(glob.glob(os.path.join(FORTUNES, "*"))):
        name = os.path.basename(path)
        if name.endswith((".dat", ".u8")) or name in SKIPPED_FORTUNE_FILES or os.path.isdir(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for cookie in re.split(r"^%\s*$", text, flags=re.M):
            t = ascii_text(cookie)
            if len(t) >= 20:
                docs.append(t)
    return docs


def all_documents():
    """(source name, documents) in a fixed order, slur-containing documents removed."""
    sources = [("gcide", gcide_documents()), ("wordnet", wordnet_documents()),
               ("fortunes", fortune_documents()), ("devil", devil_documents())]
    return [(name, [d for d in docs if not BLOCKED_WORDS.search(d)]) for name, docs in sources]
