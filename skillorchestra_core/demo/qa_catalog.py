"""The demo-qa skill catalog: categories, sub-skills with question templates, the agent pool and its true rates.

Planted structure (what the refinement and routing features must find):
- SPLIT: `answer.math.word_problems` mixes two kinds of questions with opposite agent rankings: percentage/interest
  problems (small models good, large ones bad) and geometry/area problems (the reverse). One skill, two profiles.
- MERGE: `answer.entities.capitals` and `answer.entities.currencies` have the same true rate for every agent.
- CHEAP AS GOOD: on `answer.language.*` the cheap qwen2.5-7b-instruct is as good as the dear llama3.1-70b-instruct.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillorchestra_core.evidence.reference_pools import MODEL_ROUTING_POOL, ROUTER_MODEL

# The paper's model-routing pool with its prices, served behind an OpenAI-compatible endpoint.
AGENTS: dict[str, tuple[str, float, float]] = {
    key: (f"openai/{path}", pin, pout) for key, (path, pin, pout) in MODEL_ROUTING_POOL.items() if key != ROUTER_MODEL
}
# General ability and verbosity (completion tokens per answer) per agent.
ABILITY = {"qwen2.5-7b-instruct": 0.66, "llama3.1-8b-instruct": 0.55, "llama3.1-70b-instruct": 0.80,
           "mistral-7b-instruct": 0.50, "mixtral-8x22b-instruct": 0.76, "gemma2-27b-it": 0.70}
VERBOSITY = {"qwen2.5-7b-instruct": 160, "llama3.1-8b-instruct": 140, "llama3.1-70b-instruct": 210,
             "mistral-7b-instruct": 150, "mixtral-8x22b-instruct": 230, "gemma2-27b-it": 180}


@dataclass(frozen=True)
class LeafSkill:
    key: str
    name: str
    description: str
    indicators: tuple[str, ...]
    templates: tuple[str, ...]
    difficulty: float = 0.0  # added to every agent's ability
    # Per-agent adjustments on top of ability + difficulty, or absolute rates when `absolute`.
    bonus: tuple[tuple[str, float], ...] = ()
    absolute: bool = False


CATEGORIES = {
    "answer.factual": ("Factual recall", "Recall facts about the world: history, geography, science."),
    "answer.math": ("Mathematics", "Compute numeric answers from arithmetic or word problems."),
    "answer.code": ("Code", "Read, write or fix short programs and queries."),
    "answer.reasoning": ("Reasoning", "Deduce answers from stated constraints or everyday knowledge."),
    "answer.language": ("Language", "Translate, correct or rewrite text."),
    "answer.entities": ("Entities", "Look up attributes of countries."),
    "answer.temporal": ("Temporal", "Reason about dates and durations."),
}

_SMALL_GOOD = (("qwen2.5-7b-instruct", 0.90), ("llama3.1-8b-instruct", 0.86), ("mistral-7b-instruct", 0.82),
               ("llama3.1-70b-instruct", 0.30), ("mixtral-8x22b-instruct", 0.28), ("gemma2-27b-it", 0.34))
_LARGE_GOOD = (("qwen2.5-7b-instruct", 0.30), ("llama3.1-8b-instruct", 0.26), ("mistral-7b-instruct", 0.22),
               ("llama3.1-70b-instruct", 0.92), ("mixtral-8x22b-instruct", 0.88), ("gemma2-27b-it", 0.84))
_ENTITY_RATES = (("qwen2.5-7b-instruct", 0.72), ("llama3.1-8b-instruct", 0.60), ("mistral-7b-instruct", 0.55),
                 ("llama3.1-70b-instruct", 0.90), ("mixtral-8x22b-instruct", 0.84), ("gemma2-27b-it", 0.78))
_LANGUAGE = (("qwen2.5-7b-instruct", 0.88), ("llama3.1-8b-instruct", 0.62), ("mistral-7b-instruct", 0.66),
             ("llama3.1-70b-instruct", 0.88), ("mixtral-8x22b-instruct", 0.80), ("gemma2-27b-it", 0.74))

LEAVES: tuple[LeafSkill, ...] = (
    LeafSkill("answer.factual.history", "History facts", "Dates, rulers and events of world history.",
              ("year", "empire", "war", "king"),
              ("In which year did the {empire} reach its greatest extent?", "Who ruled the {empire} after the {war}?",
               "Which war ended the dominance of the {empire}?"), 0.0, (("llama3.1-70b-instruct", 0.08),)),
    LeafSkill("answer.factual.geography", "Geography facts", "Rivers, mountains and borders.",
              ("river", "mountain", "border", "longest"),
              ("Which river flows through {city}?", "What is the highest mountain near {city}?",
               "Which countries border the country whose capital is {city}?"), 0.02),
    LeafSkill("answer.factual.science", "Science facts", "Basic physics, chemistry and biology facts.",
              ("element", "atomic", "cell", "speed of"),
              ("What is the atomic number of {element}?", "Is {element} a metal or a non-metal?",
               "In which group of the periodic table is {element}?"), -0.04),
    LeafSkill("answer.math.arithmetic", "Arithmetic", "Exact integer and decimal arithmetic.",
              ("compute", "sum", "product", "what is"),
              ("What is {a} times {b}?", "Compute {a} plus {b} minus {c}.",
                "What is {a} divided by 4, to two decimals?"),
              0.0, (("qwen2.5-7b-instruct", 0.14),)),
    LeafSkill("answer.math.word_problems", "Word problems",
              "Multi-step problems stated in words: percentages, interest, areas and volumes.",
              ("percent", "interest", "area", "rectangle", "discount"),
              ("A shop gives a {p} percent discount on a {a} dollar coat. What is the discount in dollars?",
               "A deposit of {a} dollars earns {p} percent simple interest a year. "
                "What is the interest after {c} years?",
               "What percent of {b} is {c}?",
               "What is the area of a rectangle {a} metres long and {c} metres wide?",
               "A circular garden has radius {c} metres. What is its area in square metres?",
               "What is the volume of a box {a} by {b} by {c} centimetres?"),
              0.0, (), True),  # rates come from the template group, see demo.qa
    LeafSkill("answer.code.python", "Python", "Write or debug short Python functions.",
              ("python", "function", "list", "def"),
              ("Write a Python function that returns the {n} largest items of a list.",
               "Why does this Python loop over a {thing} never stop?",
                "Write a Python one-liner that counts {thing}s."),
              -0.05, (("qwen2.5-7b-instruct", 0.12), ("mistral-7b-instruct", -0.12))),
    LeafSkill("answer.code.sql", "SQL", "Write SQL queries over a described schema.",
              ("sql", "select", "join", "table"),
              ("Write a SQL query that lists every {thing} with more than {n} orders.",
               "Join the {thing} table to orders and count rows per {thing}."), -0.08),
    LeafSkill("answer.reasoning.logic", "Logic puzzles", "Constraint puzzles about who lives where or owns what.",
              ("puzzle", "lives", "neither", "if and only if"),
              ("{n} people live in a row of houses; the {thing} owner lives left of the baker. Who lives first?",
               "If every {thing} is red and no red thing is round, can a {thing} be round?"), -0.10,
              (("gemma2-27b-it", 0.08),)),
    LeafSkill("answer.reasoning.commonsense", "Commonsense", "Everyday physical and social knowledge.",
              ("why", "usually", "would you"),
              ("Why would you put a {thing} in the fridge?", "What usually happens to a {thing} left in the rain?"),
              0.06),
    LeafSkill("answer.language.translation", "Translation", "Translate short sentences between languages.",
              ("translate", "french", "german", "spanish"),
              ("Translate 'the {thing} is on the table' into {language}.",
               "How do you say 'where is the {thing}' in {language}?"), 0.0, _LANGUAGE, True),
    LeafSkill("answer.language.grammar", "Grammar", "Correct grammar and spelling.",
              ("correct", "grammar", "sentence"),
              ("Correct the grammar: 'the {thing} have went home'.", "Is 'fewer {thing}s' or 'less {thing}s' correct?"),
              0.0, _LANGUAGE, True),
    LeafSkill("answer.entities.capitals", "Capitals", "The capital city of a country.",
              ("capital",), ("What is the capital of {country}?", "Which city is the capital of {country}?"),
              0.0, _ENTITY_RATES, True),
    LeafSkill("answer.entities.currencies", "Currencies", "The currency of a country.",
              ("currency",), ("What is the currency of {country}?", "Which currency do people pay with in {country}?"),
              0.0, _ENTITY_RATES, True),
    LeafSkill("answer.temporal.dates", "Date arithmetic", "Days of the week and dates after an interval.",
              ("day of the week", "date", "after"),
              ("What day of the week is {c} days after a {weekday}?", "Which date is {c} days after 1 {month}?"),
              -0.06, (("mixtral-8x22b-instruct", 0.06),)),
    LeafSkill("answer.temporal.durations", "Durations", "Elapsed time between two times or dates.",
              ("how long", "hours", "minutes", "between"),
              ("How many minutes are there between {h1}:15 and {h2}:40?",
                "How long is it from 1 {month} to {c} {month}?"),
              0.0),
)

# Template indices in word_problems that belong to the "percentages" group (the rest are "geometry").
WORD_PROBLEM_PERCENT_TEMPLATES = (0, 1, 2)
WORD_PROBLEM_GROUPS = {"percentages": _SMALL_GOOD, "geometry": _LARGE_GOOD}

FILLERS = {
    "empire": ["Roman Empire", "Mongol Empire", "Ottoman Empire", "Inca Empire", "Mali Empire", "Khmer Empire"],
    "war": ["Seven Years' War", "Hundred Years' War", "Great Northern War", "Thirty Years' War"],
    "city": ["Vienna", "Cairo", "Lima", "Hanoi", "Kyiv", "Montreal", "Lagos", "Osaka"],
    "element": ["sodium", "argon", "silicon", "copper", "iodine", "boron", "zinc"],
    "thing": ["customer", "invoice", "sensor", "ticket", "book", "parcel", "bicycle", "lamp"],
    "country": ["Peru", "Kenya", "Norway", "Vietnam", "Chile", "Poland", "Ghana", "Nepal", "Canada", "Egypt",
                "Japan", "Mexico", "Sweden", "Morocco", "India", "Brazil", "Turkey", "Hungary", "Jordan", "Bolivia",
                "Iceland", "Malaysia", "Senegal", "Portugal", "Ukraine"],
    "language": ["French", "German", "Spanish", "Italian", "Portuguese"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "month": ["March", "April", "June", "September", "November"],
}
