"""The lexicon: English cue phrases for each relation and words that name an answer type.

Built from the relation inventory's own templates (content words of every cloze and question
template, `template_cues`) plus general English paraphrase (below, `PARAPHRASES`): the ways
people say "died in" (pass away, place of demise, breathe one's last), "head of state" (chief of
state, monarch), "capital" (seat of government). It is not fitted to any question set: nothing
here quotes a dev question.

Cue syntax: words separated by spaces; a word ending in "*" matches any word it begins
("originat*" matches originated, originates); a lone "*" matches any one word."""
from __future__ import annotations

import re
from functools import lru_cache

from resolver.text.relations import inventory

STRONG, MEDIUM, WEAK = 1.0, 0.6, 0.3

# relation -> {cue: weight}. General English paraphrase of each relation.
PARAPHRASES: dict[str, dict[str, float]] = {
    "born_in": {"born": STRONG, "birth": STRONG, "birthplace": STRONG, "place of birth": STRONG,
                "native city": MEDIUM, "hometown": MEDIUM, "home town": MEDIUM},
    "died_in": {"die*": STRONG, "death": STRONG, "dead": MEDIUM, "pass* away": STRONG,
                "demise": STRONG, "breath* * last": STRONG, "breath* their last": STRONG,
                "last breath": STRONG, "perish*": STRONG, "deceased": MEDIUM, "expire*": MEDIUM,
                "buried": WEAK},
    "work_location": {"work* in": MEDIUM, "worked": MEDIUM, "work": MEDIUM, "work location": STRONG,
                      "location of work": STRONG, "place of work": STRONG, "workplace": STRONG,
                      "work place": STRONG, "work hours": MEDIUM, "office": WEAK,
                      "job": WEAK, "employed in": MEDIUM},
    "married_to": {"married": STRONG, "marry": STRONG, "marri*": STRONG, "spouse": STRONG,
                   "partner": STRONG, "wife": STRONG, "husband": STRONG, "wed*": MEDIUM,
                   "consort": STRONG},
    "child": {"child": STRONG, "children": STRONG, "son": STRONG, "daughter": STRONG,
              "offspring": STRONG, "kid*": MEDIUM, "heir": MEDIUM, "successor": MEDIUM,
              "descendant": MEDIUM, "progeny": STRONG},
    "citizenship": {"citizen*": STRONG, "nationality": STRONG, "national": MEDIUM,
                    "passport": MEDIUM, "belong*": WEAK, "hail* from": MEDIUM, "come* from": WEAK,
                    "from": WEAK, "country": WEAK, "compatriot": MEDIUM},
    "country_of_origin": {"origin*": STRONG, "come* from": MEDIUM, "came from": MEDIUM,
                          "created in": STRONG, "creat*": WEAK, "hail* from": MEDIUM,
                          "from": WEAK, "birthplace": MEDIUM, "develop*": WEAK, "invent*": MEDIUM,
                          "gave rise": MEDIUM, "give* rise": MEDIUM, "first made": MEDIUM,
                          "made": WEAK, "emerge*": MEDIUM, "arose": MEDIUM, "started": WEAK,
                          "country": WEAK, "nation": WEAK, "birth": WEAK},
    "founded_in": {"founded in": STRONG, "found*": MEDIUM, "establish*": MEDIUM,
                   "come into existence": MEDIUM, "came into existence": MEDIUM,
                   "set up": MEDIUM, "formed": MEDIUM, "began": WEAK, "started": WEAK,
                   "origin*": WEAK},
    "founded_by": {"found*": STRONG, "founder*": STRONG, "co-found*": STRONG,
                   "establish*": STRONG, "set up": MEDIUM, "start*": WEAK, "creat*": WEAK,
                   "formed": WEAK},
    "created_by": {"creat*": STRONG, "creator": STRONG, "invent*": MEDIUM, "devis*": MEDIUM,
                   "design*": MEDIUM, "made": WEAK, "came up with": MEDIUM},
    "author": {"author*": STRONG, "writ*": STRONG, "wrote": STRONG, "writer": STRONG,
               "penned": STRONG, "novelist": MEDIUM, "poet": MEDIUM, "book": WEAK},
    "performed_by": {"perform*": STRONG, "performer": STRONG, "sing*": STRONG, "sung": STRONG,
                     "singer": STRONG, "band": MEDIUM, "artist": MEDIUM, "actor": MEDIUM,
                     # "the sport played by X" is X's sport: "played by" is a weak cue here.
                     "actress": MEDIUM, "played by": WEAK, "portray*": STRONG,
                     "recorded": MEDIUM, "album": WEAK, "song": WEAK, "character": MEDIUM,
                     "plays": WEAK, "play": WEAK, "role": WEAK, "starred": MEDIUM,
                     "star*": WEAK},
    "developer": {"develop*": STRONG, "developer": STRONG, "made by": WEAK, "built": WEAK,
                  "programmed": MEDIUM, "creat*": WEAK},
    "produced_by": {"produc*": STRONG, "manufactur*": STRONG, "maker": STRONG, "made by": STRONG,
                    "made": MEDIUM, "build*": MEDIUM, "built": MEDIUM, "company": WEAK,
                    "company that": MEDIUM},
    "capital": {"capital": STRONG, "seat of government": STRONG, "capital city": STRONG,
                "administrative center": MEDIUM, "administrative centre": MEDIUM},
    # Who leads a country is its head of state; who leads its government, the head of
    # government. Office words and the ways English says either.
    "head_of_state": {"head of state": STRONG, "chief of state": STRONG, "monarch": STRONG,
                      "king": MEDIUM, "queen": MEDIUM, "sovereign": MEDIUM, "presid*": MEDIUM,
                      "ruler": MEDIUM, "rule*": WEAK, "head of the state": STRONG,
                      "state": WEAK, "head of * country": STRONG, "head of * nation": STRONG,
                      "lead*": MEDIUM, "led by": MEDIUM,
                      "lead* * country": MEDIUM, "lead* of * country": MEDIUM,
                      "lead* * nation": MEDIUM, "lead* of * nation": MEDIUM,
                      "lead* * state": MEDIUM, "lead* of * state": MEDIUM,
                      "country s leader": MEDIUM, "nation s leader": MEDIUM,
                      "national leader": MEDIUM, "state leader": MEDIUM, "top leader": MEDIUM,
                      "supreme leader": STRONG, "in charge of * country": MEDIUM,
                      "in charge of * nation": MEDIUM, "highest office": MEDIUM,
                      "top office": MEDIUM, "commander in chief": MEDIUM,
                      "figurehead": MEDIUM, "reign*": MEDIUM, "throne": MEDIUM,
                      "crown": WEAK, "royal": WEAK, "emperor": MEDIUM, "empress": MEDIUM,
                      "sultan": MEDIUM, "emir": MEDIUM, "tsar": MEDIUM, "czar": MEDIUM},
    "head_of_government": {"head of government": STRONG, "head of the government": STRONG,
                           "prime minister": STRONG, "premier": STRONG, "chancellor": MEDIUM,
                           "government": MEDIUM, "leader": WEAK, "lead*": WEAK,
                           "mayor": MEDIUM, "governor": MEDIUM, "chief executive": MEDIUM,
                           "runs": WEAK, "govern*": MEDIUM, "first minister": STRONG,
                           "chief minister": STRONG, "pm": MEDIUM,
                           "lead* * government": STRONG, "lead* of * government": STRONG,
                           "government leader": STRONG, "government s leader": STRONG,
                           "government s head": STRONG, "head* * government": STRONG,
                           "run* * government": STRONG, "in charge of * government": STRONG,
                           "helm of * government": STRONG, "cabinet": MEDIUM,
                           "run* * country": MEDIUM, "run* * nation": MEDIUM,
                           "administration": WEAK},
    "officeholder": {"office": MEDIUM, "officeholder": STRONG, "holder": MEDIUM,
                     "incumbent": MEDIUM},
    "ceo": {"ceo": STRONG, "chief executive officer": STRONG, "chief executive": STRONG,
            "executive": MEDIUM, "boss": MEDIUM, "runs": WEAK, "head": WEAK, "lead*": WEAK},
    "chairperson": {"chairperson": STRONG, "chairman": STRONG, "chairwoman": STRONG,
                    "chair": STRONG, "chairs": STRONG, "president": WEAK, "head": WEAK,
                    "leader": WEAK, "lead*": WEAK},
    "director": {"director*": STRONG, "direct*": MEDIUM, "manager": MEDIUM, "manag*": MEDIUM,
                 "head": WEAK, "run*": WEAK, "lead*": WEAK},
    "head_coach": {"coach*": STRONG, "head coach": STRONG, "trainer": MEDIUM, "manager": WEAK,
                   "train*": WEAK},
    "continent": {"continent*": STRONG, "landmass": MEDIUM, "part of the world": MEDIUM},
    "located_in": {"located": MEDIUM, "location": MEDIUM, "situated": MEDIUM, "lies": WEAK,
                   "where": WEAK},
    # "country" alone names a type ("the country where ..."), not this relation.
    "located_in_country": {"located in * country": STRONG, "situated": WEAK,
                           "located": WEAK},
    "headquarters": {"headquarter*": STRONG, "head office": STRONG, "hq": STRONG,
                     "based": MEDIUM, "main office": STRONG, "seat": WEAK},
    "educated_at": {"educat*": STRONG, "university": STRONG, "univeristy": STRONG,
                    "college": STRONG, "school": STRONG, "stud*": MEDIUM, "alma mater": STRONG,
                    "attend*": STRONG, "graduat*": STRONG, "institution": MEDIUM,
                    "academy": MEDIUM, "taught": WEAK},
    "field_of_work": {"field": STRONG, "occupation": STRONG, "profession*": STRONG,
                      "job": STRONG, "career": STRONG, "work": MEDIUM, "works": MEDIUM,
                      "role": MEDIUM, "do for a living": STRONG, "line of work": STRONG,
                      "vocation": STRONG, "trade": MEDIUM, "kind of work": STRONG,
                      "title": WEAK},
    "employer": {"employ*": STRONG, "work* for": STRONG, "worked at": MEDIUM,
                 "works at": MEDIUM, "company": MEDIUM, "hired": MEDIUM, "organization": WEAK,
                 "organisation": WEAK, "works": WEAK, "work": WEAK},
    "religion": {"religio*": STRONG, "faith": STRONG, "belief*": MEDIUM, "worship*": MEDIUM,
                 "follow*": WEAK, "affiliat*": MEDIUM, "creed": STRONG, "church": MEDIUM,
                 "denomination": STRONG, "believe*": MEDIUM, "practi*": WEAK},
    "sport": {"sport*": STRONG, "game": MEDIUM, "plays": WEAK, "play": WEAK, "played": WEAK,
              "playing": WEAK, "compet*": MEDIUM, "athlet*": MEDIUM},
    "position": {"position*": STRONG, "role": MEDIUM, "specialt*": STRONG, "specializ*": STRONG,
                 "specialis*": STRONG, "play* as": STRONG, "plays": WEAK, "play": WEAK,
                 "played": WEAK, "positional": STRONG},
    "genre": {"genre": STRONG, "music": STRONG, "musical": STRONG, "style": STRONG,
              "kind of music": STRONG, "type of music": STRONG, "fall* under": MEDIUM,
              "categor*": WEAK, "plays": WEAK, "play": WEAK},
    "famous_for": {"famous": STRONG, "known for": STRONG, "renowned": STRONG, "notable": STRONG,
                   "best known": STRONG, "celebrated": STRONG, "work": MEDIUM,
                   "creation": MEDIUM, "achievement": MEDIUM, "masterpiece": STRONG,
                   "significant": MEDIUM, "noted": STRONG, "fame": STRONG},
    "language_of_work": {"written in": STRONG, "language": MEDIUM, "writ*": WEAK},
    "original_language": {"original language": STRONG, "language": MEDIUM,
                          "originally": MEDIUM},
    "official_language": {"official language": STRONG, "official*": STRONG, "language": MEDIUM,
                          "tongue": MEDIUM},
    "languages_spoken": {"speak*": STRONG, "spoke*": STRONG, "language": MEDIUM,
                         "tongue": STRONG, "fluent": STRONG, "sign": MEDIUM, "signed": MEDIUM,
                         "write": WEAK, "know* how": WEAK, "communicat*": MEDIUM},
    "record_label": {"label": STRONG, "record label": STRONG, "represent*": STRONG,
                     "record company": STRONG, "signed to": STRONG},
    "original_broadcaster": {"broadcast*": STRONG, "network": STRONG, "channel": STRONG,
                             "aired": STRONG, "air*": MEDIUM, "televis*": MEDIUM},
    "twinned_with": {"twin*": STRONG, "sister city": STRONG, "partner city": STRONG,
                     "twinned": STRONG},
    "member_of": {"member*": STRONG, "belong*": MEDIUM, "part of": MEDIUM, "affiliated": WEAK,
                  "organization": WEAK, "organisation": WEAK, "join*": MEDIUM},
    "owned_by": {"own*": STRONG, "owner": STRONG, "parent company": STRONG,
                 "property of": STRONG, "belong*": WEAK},
}

