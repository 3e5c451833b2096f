"""Build the synthetic recruiting collection shipped in ``src/rankmeter/datasets/recruiting``.

The collection is generated from a hidden ground truth: every candidate has a true role,
seniority, set of skills and location, and every job opening has requirements. Profiles are a
noisy rendering of the truth (synonyms such as "k8s" for Kubernetes, skills left out, buzzwords
the candidate does not really have), and the graded labels come from the truth alone, never
from the systems. Two systems then rank the profiles:

``keyword``
    BM25 over the profile text, as a plain search box would.
``tuned``
    BM25 over normalised text (a synonym table) with the headline weighted up, plus features for
    role, seniority and location parsed from the text. Better on average, but its hand-made
    dictionaries have gaps, so it loses on some openings.

Judgments are pooled the usual way: each system's top 15, ten random profiles and the hiring
team's shortlist per opening; retrieved profiles outside the pool stay unjudged.

Everything is seeded; running the script again rewrites the shipped files byte for byte::

    python scripts/build_recruiting_demo.py            # writes into the package
    python scripts/build_recruiting_demo.py --out DIR  # writes elsewhere (the tests compare)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SEED = 22
N_BACKGROUND = 176
N_TARGETED = 6
TOP = 100
POOL_DEPTH = 15
POOL_RANDOM = 10

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "rankmeter" / "datasets" / "recruiting"

LEVELS = ("junior", "mid-level", "senior", "staff")
LEVEL_YEARS = ((0, 2), (3, 5), (6, 9), (10, 16))
CITIES = (
    "Berlin",
    "Munich",
    "Hamburg",
    "Amsterdam",
    "London",
    "Paris",
    "Lisbon",
    "Warsaw",
    "Madrid",
    "Vienna",
)
REMOTE = "Remote"


@dataclass(frozen=True)
class Role:
    key: str
    headlines: tuple[str, ...]
    core: tuple[str, ...]
    extra: tuple[str, ...]
    related: tuple[str, ...] = ()


ROLES: dict[str, Role] = {
    r.key: r
    for r in (
        Role(
            "backend",
            (
                "Backend Engineer",
                "Backend Developer",
                "Software Engineer, Backend",
                "Server-side Developer",
            ),
            ("Python", "Java", "Go", "PostgreSQL", "Docker", "REST APIs"),
            (
                "Kubernetes",
                "Kafka",
                "Redis",
                "AWS",
                "Django",
                "Spring Boot",
                "distributed systems",
                "gRPC",
            ),
            ("fullstack", "data_engineer", "sre"),
        ),
        Role(
            "frontend",
            ("Frontend Engineer", "Frontend Developer", "UI Engineer", "Web Developer"),
            ("JavaScript", "TypeScript", "React", "CSS"),
            ("Vue", "Next.js", "GraphQL", "accessibility", "Figma", "Jest"),
            ("fullstack",),
        ),
        Role(
            "fullstack",
            ("Full-stack Engineer", "Full-stack Developer", "Software Engineer, Full-stack"),
            ("TypeScript", "React", "Node.js", "PostgreSQL"),
            ("JavaScript", "GraphQL", "Docker", "AWS", "Python", "Next.js"),
            ("backend", "frontend"),
        ),
        Role(
            "data_scientist",
            ("Data Scientist", "Applied Scientist", "Quantitative Analyst"),
            ("Python", "SQL", "statistics", "A/B testing"),
            ("pandas", "scikit-learn", "R", "Tableau", "causal inference", "forecasting"),
            ("ml_engineer", "data_engineer"),
        ),
        Role(
            "ml_engineer",
            ("Machine Learning Engineer", "ML Engineer", "AI Engineer"),
            ("Python", "PyTorch", "MLOps", "machine learning"),
            ("TensorFlow", "Kubernetes", "Spark", "LLMs", "model serving", "Docker"),
            ("data_scientist", "data_engineer"),
        ),
        Role(
            "data_engineer",
            ("Data Engineer", "Big Data Engineer", "Analytics Engineer"),
            ("SQL", "Python", "Spark", "Airflow"),
            ("Kafka", "dbt", "Snowflake", "AWS", "Scala", "data modeling"),
            ("backend", "data_scientist"),
        ),
        Role(
            "sre",
            ("Site Reliability Engineer", "SRE", "DevOps Engineer", "Platform Engineer"),
            ("Kubernetes", "Terraform", "Linux", "AWS"),
            ("Prometheus", "Go", "Ansible", "on-call", "CI/CD", "Docker"),
            ("backend",),
        ),
        Role(
            "mobile",
            ("iOS Developer", "Android Developer", "Mobile Engineer", "Mobile Developer"),
            ("Swift", "Kotlin"),
            ("SwiftUI", "Jetpack Compose", "Flutter", "CI/CD", "REST APIs"),
        ),
        Role(
            "qa",
            ("QA Engineer", "Test Automation Engineer", "Software Tester"),
            ("test automation", "Cypress", "Selenium"),
            ("Playwright", "Python", "Java", "CI/CD", "JavaScript"),
        ),
        Role(
            "product_manager",
            ("Product Manager", "Product Owner", "Technical Product Manager"),
            ("roadmaps", "discovery", "stakeholder management"),
            ("SQL", "A/B testing", "B2B SaaS", "Jira", "analytics"),
        ),
        Role(
            "designer",
            ("UX Designer", "Product Designer", "UI/UX Designer"),
            ("Figma", "user research", "prototyping"),
            ("design systems", "accessibility", "usability testing", "CSS"),
        ),
        Role(
            "security",
            ("Pentester", "Offensive Security Consultant", "Security Analyst", "Ethical Hacker"),
            ("penetration testing", "threat modeling"),
            ("AWS", "SIEM", "ISO 27001", "Python", "incident response", "Burp Suite"),
        ),
        Role(
            "recruiter",
            ("Technical Recruiter", "Talent Acquisition Partner", "Tech Sourcer"),
            ("sourcing", "interviewing"),
            ("employer branding", "LinkedIn Recruiter", "ATS"),
        ),
    )
}

# How a profile may write a skill; the openings always use the first spelling.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "Kubernetes": ("Kubernetes", "k8s", "K8s"),
    "PostgreSQL": ("PostgreSQL", "Postgres", "psql"),
    "JavaScript": ("JavaScript", "JS", "ES6"),
    "TypeScript": ("TypeScript", "TS"),
    "Go": ("Go", "Golang"),
    "machine learning": ("machine learning", "ML"),
    "MLOps": ("MLOps", "ML platform", "model deployment"),
    "A/B testing": ("A/B testing", "experimentation", "split testing"),
    "penetration testing": ("pentesting", "red teaming", "offensive security"),
    "user research": ("user research", "user interviews", "UX research"),
    "Node.js": ("Node.js", "Node", "NodeJS"),
    "Jetpack Compose": ("Jetpack Compose", "Compose"),
    "Spring Boot": ("Spring Boot", "Spring"),
    "Terraform": ("Terraform", "IaC (Terraform)"),
    "test automation": ("test automation", "automated testing"),
    "statistics": ("statistics", "statistical modelling"),
    "distributed systems": ("distributed systems", "large-scale backends"),
}

# The tuned ranker's synonym table: hand-made, so it has gaps (no security or research terms).
TUNED_SYNONYMS = {
    "k8s": "kubernetes",
    "postgres": "postgresql",
    "psql": "postgresql",
    "js": "javascript",
    "es6": "javascript",
    "ts": "typescript",
    "golang": "go",
    "ml": "machine learning",
    "nodejs": "node",
    "experimentation": "a b testing",
    "compose": "jetpack compose",
}

# The tuned ranker's role dictionary: keyword -> role, first match wins. It reads "data" as
# data science, a known blind spot for data engineering openings.
TUNED_ROLE_KEYWORDS = (
    ("recruit", "recruiter"),
    ("sourcer", "recruiter"),
    ("talent", "recruiter"),
    ("data", "data_scientist"),
    ("scientist", "data_scientist"),
    ("analyst", "data_scientist"),
    ("machine learning", "ml_engineer"),
    ("ml engineer", "ml_engineer"),
    ("ai engineer", "ml_engineer"),
    ("reliability", "sre"),
    ("sre", "sre"),
    ("devops", "sre"),
    ("platform", "sre"),
    ("full-stack", "fullstack"),
    ("full stack", "fullstack"),
    ("frontend", "frontend"),
    ("front-end", "frontend"),
    ("ui engineer", "frontend"),
    ("web developer", "frontend"),
    ("backend", "backend"),
    ("back-end", "backend"),
    ("server-side", "backend"),
    ("ios", "mobile"),
    ("android", "mobile"),
    ("mobile", "mobile"),
    ("qa", "qa"),
    ("test", "qa"),
    ("product manager", "product_manager"),
    ("product owner", "product_manager"),
    ("designer", "designer"),
    ("security engineer", "security"),
)


@dataclass(frozen=True)
class Opening:
    query_id: str
    text: str
    role: str
    level: int
    must: tuple[str, ...]
    nice: tuple[str, ...]
    city: str


OPENINGS = (
    Opening(
        "q01",
        "Senior Python backend engineer, Berlin, PostgreSQL, Kubernetes",
        "backend",
        2,
        ("Python", "PostgreSQL"),
        ("Kubernetes",),
        "Berlin",
    ),
    Opening(
        "q02",
        "Junior frontend developer, Hamburg, React, TypeScript",
        "frontend",
        0,
        ("React", "TypeScript"),
        ("CSS",),
        "Hamburg",
    ),
    Opening(
        "q03",
        "Data scientist, Amsterdam, A/B testing, SQL, Python",
        "data_scientist",
        1,
        ("SQL", "Python", "A/B testing"),
        ("statistics",),
        "Amsterdam",
    ),
    Opening(
        "q04",
        "Machine learning engineer, remote, PyTorch, MLOps",
        "ml_engineer",
        2,
        ("PyTorch", "MLOps"),
        ("Kubernetes",),
        REMOTE,
    ),
    Opening(
        "q05",
        "Site reliability engineer, Munich, Kubernetes, Terraform",
        "sre",
        1,
        ("Kubernetes", "Terraform"),
        ("Prometheus",),
        "Munich",
    ),
    Opening(
        "q06",
        "Data engineer, Berlin, Spark, Airflow, Kafka",
        "data_engineer",
        1,
        ("Spark", "Airflow"),
        ("Kafka",),
        "Berlin",
    ),
    Opening(
        "q07",
        "iOS developer, London, Swift, SwiftUI",
        "mobile",
        1,
        ("Swift", "SwiftUI"),
        (),
        "London",
    ),
    Opening(
        "q08",
        "Staff Go engineer, distributed systems, remote",
        "backend",
        3,
        ("Go", "distributed systems"),
        ("Kubernetes",),
        REMOTE,
    ),
    Opening(
        "q09",
        "Product manager, Paris, B2B SaaS, discovery, SQL",
        "product_manager",
        2,
        ("discovery", "B2B SaaS"),
        ("SQL",),
        "Paris",
    ),
    Opening(
        "q10",
        "QA automation engineer, Warsaw, Cypress, Playwright",
        "qa",
        1,
        ("Cypress", "Playwright"),
        ("test automation",),
        "Warsaw",
    ),
    Opening(
        "q11",
        "Senior UX designer, Lisbon, Figma, user research",
        "designer",
        2,
        ("Figma", "user research"),
        ("design systems",),
        "Lisbon",
    ),
    Opening(
        "q12",
        "Java backend developer, Munich, Spring Boot, Kafka",
        "backend",
        1,
        ("Java", "Spring Boot"),
        ("Kafka",),
        "Munich",
    ),
    Opening(
        "q13",
        "Security engineer, Vienna, penetration testing, AWS",
        "security",
        2,
        ("penetration testing", "AWS"),
        ("threat modeling",),
        "Vienna",
    ),
    Opening(
        "q14",
        "Android engineer, Berlin, Kotlin, Jetpack Compose",
        "mobile",
        1,
        ("Kotlin", "Jetpack Compose"),
        (),
        "Berlin",
    ),
    Opening(
        "q15",
        "Lead full-stack engineer, Amsterdam, TypeScript, Node.js, React",
        "fullstack",
        3,
        ("TypeScript", "Node.js", "React"),
        (),
        "Amsterdam",
    ),
    Opening(
        "q16",
        "Analytics engineer, Madrid, dbt, Snowflake, SQL",
        "data_engineer",
        1,
        ("dbt", "Snowflake", "SQL"),
        (),
        "Madrid",
    ),
    Opening(
        "q17",
        "Werkstudent (m/w/d) Softwareentwicklung, München",
        "backend",
        0,
        ("Python",),
        ("Docker",),
        "Munich",
    ),
)

# Some candidates in German-speaking cities write their profile in German.
GERMAN_CITIES = {"Berlin": "Berlin", "Munich": "München", "Hamburg": "Hamburg", "Vienna": "Wien"}
GERMAN_HEADLINES = {
    "backend": ("Backend-Entwickler", "Softwareentwickler Backend", "Softwareentwicklerin"),
    "frontend": ("Frontend-Entwicklerin", "Webentwickler"),
    "fullstack": ("Full-Stack-Entwickler", "Softwareentwickler"),
    "data_scientist": ("Data Scientist", "Datenanalystin"),
    "data_engineer": ("Data Engineer", "Dateningenieur"),
    "mobile": ("App-Entwickler", "Mobile-Entwicklerin"),
    "qa": ("Softwaretester", "Testautomatisierer"),
    "product_manager": ("Produktmanagerin", "Product Owner"),
    "designer": ("UX-Designerin", "Produktdesigner"),
}
GERMAN_LEVELS = ("Werkstudentin", "", "Senior", "Lead")


@dataclass(frozen=True)
class Candidate:
    doc_id: str
    role: str
    level: int
    years: int
    skills: frozenset[str]
    city: str
    remote_ok: bool
    relocate: bool
    title: str
    text: str


# ---------------------------------------------------------------- the hidden ground truth


def grade(opening: Opening, cand: Candidate) -> int:
    """The true fit of a candidate for an opening, 0 (not a fit) to 3 (strong match)."""
    if cand.role == opening.role:
        role = 1.0
    elif opening.role in ROLES[cand.role].related:
        role = 0.55
    else:
        return 0
    must = sum(s in cand.skills for s in opening.must) / len(opening.must)
    nice = sum(s in cand.skills for s in opening.nice) / len(opening.nice) if opening.nice else 1.0
    skills = 0.2 + 0.65 * must + 0.15 * nice
    gap = cand.level - opening.level
    seniority = {0: 1.0, 1: 0.85, -1: 0.6, 2: 0.45}.get(gap, 0.25)
    if opening.city == REMOTE:
        place = 1.0 if cand.remote_ok else 0.6
    elif cand.city == opening.city:
        place = 1.0
    elif cand.relocate:
        place = 0.85
    elif cand.remote_ok:
        place = 0.5
    else:
        place = 0.25
    fit = role * skills * seniority * place
    return 3 if fit >= 0.78 else 2 if fit >= 0.55 else 1 if fit >= 0.33 else 0


# ---------------------------------------------------------------- profiles


def _pick_role(rng: random.Random) -> str:
    weights = {
        "backend": 6,
        "frontend": 4,
        "fullstack": 4,
        "data_scientist": 3,
        "ml_engineer": 2,
        "data_engineer": 3,
        "sre": 3,
        "mobile": 3,
        "qa": 2,
        "product_manager": 3,
        "designer": 2,
        "security": 1,
        "recruiter": 2,
    }
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _true_skills(rng: random.Random, role: Role, seed_skills: Iterable[str] = ()) -> set[str]:
    skills = set(rng.sample(role.core, k=max(1, len(role.core) - rng.randint(0, 2))))
    skills |= set(rng.sample(role.extra, k=rng.randint(1, min(4, len(role.extra)))))
    skills |= set(seed_skills)
    return skills


def _spell(rng: random.Random, skill: str) -> str:
    forms = SPELLINGS.get(skill)
    if not forms:
        return skill
    # The canonical spelling is the most common one, but far from universal.
    return forms[0] if rng.random() < 0.45 else rng.choice(forms[1:])


def _render(
    rng: random.Random,
    doc_id: str,
    role_key: str,
    level: int,
    years: int,
    skills: set[str],
    city: str,
    remote_ok: bool,
    relocate: bool,
    may_write_german: bool,
) -> Candidate:
    role = ROLES[role_key]
    headline = rng.choice(role.headlines)
    if role_key == "mobile":
        headline = "iOS Developer" if "Swift" in skills and "Kotlin" not in skills else headline
        headline = "Android Developer" if "Kotlin" in skills and "Swift" not in skills else headline
    if rng.random() < 0.6 and level != 1:
        headline = f"{('Junior', 'Mid-level', 'Senior', 'Staff')[level]} {headline}"
    terse = rng.random() < 0.2
    keep = 0.55 if terse else 0.9
    shown = [s for s in sorted(skills) if rng.random() < keep]
    if role_key != "recruiter" and rng.random() < 0.25:
        # Buzzwords: skills named on the profile that the candidate does not really have.
        pool = sorted({s for r in ROLES.values() for s in r.extra} - skills)
        shown += rng.sample(pool, k=rng.randint(1, 3))
    rng.shuffle(shown)
    spelled = [_spell(rng, s) for s in shown]
    parts = []
    german = (
        may_write_german
        and city in GERMAN_CITIES
        and role_key in GERMAN_HEADLINES
        and rng.random() < 0.35
    )
    if german:
        headline = rng.choice(GERMAN_HEADLINES[role_key])
        if GERMAN_LEVELS[level]:
            headline = f"{GERMAN_LEVELS[level]} {headline}"
        experience = f"{years} Jahren Berufserfahrung" if years else "ersten Praxiserfahrungen"
        parts.append(f"{headline} mit {experience}.")
        if spelled:
            parts.append(f"Kenntnisse: {', '.join(spelled)}.")
        parts.append(f"Wohnort: {GERMAN_CITIES[city]}.")
        if remote_ok:
            parts.append("Remote-Arbeit möglich.")
        if relocate:
            parts.append("Umzugsbereit.")
    elif role_key == "recruiter":
        hires = rng.sample(
            [
                "Python",
                "Java",
                "Kubernetes",
                "React",
                "data scientists",
                "machine learning engineers",
                "backend engineers",
                "SRE",
                "iOS developers",
                "product managers",
                "security engineers",
                "PostgreSQL",
                "TypeScript",
                "Spark",
                "data engineers",
                "frontend developers",
            ],
            k=6,
        )
        parts.append(
            f"{headline} with {_years_en(years)} hiring tech talent. "
            f"I hire for: {', '.join(hires)}."
        )
    elif terse:
        parts.append(f"{headline}. {years} yrs." if years else f"{headline}. Graduate.")
    else:
        since = 2024 - years
        experience = (
            _years_en(years)
            if rng.random() < 0.8 or not years
            else f"working in the field since {since}"
        )
        parts.append(f"{headline} with {experience}.")
    if not german:
        if spelled:
            parts.append(f"Skills: {', '.join(spelled)}.")
        place = f"Based in {city}."
        if remote_ok:
            place += " Open to remote work."
        if relocate:
            place += " Happy to relocate."
        parts.append(place)
    text = " ".join(parts)
    return Candidate(
        doc_id, role_key, level, years, frozenset(skills), city, remote_ok, relocate, headline, text
    )


def _years_en(years: int) -> str:
    if years == 0:
        return "less than a year of experience"
    return f"{years} year{'s' if years > 1 else ''} of experience"


def _years(rng: random.Random, level: int) -> int:
    low, high = LEVEL_YEARS[level]
    return rng.randint(low, high)


def build_candidates(rng: random.Random) -> list[Candidate]:
    # (role, level, true skills, city, open to remote, will relocate, may write in German)
    specs: list[tuple[str, int, set[str], str, bool, bool, bool]] = []
    for _ in range(N_BACKGROUND):
        role_key = _pick_role(rng)
        level = rng.choices(range(4), weights=(3, 4, 4, 2))[0]
        skills = _true_skills(rng, ROLES[role_key])
        city = rng.choice(CITIES)
        remote_ok, relocate = rng.random() < 0.35, rng.random() < 0.25
        specs.append((role_key, level, skills, city, remote_ok, relocate, True))
    for opening in OPENINGS:
        # Near misses and good fits around each opening, so that every grade occurs.
        for _ in range(N_TARGETED):
            role_key = opening.role
            if rng.random() < 0.2 and ROLES[role_key].related:
                role_key = rng.choice(ROLES[role_key].related)
            level = min(3, max(0, opening.level + rng.choice((-1, 0, 0, 1, 2))))
            seed_skills = [s for s in (*opening.must, *opening.nice) if rng.random() < 0.7]
            skills = _true_skills(rng, ROLES[role_key], seed_skills)
            city = opening.city if opening.city != REMOTE else rng.choice(CITIES)
            if rng.random() < 0.4:
                city = rng.choice(CITIES)
            remote_ok, relocate = rng.random() < 0.45, rng.random() < 0.3
            specs.append((role_key, level, skills, city, remote_ok, relocate, False))
    rng.shuffle(specs)
    candidates = []
    for i, spec in enumerate(specs, start=1):
        role_key, level, skills, city, remote_ok, relocate, may_write_german = spec
        years = _years(rng, level)
        candidates.append(
            _render(
                rng,
                f"c{i:03d}",
                role_key,
                level,
                years,
                skills,
                city,
                remote_ok,
                relocate,
                may_write_german,
            )
        )
    return candidates


# ---------------------------------------------------------------- the systems

TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) over a list of token lists."""

    def __init__(self, docs: Sequence[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.length = [len(d) for d in docs]
        self.avg = sum(self.length) / len(docs)
        df = Counter(t for d in docs for t in set(d))
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for tf, length in zip(self.tf, self.length, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg)
            total = 0.0
            for term in query:
                f = tf.get(term, 0)
                if f:
                    total += self.idf[term] * f * (self.k1 + 1) / (f + norm)
            out.append(total)
        return out


def normalise(text: str) -> str:
    words = tokens(text)
    return " ".join(TUNED_SYNONYMS.get(w, w) for w in words)


def tuned_role(text: str) -> str | None:
    lowered = text.lower()
    for keyword, role in TUNED_ROLE_KEYWORDS:
        if keyword in lowered:
            return role
    return None


def tuned_years(text: str) -> int | None:
    match = re.search(r"(\d+) (?:years|yrs)", text)
    return int(match.group(1)) if match else None


def tuned_level(text: str) -> int:
    lowered = text.lower()
    for word, level in (("junior", 0), ("staff", 3), ("lead", 3), ("principal", 3), ("senior", 2)):
        if word in lowered:
            return level
    return 1


def keyword_run(openings: Sequence[Opening], cands: Sequence[Candidate]) -> dict[str, list[float]]:
    index = BM25([tokens(f"{c.title} {c.text}") for c in cands])
    return {o.query_id: index.scores(tokens(o.text)) for o in openings}


def tuned_run(openings: Sequence[Opening], cands: Sequence[Candidate]) -> dict[str, list[float]]:
    # The headline counts twice; synonyms are folded before indexing.
    index = BM25([tokens(normalise(f"{c.title} {c.title} {c.text}")) for c in cands])
    out = {}
    for o in openings:
        text = normalise(o.text)
        bm25 = index.scores(tokens(text))
        top = max(bm25) or 1.0
        want_role = tuned_role(o.text)
        want_level = tuned_level(o.text)
        city = next((c for c in CITIES if c.lower() in o.text.lower()), REMOTE)
        scores = []
        for cand, lexical in zip(cands, bm25, strict=True):
            score = lexical / top
            if want_role is not None and tuned_role(cand.title) == want_role:
                score += 0.5
            years = tuned_years(cand.text)
            if years is not None:
                level = next(i for i, (_, hi) in enumerate(LEVEL_YEARS) if years <= hi or i == 3)
                score += 0.25 * (1 - min(abs(level - want_level), 2) / 2)
            if city == REMOTE:
                score += 0.2 if "remote" in cand.text.lower() else 0.0
            elif f"based in {city.lower()}" in cand.text.lower():
                score += 0.3
            elif "relocate" in cand.text.lower():
                score += 0.1
            scores.append(score)
        out[o.query_id] = scores
    return out


# ---------------------------------------------------------------- writing


def top_k(scores: Sequence[float], cands: Sequence[Candidate], k: int) -> list[tuple[str, float]]:
    """The top k as trec_eval will rank them: score (as written) descending, doc id descending."""
    rows = [(round(s, 4), c.doc_id) for s, c in zip(scores, cands, strict=True)]
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    return [(d, s) for s, d in rows[:k]]


def write(out: Path, name: str, lines: Iterable[str]) -> None:
    path = out / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8", newline="\n")


def build(out: Path) -> dict[str, dict[str, list[tuple[str, float]]]]:
    rng = random.Random(SEED)
    cands = build_candidates(rng)
    runs = {
        "keyword": keyword_run(OPENINGS, cands),
        "tuned": tuned_run(OPENINGS, cands),
    }
    ranked = {
        name: {qid: top_k(scores, cands, TOP) for qid, scores in per_query.items()}
        for name, per_query in runs.items()
    }
    by_id = {c.doc_id: c for c in cands}
    qrels: list[str] = []
    for o in OPENINGS:
        pool = {d for r in ranked.values() for d, _ in r[o.query_id][:POOL_DEPTH]}
        pool |= {c.doc_id for c in rng.sample(cands, POOL_RANDOM)}
        # The hiring team's shortlist: most of the truly good candidates are known to them.
        pool |= {c.doc_id for c in cands if grade(o, c) >= 2 and rng.random() < 0.85}
        qrels += [f"{o.query_id} 0 {d} {grade(o, by_id[d])}" for d in sorted(pool)]
    write(out, "queries.tsv", (f"{o.query_id}\t{o.text}" for o in OPENINGS))
    write(
        out,
        "docs.jsonl",
        (
            json.dumps({"doc_id": c.doc_id, "title": c.title, "text": c.text}, ensure_ascii=False)
            for c in cands
        ),
    )
    write(out, "qrels.txt", qrels)
    for name, per_query in ranked.items():
        write(
            out,
            f"runs/{name}.txt",
            (
                f"{qid} Q0 {d} {rank} {score:.4f} {name}"
                for qid, hits in per_query.items()
                for rank, (d, score) in enumerate(hits, start=1)
            ),
        )
    return ranked


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    build(args.out)
    print(f"wrote the recruiting collection to {args.out}")


if __name__ == "__main__":
    main()