# Words that name the answer type when they follow a question word ("which city", "what
# language") or head the phrase asked about ("the name of the city ...").
TYPE_WORDS: dict[str, str] = {
    "city": "city", "town": "city", "capital": "city", "municipality": "city",
    "country": "country", "nation": "country", "state": "country",
    "continent": "continent", "language": "language", "languages": "language",
    "tongue": "language",
    "person": "person", "individual": "person", "who": "person", "whom": "person",
    "whose": "person", "leader": "person", "man": "person", "woman": "person",
    "company": "organisation", "organization": "organisation", "organisation": "organisation",
    "institution": "organisation", "university": "organisation", "college": "organisation",
    "school": "organisation", "network": "organisation", "broadcaster": "organisation",
    "label": "organisation", "team": "organisation", "club": "organisation",
    "manufacturer": "organisation", "developer": "organisation", "employer": "organisation",
    "sport": "sport", "game": "sport",
    "religion": "religion", "faith": "religion", "belief": "religion",
    "genre": "genre", "music": "genre", "style": "genre",
    "occupation": "occupation", "profession": "occupation", "job": "occupation",
    "field": "occupation", "career": "occupation", "role": "occupation",
    "position": "position",
    "location": "place", "place": "place", "where": "place",
}

# Type compatibility: the question's type -> object types it accepts (strength 1 = exact).
TYPE_ACCEPTS: dict[str, dict[str, float]] = {
    # "Where did X study?": at a university, an institution is where one studies or works.
    "place": {"city": 1.0, "country": 0.8, "continent": 0.6, "place": 1.0,
              "organisation": 0.5},
    "city": {"city": 1.0, "place": 0.8},
    "country": {"country": 1.0, "place": 0.6},
    "organisation": {"organisation": 1.0},
    "occupation": {"occupation": 1.0, "position": 0.7},
    "position": {"position": 1.0, "occupation": 0.7},
    # "Who developed X?" may be answered by a company as well as by a person.
    "person": {"person": 1.0, "organisation": 0.7},
}

# Function words never used as cue evidence on their own.
STOPWORDS = frozenset("""a an the of in on at to for by with from is was were are be been
being which what who whom whose where when how that this these those does did do has have
had its his her their it he she they there name called""".split())


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+\*?|\*", text.casefold()))


# Template words too generic to say which relation is meant ("the city of", "located").
_GENERIC = frozenset({"located", "current", "head", "kind", "type", "plays", "play", "music",
                      "company", "field", "work", "works", "worked", "language", "name"})


def template_cues(rel) -> dict[str, float]:
    """Content words of the relation's own cloze and question templates (weak: the paraphrases
    below say the same with more care). Type words and generic words are left out."""
    words = set()
    for text in (rel.template, rel.question):
        for w in _tokens(text.replace("[X]", " ").replace("__", " ")):
            if (w not in STOPWORDS and w not in TYPE_WORDS and w not in _GENERIC
                    and len(w) > 2):
                words.add(w)
    return {w: WEAK for w in sorted(words)}


@lru_cache(maxsize=None)
def template_words(relation: str) -> frozenset[str]:
    """Content words of the relation's own cloze and question templates, type words left out:
    the words English uses to say that relation again around its cue ("the headquarters of X
    are located in": "located" is how the headquarters template says where)."""
    rel = inventory()[relation]
    words = set()
    for text in (rel.template, rel.question):
        for w in _tokens(text.replace("[X]", " ").replace("__", " ")):
            if w not in STOPWORDS and w not in TYPE_WORDS and len(w) > 2:
                words.add(w)
    return frozenset(words)


def _base(word: str) -> str:
    """The word without an inflection ("headquartered", "locates" -> "headquarter", "locat")."""
    for suffix in ("ed", "es", "s", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


@lru_cache(maxsize=None)
def _relations_by_base() -> dict[str, frozenset[str]]:
    """A template word without its inflection -> the relations whose template words have it."""
    index: dict[str, set[str]] = {}
    for relation in inventory():
        for word in template_words(relation):
            index.setdefault(_base(word), set()).add(relation)
    return {base: frozenset(relations) for base, relations in index.items()}


_NONE: frozenset[str] = frozenset()


@lru_cache(maxsize=1 << 16)      # asked of every cue phrase the compiler or the search weighs
def restated(words: tuple[str, ...]) -> frozenset[str]:
    """The relations that question words say nothing but again: each content word (function
    and type words aside) is one of the relation's template words, inflections aside. A noun
    that names another relation ("founder" beside "founded") is not the same word. Empty when
    no content word is left. One lookup per word instead of a test per relation."""
    index = _relations_by_base()
    found = None
    for word in words:
        if word in STOPWORDS or word in TYPE_WORDS:
            continue
        relations = index.get(_base(word), _NONE)
        found = relations if found is None else found & relations
        if not found:
            return _NONE
    return _NONE if found is None else found


def restates(words: tuple[str, ...], relation: str) -> bool:
    """Whether question words say nothing but `relation` again (see `restated`)."""
    return relation in restated(words)


@lru_cache(maxsize=None)
def cues() -> dict[str, tuple[tuple[tuple[str, ...], float], ...]]:
    """relation -> ((cue tokens, weight), ...), longest cues first. Paraphrase weights win over
    template-word weights for the same cue."""
    out = {}
    for name, rel in inventory().items():
        # A relation of another source than MQuAKE (the ALFWorld-Revision `location`) takes
        # no cue from its templates: "now" would cue it in FactConsolidation's questions. Its
        # question template compiles by the rule compiler.
        merged = dict(template_cues(rel)) if rel.source == "MQuAKE" else {}
        merged.update(PARAPHRASES.get(name, {}))
        items = [(_tokens(c), w) for c, w in merged.items()]
        items = [(t, w) for t, w in items if t]
        items.sort(key=lambda tw: (-len(tw[0]), -tw[1], tw[0]))
        out[name] = tuple(items)
    return out


def lexicon_sha256() -> str:
    import hashlib
    import json
    body = json.dumps({"paraphrases": PARAPHRASES, "types": TYPE_WORDS,
                       "accepts": TYPE_ACCEPTS, "stop": sorted(STOPWORDS)}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()
