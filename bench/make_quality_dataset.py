"""Make the development dataset of the retrieval-quality benchmark.

    .venv/bin/python -m bench.make_quality_dataset --seed 7 --out bench/data/dev.json
                                                   [--small testdata/quality-small.json]

Writes conversations in the dataset format of docs/quality.md, from templates and
a fixed seed (the same seed gives the same file, byte for byte). Each conversation is a
small world: three or four people who share the user role of one assistant, people
they talk about, organisations, cities and projects. Over fifteen sessions (a year of
chats) they mention things about each other (where they live, where they work, who
leads which project, pets, allergies...), some of which change; the assistant answers,
and tool documents (meeting notes, calendar exports, booking e-mails, newsletters) sit
between the chats. Most messages are small talk that shares words with the evidence.

What makes it hard, on purpose:
- questions are paraphrased: they name the person (or project) but share few other
  words with the message that answers them ("Which city is Dana based in?" against
  "Got the keys to my new flat in Porto", said by Dana);
- multi-hop questions need two messages ("Which city is the person in charge of Project
  Heron based in?": who leads it, and where that person lives);
- temporal questions need the order of events ("Where was Dana living prior to Porto?",
  "When did Dana change address to Porto?");
- distractors: other people's similar statements (a cousin who also moved to Porto),
  the same names and places in small talk, the assistant echoing what it was told,
  long documents that mention everyone;
- adversarial questions ask about things never said (a pet of someone who has none)
  and have no evidence.

Half of the conversations also carry `facts` (for about three in four statements), so
that both paths of a recall are exercised. `--small` also writes a slice of two
conversations (one with facts, one without) and about thirty questions for the tests.

One module on purpose (1,300 lines): two thirds are the world's templates, and a
template is only read right beside the writer and question maker that fill it; the seed
makes the file byte for byte, so the order of draws is part of the data set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CONVERSATIONS = 10
SESSIONS = 20
MESSAGES_PER_SESSION = (30, 50)
QUESTIONS = {"single-hop": 12, "multi-hop": 7, "temporal": 7, "adversarial": 4}
FACT_SHARE = 0.75

# -- names --------------------------------------------------------------------------

FIRST_NAMES = (
    "Dana", "Kofi", "Priya", "Sean", "Aoife", "Mateo", "Yusuf", "Hana", "Liam", "Zara",
    "Ines", "Tomas", "Elif", "Femi", "Grace", "Hiro", "Jonas", "Kavya", "Maya", "Niamh",
    "Oscar", "Quinn", "Rosa", "Uma", "Vera", "Wei", "Amir", "Brigid", "Carlos", "Dmitri",
    "Farah", "Goran", "Ivan", "Jia", "Lena", "Nora", "Orla", "Pavel", "Rania", "Sofia",
    "Tariq", "Ulla", "Viktor", "Wanjiru", "Yara", "Zeno", "Ada", "Bram", "Cleo", "Desmond",
    "Esme", "Felix", "Gemma", "Hugo", "Isla", "Jasper", "Keiko", "Lorcan", "Mira", "Nikhil",
)  # fmt: skip
CITIES = (
    "Lisbon", "Porto", "Galway", "Cork", "Utrecht", "Leipzig", "Bologna", "Valencia",
    "Krakow", "Tallinn", "Ghent", "Lyon", "Bergen", "Seville", "Graz", "Brno", "Aarhus",
    "Turin", "Nantes", "Bilbao", "Gothenburg", "Ljubljana", "Rotterdam", "Edinburgh",
    "Dundee", "Limerick", "Malaga", "Zagreb", "Bristol", "Basel",
)  # fmt: skip
ORG_WORDS = (
    "Northwind", "Brightwater", "Kestrel", "Bluefin", "Ironbark", "Silverline", "Harbour",
    "Copperleaf", "Redfern", "Greystone", "Larkspur", "Oakmere", "Sunfield", "Wavecrest",
    "Foxglove", "Moorland", "Stillwater", "Ashgrove", "Highgate", "Riverbend",
)  # fmt: skip
ORG_KINDS = (
    "Logistics", "Health", "Analytics", "Foods", "Energy", "Studios", "Insurance",
    "Robotics", "Partners", "Bank", "Pharma", "Telecom",
)  # fmt: skip
PROJECT_WORDS = (
    "Heron", "Osprey", "Juniper", "Basalt", "Meridian", "Quillon", "Tamarack", "Zephyr",
    "Lantern", "Cobalt", "Sextant", "Marigold", "Halyard", "Obsidian", "Saffron",
)  # fmt: skip
PETS = (
    ("dog", ("Biscuit", "Pepper", "Miso", "Bruno", "Luna", "Toffee", "Rollo", "Maple")),
    ("cat", ("Mochi", "Sardine", "Olive", "Pixel", "Clementine", "Basil", "Juno", "Figaro")),
    ("rabbit", ("Thumper", "Clover", "Nibbles", "Hazel")),
    ("parrot", ("Kiwi", "Captain", "Mango", "Rio")),
    ("tortoise", ("Sheldon", "Tank", "Gus", "Pebble")),
)  # fmt: skip
ALLERGENS = (
    "peanuts", "shellfish", "sesame", "kiwi fruit", "celery", "mustard", "walnuts",
    "penicillin", "soy", "buckwheat",
)  # fmt: skip
INSTRUMENTS = (
    "cello", "banjo", "saxophone", "tin whistle", "piano", "bodhrán", "ukulele",
    "trumpet", "harp", "accordion",
)  # fmt: skip
SPORTS = (
    "rowing", "five-a-side football", "volleyball", "bouldering", "badminton", "hurling",
    "ultimate frisbee", "water polo", "fencing", "netball",
)  # fmt: skip
LANGUAGES = (
    "Portuguese", "Japanese", "Irish", "Polish", "Turkish", "Swahili", "Korean",
    "Dutch", "Greek", "Finnish",
)  # fmt: skip
CARS = (
    "Skoda Octavia", "Nissan Leaf", "Volvo V60", "Fiat Panda", "Toyota Yaris",
    "Renault Zoe", "Mazda MX-5", "Kia Niro", "VW Golf", "Dacia Duster",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip
APPOINTMENTS = (
    # (calendar label, clinic forms, question phrase)
    ("dentist", ("Harbour Dental", "Smile Studio", "Quayside Dental"),
     "getting their teeth checked"),
    ("physio", ("Motion Physio", "Backwell Clinic"), "booked in for physiotherapy"),
    ("optician", ("Clearview Opticians", "Lens & Co"), "having an eye test"),
    ("barber", ("Sharp Cuts", "The Barber Room"), "due a trim"),
)  # fmt: skip
OUTSIDERS = (
    "my cousin", "our neighbour", "a friend of mine", "my sister", "my old flatmate",
    "someone at the gym", "my brother-in-law", "a guy from my book club",
)  # fmt: skip

# -- statements -------------------------------------------------------------------------
# Each kind of statement: templates said by the person themself ("self"), about them by
# someone else ("other", "{p}" is the person), question templates (paraphrased: they
# share the person's name but few other words), and the fact predicate.


@dataclass(frozen=True)
class Kind:
    name: str
    self_forms: tuple[str, ...]
    other_forms: tuple[str, ...]
    questions: tuple[str, ...]
    predicate: str
    object_kind: str = "value"
    # A value that changes: how the first value is said, and the "before" questions.
    first_self: tuple[str, ...] = ()
    first_other: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    when: tuple[str, ...] = ()


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "city",
            self_forms=(
                "Moving day is done, I'm officially a resident of {v} now.",
                "Got the keys to my new flat in {v}, the old place is empty at last.",
                "We relocated to {v} last weekend and we're still surrounded by boxes.",
                "First night sleeping in the new apartment in {v}, it's so quiet here.",
            ),
            other_forms=(
                "{p} just moved house to {v}.",
                "{p} has relocated to {v}, the farewell drinks were lovely.",
                "{p} signed a lease on a flat in {v} and moved in on Saturday.",
            ),
            first_self=(
                "I've lived in {v} for almost six years, the neighbourhood feels like home.",
                "Our flat in {v} is tiny but the view over the river makes up for it.",
                "Nothing beats a Saturday walk around {v}, I'm so glad I settled here.",
            ),
            first_other=(
                "{p} has had a place in {v} for years now.",
                "{p}'s house is in {v}, near the old market.",
            ),
            questions=(
                "Which city is {p} based in?",
                "What town does {p} call home?",
                "Where is {p} living at the moment?",
            ),
            before=(
                "Where was {p} living prior to {v2}?",
                "Which city was home for {p} before {v2}?",
            ),
            when=("When did {p} change address to {v}?",),
            predicate="lives in",
            object_kind="entity",
        ),
        Kind(
            "employer",
            self_forms=(
                "Signed the offer from {v} today, I start on the first of the month.",
                "First week at {v} done, the new team is lovely.",
                "I handed in my notice, I'm joining {v} next month.",
            ),
            other_forms=(
                "{p} accepted a position at {v}.",
                "{p} left for a job at {v}, good for them.",
            ),
            first_self=(
                "Six years at {v} and I still like the job most days.",
                "My badge at {v} stopped working again, the facilities desk is on it.",
            ),
            first_other=(
                "{p} has been with {v} since graduating.",
                "{p} is on the {v} payroll, has been for ages.",
            ),
            questions=(
                "Who is {p}'s employer?",
                "Which company pays {p}'s salary?",
                "What organisation employs {p}?",
            ),
            before=(
                "Which company employed {p} before {v2}?",
                "Who was {p}'s employer prior to {v2}?",
            ),
            when=("When did {p} switch jobs to {v}?",),
            predicate="works at",
            object_kind="entity",
        ),
        Kind(
            "pet",
            self_forms=(
                "We adopted a rescue {s} and named her {v}.",
                "{v}, my {s}, chewed through another charger cable.",
                "Took {v} to the vet, the {s} is fine, just a bit overweight.",
            ),
            other_forms=(
                "{p}'s {s} {v} is the star of every photo.",
                "{p} brought {v} the {s} round, total chaos.",
            ),
            questions=(
                "What is {p}'s pet called?",
                "What name did {p} give the animal at home?",
                "What's the name of the animal {p} looks after?",
            ),
            predicate="has a pet",
        ),
        Kind(
            "allergy",
            self_forms=(
                "Turns out I react badly to {v}, the doctor confirmed it.",
                "Had to leave the party early, someone put {v} in the salad and I can't have it.",
                "Reminder to self: check every label for {v}, last time was scary.",
            ),
            other_forms=(
                "Remember {p} can't eat anything with {v}, the reaction is serious.",
                "Don't order anything with {v} for {p}, it puts them in hospital.",
            ),
            questions=(
                "What is {p} allergic to?",
                "Which ingredient must be kept away from {p}?",
                "What makes {p} ill so that it has to be avoided?",
            ),
            predicate="is allergic to",
        ),
        Kind(
            "instrument",
            self_forms=(
                "Started {v} lessons last night, my fingers are sore.",
                "Practised the {v} for an hour, the neighbours must hate me.",
                "Bought a second-hand {v}, the teacher says it's a good one.",
            ),
            other_forms=(
                "{p} has been taking {v} lessons on Tuesdays.",
                "{p} played the {v} at the party, not bad at all.",
            ),
            questions=(
                "Which musical instrument is {p} learning to play?",
                "What does {p} practise for music class?",
            ),
            predicate="is learning to play",
        ),
        Kind(
            "sport",
            self_forms=(
                "Joined a {v} club, training is on Thursday nights.",
                "Our {v} team lost again on Sunday, three to one.",
                "Pulled a muscle at {v} practice, nothing serious.",
            ),
            other_forms=(
                "{p} plays {v} every weekend.",
                "{p} is captain of a {v} team now.",
            ),
            questions=(
                "What sport does {p} play?",
                "How does {p} keep fit at the weekends?",
            ),
            predicate="plays",
        ),
        Kind(
            "language",
            self_forms=(
                "Doing my {v} homework, the verb endings are killing me.",
                "Booked an evening class in {v}, we start next week.",
                "Managed a whole conversation in {v} with the tutor today!",
            ),
            other_forms=(
                "{p} is taking {v} classes before the big trip.",
                "{p} has a {v} exam next month.",
            ),
            questions=(
                "Which language is {p} studying?",
                "What foreign tongue is {p} trying to pick up?",
            ),
            predicate="is studying",
        ),
        Kind(
            "car",
            self_forms=(
                "Traded in the old car for a {v}, it drives like a dream.",
                "Picked up the new {v} from the dealer this morning.",
            ),
            other_forms=("{p} finally bought a {v}.",),
            first_self=(
                "My old {v} needs new tyres again.",
                "The {v} failed its inspection, the brakes need work.",
            ),
            first_other=("{p} still drives that ancient {v}.",),
            questions=(
                "What vehicle does {p} own?",
                "What does {p} get around in by road?",
            ),
            before=("What did {p} have before the {v2}?",),
            predicate="drives",
        ),
        Kind(
            "birthday",
            self_forms=(
                "My birthday is on {v}, no fuss please.",
                "Turning thirty on {v}, cake is mandatory.",
            ),
            other_forms=(
                "{p}'s birthday falls on {v}, we should get a card.",
                "Don't forget {p} has a birthday on {v}.",
            ),
            questions=(
                "On what date does {p} celebrate getting a year older?",
                "Which day of the year is {p}'s special day?",
            ),
            predicate="has a birthday on",
        ),
        Kind(
            "partner",
            self_forms=(
                "My partner {v} says hi to everyone.",
                "{v} and I are getting married in the spring!",
                "{v} and I celebrated our anniversary at the coast.",
            ),
            other_forms=(
                "{p} and {v} have been together for years.",
                "{p} is engaged to {v}, the wedding is next summer.",
            ),
            questions=(
                "Who is {p}'s significant other?",
                "Who is {p} in a relationship with?",
            ),
            predicate="is the partner of",
            object_kind="entity",
        ),
        Kind(
            "manager",
            self_forms=(
                "My new boss is {v}, seems sharp.",
                "Had my review with {v} today, I report to them since the reorg.",
            ),
            other_forms=(
                "{p} reports to {v} since the reorg.",
                "{v} is {p}'s boss now, poor thing.",
            ),
            questions=(
                "Who does {p} answer to at work?",
                "Who is {p}'s line manager?",
            ),
            predicate="reports to",
            object_kind="entity",
        ),
    )
}
# Who leads a project: said in chats or in meeting notes (the "self" forms are a chat
# message by someone else; the document lines are in LEAD_NOTES).
LEAD_CHAT = (
    "{p} is heading up {j} from now on.",
    "Heads up, {j} is {p}'s to run now.",
    "{p} got the top job on {j}, announced this morning.",
)
LEAD_NOTES = (
    "{j}: {p} takes over as lead from this sprint.",
    "Owner of {j} going forward: {p}.",
    "Agreed that {p} will run {j}; escalations go to them.",
)
LEAD_QUESTIONS = (
    "Who is in charge of {j}?",
    "Which person is responsible for {j}?",
    "Who runs {j}?",
)
LEAD_BEFORE = ("Who ran {j} before {p2} took it over?",)
LEAD_PHRASES = ("the person in charge of {j}", "whoever runs {j}")
RELATION_PHRASES = {"partner": "{p}'s partner", "manager": "{p}'s manager"}
# Targets of a multi-hop question: kinds whose question reads well with a phrase.
HOP_TARGETS = ("city", "employer", "pet", "allergy", "instrument", "sport", "language")

# Musings: what someone says about the same kind of thing that is not the answer.
# "{x}" is another value of the kind; self forms, then forms about "{p}".
MUSINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "city": (
        (
            "Sometimes I dream of packing it all in and moving to {x}.",
            "Spent the whole evening looking at flats in {x} online, just for fun.",
            "If I ever leave, it'll be for {x}, the food alone!",
        ),
        ("{p} keeps talking about moving to {x} one day.", "{p} was browsing flats in {x} again."),
    ),
    "employer": (
        (
            "{x} keeps sending me recruiter emails, not interested.",
            "Had coffee with someone from {x}, nice people but no thanks.",
        ),
        ("{p} turned down an interview with {x}.", "A recruiter from {x} keeps calling {p}."),
    ),
    "pet": (
        (
            "Minding the neighbours' {s} this weekend, it's called {x} and it's a menace.",
            "Saw a {s} called {x} at the shelter, so tempting.",
        ),
        ("{p} is minding a friend's {s} called {x} this week.",),
    ),
    "allergy": (
        (
            "I used to eat {x} all the time as a kid.",
            "The canteen labels {x} on everything now, very handy for some people.",
        ),
        ("{p} says the canteen's {x} dish is the best thing on the menu.",),
    ),
    "instrument": (
        (
            "I always wanted to learn the {x}, maybe one day.",
            "Went to a {x} concert last night, amazing.",
        ),
        ("{p} went to a {x} recital last night.",),
    ),
    "sport": (
        ("Watched the {x} final on TV, what a game.", "Tried {x} once, never again."),
        ("{p} was watching {x} highlights all through lunch.",),
    ),
    "language": (
        (
            "{x} sounds beautiful, but I'd never manage the grammar.",
            "Found an old {x} phrasebook in the attic.",
        ),
        ("{p} was trying to read a {x} menu, hilarious.",),
    ),
    "car": (
        ("Test drove a {x} for fun, not buying though.", "Rented a {x} for the weekend trip."),
        ("{p} rented a {x} for the weekend.",),
    ),
}

# -- small talk -------------------------------------------------------------------------
# Shares words with the statements and the questions on purpose.

FILLER = (
    "Is it just me or is the city centre packed today?",
    "Working from home today, the wifi is awful.",
    "The neighbour's dog barked all night, I'm wrecked.",
    "Who's in charge of the snack order this week?",
    "Anyone else feel like Mondays should be illegal?",
    "I need a holiday, somewhere warm with no laptop.",
    "Coffee machine on the second floor is broken again.",
    "Does anyone have a charger I can borrow?",
    "The train was cancelled so I'm stuck at the station.",
    "Made a huge pot of soup, come by if you're hungry.",
    "Thinking of repainting the living room, maybe green.",
    "Has anyone seen my blue umbrella?",
    "The landlord finally fixed the boiler.",
    "I signed up for a pottery class, don't laugh.",
    "Rain all weekend apparently, great.",
    "Who is going to the quiz on Thursday?",
    "Our team lunch got moved to Friday.",
    "That new bakery near the office is worth the queue.",
    "My phone screen cracked, third time this year.",
    "The gym was empty this morning, bliss.",
    "Can't believe it's already the end of the month.",
    "Any good podcast recommendations for the commute?",
    "The heating at work is either off or tropical.",
    "I keep forgetting to water the plants.",
    "Someone left a cake in the kitchen, no note.",
    "Practising my presentation, it's way too long.",
    "Booked a table for Saturday, eight people so far.",
    "The parking situation near the clinic is a nightmare.",
    "Does the company pay for eye tests? Asking for me.",
    "My old flat had better light than this one.",
    "I'm allergic to early meetings, to be honest.",
    "The new intern asked who runs the place, I said the cat.",
    "Our street is getting a bike lane, finally.",
    "Are we still doing the language exchange evening?",
    "Honestly the best instrument is silence after a long day.",
    "Moving boxes for free if anyone needs them.",
    "Tried the new Thai place, too spicy for me.",
    "My sister's car broke down on the motorway again.",
    "The printer is jammed and nobody knows who looks after it.",
    "I think I left the oven on. No, I didn't. Probably.",
)
FILLER_WITH = (
    "{p}, are you around later? I need a hand with something.",
    "{p} and {q} were arguing about football again.",
    "Thanks {p}, that was really helpful.",
    "{p} owes me a coffee, just saying.",
    "Did {q} say whether {p} is joining us?",
    "{p}'s playlist at the party was something else.",
    "{p} fixed the printer, hero of the day.",
    "{q} asked me to remind {p} about the forms.",
    "Has anyone heard from {p} today?",
    "{p}, did you see the tram strike in {c}?",
    "{p} sent a photo from the market, the cheese looks amazing.",
    "Tell {p} the meeting about {j} got pushed to Wednesday.",
    "{p} says the weather in {c} has been grim all week.",
    "Lunch with {p} was fun, we talked about {c} for an hour.",
    "I saw an ad for {o} on the bus, weird slogan.",
    "{o} is hiring again, according to {p}.",
    "Apparently {o} is opening an office in {c}.",
    "{p} recommended a restaurant in {c}, I'll report back.",
    "Did {p} ever get the slides for {j}?",
    "{p} is off sick, the flu is going around.",
    "{p} and I are thinking about a weekend in {c}.",
    "The {j} demo went fine, {p} handled the questions.",
    "Is {p} coming to the quiz or not?",
    "{p} lent me a book about the history of {c}.",
    "{p} keeps sending me videos of other people's pets.",
    "{p} thinks {o} will be bought by a bigger company.",
    "Remind me to ask {p} about the {j} budget.",
    "{p} said the flights to {c} are cheap in the autumn.",
)
REQUESTS = (
    (
        "Can you draft a note to {p} about the {j} timeline?",
        "Here's a draft: \"Hi {p}, a quick update on {j}: the review slipped by a week "
        "and the next milestone is now at the end of the month. Happy to talk it through "
        'whenever suits. Best wishes." Want me to make it shorter?',
    ),
    (
        "What's a good weekend trip from {c}?",
        "From {c} there are plenty of options: a coastal town within two hours by train, "
        "a national park for walking, or a smaller city with a good food market. If you "
        "tell me your budget I can narrow it down.",
    ),
    (
        "Remind me what I have on this week.",
        "You mentioned a dentist visit, a team lunch on Friday and the {j} review. I'd "
        "block some time on Thursday to prepare for the review.",
    ),
    (
        "Give me three dinner ideas that are quick.",
        "Try a lemon and herb pasta, a vegetable stir-fry with noodles, or baked eggs with "
        "spinach and feta. All three take under half an hour.",
    ),
    (
        "Summarise what {p} said about {o}.",
        "{p} mentioned that {o} has been growing quickly, that they're hiring in several "
        "teams and that the office is busy. Nothing more specific than that so far.",
    ),
    (
        "Can you plan a rough budget for a weekend in {c}?",
        "A rough plan for two nights in {c}: travel 80 to 150 depending on when you book, a "
        "mid-range hotel about 120 a night, meals around 40 a day each, and 30 for museums "
        "or a tour. Booking the train three weeks ahead usually saves the most. Shall I "
        "look at dates?",
    ),
    (
        "Help me write a birthday message for {p}.",
        'How about: "Happy birthday, {p}! Thanks for all the laughs this year, and for '
        'putting up with the rest of us. Hope the day is as good as you are." I can make '
        "it funnier or more formal if you like.",
    ),
    (
        "What did we decide about {j} last time?",
        "From what you told me, the {j} review slipped a week, {p} was going to share the "
        "customer feedback, and the budget question was still open. Nothing was decided "
        "about the launch date yet.",
    ),
    (
        "Suggest a few things to do with friends this weekend.",
        "A few ideas: a walk along the coast followed by lunch, a board-game evening at "
        "home, the cinema's late showing, or a cooking night where everyone brings one "
        "dish. The weather looks mixed, so an indoor backup helps.",
    ),
    (
        "Explain how to get a refund for a cancelled train.",
        "Most operators refund a cancelled train in full: keep your ticket, fill in the "
        "delay-repay or refund form on the operator's website within 28 days, and attach a "
        "photo of the ticket. The money usually arrives within two weeks.",
    ),
    (
        "How do I politely decline a meeting?",
        "Something like: \"Thanks for the invite. I can't make this one, but please send "
        "the notes and I'll follow up on anything that needs me.\" Short and friendly works.",
    ),
    (
        "Any tips for settling into a new city?",
        "Find a regular café, join one club or class, walk a different route home each "
        "week, and say yes to invitations for the first month. It gets easier quickly.",
    ),
    (
        "What should I bring to a housewarming?",
        "A plant, a bottle of something nice, or good bread and cheese are all safe. A "
        "handwritten card goes a long way too.",
    ),
)
ADDRESS = ("Sure, {}. ", "Of course, {}! ", "Good question, {}. ", "Happy to, {}. ")
ACKS = (
    "Noted, I'll remember that.",
    "Thanks for letting me know!",
    "Got it.",
    "That's good to hear.",
    "Sounds like a busy week, take care of yourself.",
    "Happy to help with anything you need.",
    "Sure thing.",
    "I'll keep that in mind for later.",
)
ECHOES = {
    "city": ("{v} is lovely, I've heard great things about it.", "Ah, {v}! Good food there."),
    "employer": ("{v} has a good reputation.", "Noted about {v}."),
    "pet": ("{v} sounds adorable.", "Give {v} a treat from me."),
    "allergy": ("I'll remember to flag {v} when suggesting recipes.",),
    "instrument": ("The {v} is a lovely instrument, stick with it!",),
    "sport": ("{v} is great exercise.",),
    "language": ("Good luck with the {v}, consistency is the key.",),
    "car": ("Enjoy the {v}!",),
    "birthday": ("I'll remind you closer to the day.",),
    "partner": ("Say hi to {v} from me!",),
    "manager": ("I hope it goes well with {v}.",),
    "lead": ("{j} is in good hands then.",),
}
NEWSLETTER_LINES = (
    "Community notes: the {c} farmers' market moves to the square on Sundays.",
    "{o} announced a new sustainability report this quarter.",
    "Travel: rail works between {c} and {c2} will cause delays on weekends.",
    "Reader question: how do you choose a neighbourhood when you move to {c}?",
    "Pets corner: adoption days at the {c} shelter are every first Saturday.",
    "Health: allergy season is early this year, pollen counts are high in {c}.",
    "Culture: the {c} orchestra is recruiting amateur musicians for the winter concert.",
    "Sport: the {c} amateur leagues open registration next week.",
    "Business: {o} and {o2} are in talks about a joint venture.",
    "Language cafés meet on Wednesdays in {c}, all levels welcome.",
    "Motoring: electric car grants have been extended until the end of the year.",
    "Jobs: {o} is expanding its team in {c} and is hiring engineers and analysts.",
)
MEETING_LINES = (
    "Budget review moved to Thursday; finance needs the numbers by Tuesday.",
    "Ops: rotate the on-call schedule, {p} to draft it.",
    "{j}: demo went well, two follow-ups on performance.",
    "Hiring: two interviews this week for the analyst role.",
    "Facilities: the third-floor meeting room is closed for repairs.",
    "{j}: risk register updated, nothing new at the top.",
    "Retro actions: shorter stand-ups, written updates on Fridays.",
    "Travel freeze lifted for client visits only.",
    "{p} to share the customer feedback summary before Monday.",
    "Security training due by the end of the month for everyone.",
)
CALENDAR_FILLER = (
    "{d} 09:00 — team stand-up",
    "{d} 12:30 — lunch with {p}",
    "{d} 15:00 — {j} review",
    "{d} 18:30 — book club",
    "{d} 10:00 — quarterly planning",
    "{d} 16:00 — call with {o}",
)


# -- the world --------------------------------------------------------------------------


@dataclass
class Event:
    """One thing said that a question can ask about."""

    kind: str  # a KINDS key, or "lead"
    person: str  # who it is about
    value: str
    session: int
    step: int = 0  # 0: the only or first value; 1: the value it changed to
    extra: dict[str, str] = field(default_factory=dict)
    message_id: str | None = None
    date: str | None = None


@dataclass
class World:
    speakers: list[str]
    others: list[str]
    cities: list[str]
    orgs: list[str]
    projects: list[str]
    events: list[Event] = field(default_factory=list)
    musings: list[tuple[int, Event]] = field(default_factory=list)

    @property
    def people(self) -> list[str]:
        return self.speakers + self.others

    def of(self, kind: str, person: str | None = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (person is None or e.person == person)]


def _orgs(rng: random.Random, n: int) -> list[str]:
    words = rng.sample(ORG_WORDS, n)
    return [f"{w} {rng.choice(ORG_KINDS)}" for w in words]


def make_world(rng: random.Random) -> World:
    n_speakers = rng.choice((3, 4))
    names = rng.sample(FIRST_NAMES, n_speakers + 5)
    world = World(
        speakers=names[:n_speakers],
        others=names[n_speakers:],
        cities=rng.sample(CITIES, 10),
        orgs=_orgs(rng, 7),
        projects=[f"Project {w}" for w in rng.sample(PROJECT_WORDS, 4)],
    )
    people = world.people
    late = SESSIONS - 1

    def changing(kind: str, person: str, pool: Sequence[str], change: bool) -> None:
        first, second = rng.sample(list(pool), 2)
        start = rng.randint(0, 5)
        world.events.append(Event(kind, person, first, start))
        if change:
            world.events.append(Event(kind, person, second, rng.randint(start + 3, late), 1))

    for person in people:
        changing("city", person, world.cities, rng.random() < 0.45)
        changing("employer", person, world.orgs, rng.random() < 0.35)
        if rng.random() < 0.35:
            changing("car", person, CARS, rng.random() < 0.6)
    for kind, pool, share in (
        ("allergy", ALLERGENS, 0.45),
        ("instrument", INSTRUMENTS, 0.4),
        ("sport", SPORTS, 0.4),
        ("language", LANGUAGES, 0.4),
    ):
        for person in rng.sample(people, round(len(people) * share)):
            world.events.append(Event(kind, person, rng.choice(pool), rng.randint(0, late)))
    for person in rng.sample(people, 5):
        species, pet_names = rng.choice(PETS)
        world.events.append(
            Event("pet", person, rng.choice(pet_names), rng.randint(0, late), extra={"s": species})
        )
    for person in rng.sample(people, 4):
        day = f"{rng.randint(1, 28)} {rng.choice(MONTHS)}"
        world.events.append(Event("birthday", person, day, rng.randint(0, late)))
    # Partners: speakers' partners are among the people talked about.
    free = world.others[:]
    rng.shuffle(free)
    for person in world.speakers:
        if free and rng.random() < 0.8:
            world.events.append(Event("partner", person, free.pop(), rng.randint(0, 9)))
    for person in rng.sample(people, 4):
        boss = rng.choice([p for p in people if p != person])
        world.events.append(Event("manager", person, boss, rng.randint(0, 10)))
    # Project leads; some are handed over later.
    for project in world.projects:
        first, second = rng.sample(people, 2)
        start = rng.randint(0, 6)
        world.events.append(Event("lead", first, project, start))
        if rng.random() < 0.4:
            world.events.append(Event("lead", second, project, rng.randint(start + 3, late), 1))
    # Appointments (calendar) and trips (booking e-mails).
    for person in rng.sample(people, 4):
        label, clinics, _ = rng.choice(APPOINTMENTS)
        world.events.append(
            Event(
                "appointment",
                person,
                "",
                rng.randint(0, late),
                extra={"label": label, "clinic": rng.choice(clinics)},
            )
        )
    for person in rng.sample(people, 3):
        world.events.append(Event("trip", person, rng.choice(CITIES), rng.randint(0, late)))
    # Musings: the same person, the same kind of thing, but not the answer.
    for event in world.events:
        if event.kind in MUSINGS:
            for _ in range(rng.choice((0, 1, 1, 2))):
                world.musings.append((rng.randint(0, late), event))
    return world


# -- writing the conversation -----------------------------------------------------------


def _cap(text: str) -> str:
    return text[0].upper() + text[1:] if text else text


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


class Writer:
    """Turns a world into sessions of messages, and remembers which message said what."""

    def __init__(self, rng: random.Random, world: World, start: datetime) -> None:
        self.rng = rng
        self.world = world
        self.start = start
        self.messages: list[dict[str, Any]] = []
        self.facts: list[dict[str, Any]] = []
        self.session_dates: list[datetime] = []
        self.counts: dict[int, int] = {}

    # small pieces of text

    def _filler(self) -> str:
        rng, w = self.rng, self.world
        if rng.random() < 0.35:
            return rng.choice(FILLER)
        p, q = rng.sample(w.people, 2)
        return _fill(
            rng.choice(FILLER_WITH),
            p=p,
            q=q,
            c=rng.choice(w.cities),
            o=rng.choice(w.orgs),
            j=rng.choice(w.projects),
        )

    def _distractor(self, event: Event) -> str | None:
        """Someone else's similar statement: shares the words, not the person."""
        kind = KINDS.get(event.kind)
        if kind is None:
            return None
        rng, w = self.rng, self.world
        outsider = rng.choice(OUTSIDERS)
        strangers = [n for n in FIRST_NAMES if n not in w.people]
        pools: dict[str, Callable[[], str]] = {
            "city": lambda: rng.choice([event.value, *w.cities]),
            "employer": lambda: rng.choice([event.value, *w.orgs]),
            "pet": lambda: rng.choice(rng.choice(PETS)[1]),
            "allergy": lambda: rng.choice(ALLERGENS),
            "instrument": lambda: rng.choice(INSTRUMENTS),
            "sport": lambda: rng.choice(SPORTS),
            "language": lambda: rng.choice(LANGUAGES),
            "car": lambda: rng.choice(CARS),
            "birthday": lambda: f"{rng.randint(1, 28)} {rng.choice(MONTHS)}",
            "partner": lambda: rng.choice(strangers),
            "manager": lambda: rng.choice(strangers),
        }
        forms = kind.other_forms + kind.first_other
        text = _fill(
            rng.choice(forms),
            p=outsider,
            v=pools[kind.name](),
            s=rng.choice(PETS)[0],
        )
        return _cap(text)

    def _musing(self, event: Event, speaker: str) -> str:
        rng = self.rng
        taken = {e.value for e in self.world.of(event.kind, event.person)}
        pools: dict[str, Sequence[str]] = {
            "city": CITIES,
            "employer": self.world.orgs,
            "pet": rng.choice(PETS)[1],
            "allergy": ALLERGENS,
            "instrument": INSTRUMENTS,
            "sport": SPORTS,
            "language": LANGUAGES,
            "car": CARS,
        }
        x = rng.choice([v for v in pools[event.kind] if v not in taken])
        self_forms, other_forms = MUSINGS[event.kind]
        forms = self_forms if speaker == event.person else other_forms
        return _cap(_fill(rng.choice(forms), p=event.person, x=x, s=rng.choice(PETS)[0]))

    def _statement(self, event: Event, speaker: str | None) -> str:
        """How `speaker` says the event (a self form when it is about them)."""
        rng = self.rng
        if event.kind == "lead":
            return _fill(rng.choice(LEAD_CHAT), p=event.person, j=event.value)
        kind = KINDS[event.kind]
        first = event.step == 0 and bool(kind.first_self)
        if speaker == event.person:
            forms = kind.first_self if first else kind.self_forms
        else:
            forms = kind.first_other if first else kind.other_forms
        return _cap(_fill(rng.choice(forms), p=event.person, v=event.value, **event.extra))

    # messages

    def _add(
        self,
        session: int,
        role: str,
        content: str,
        moment: datetime,
        speaker: str | None = None,
        source: str | None = None,
    ) -> str:
        self.counts[session] = self.counts.get(session, 0) + 1
        message_id = f"s{session + 1}-m{self.counts[session]}"
        message: dict[str, Any] = {"id": message_id, "role": role}
        if speaker:
            message["speaker"] = speaker
        message["content"] = content
        message["occurred_at"] = moment.isoformat().replace("+00:00", "Z")
        message["source"] = source or f"session-{session + 1}"
        self.messages.append(message)
        return message_id

    def _document(self, session: int, day: datetime, events: list[Event]) -> tuple[str, str]:
        """A tool document: meeting notes, a calendar export, a booking or a newsletter;
        the events it carries are written into it among filler lines."""
        rng, w = self.rng, self.world

        def pick(**extra: str) -> dict[str, str]:
            values = {
                "p": rng.choice(w.people),
                "c": rng.choice(w.cities),
                "c2": rng.choice(w.cities),
                "o": rng.choice(w.orgs),
                "o2": rng.choice(w.orgs),
                "j": rng.choice(w.projects),
                "d": (day + timedelta(days=rng.randint(1, 12))).strftime("%a %d %b"),
            }
            values.update(extra)
            return values

        kinds = {e.kind for e in events}
        if "trip" in kinds:
            e = next(e for e in events if e.kind == "trip")
            when = day + timedelta(days=rng.randint(10, 40))
            code = f"{rng.choice('AEFIKLR')}{rng.choice('BLRTXY')}{rng.randint(100, 999)}"
            lines = [
                "Booking confirmation",
                f"Reference: {rng.randint(100000, 999999)}",
                f"Passenger: {e.person}",
                f"Flight {code}, departing {when.strftime('%d %B %Y')} at "
                f"{rng.randint(6, 20):02d}:{rng.choice(('05', '20', '35', '50'))}",
                f"Arrival: {e.value}",
                "Baggage: one cabin bag, one checked bag up to 23 kg.",
                "Check-in opens 24 hours before departure. Bring a valid photo ID.",
                "Changes can be made online up to three hours before departure, fees apply.",
            ]
            e.extra["answer"] = f"{e.value} ({when.strftime('%d %B %Y')})"
            return "\n".join(lines), f"email/booking-{rng.randint(1000, 9999)}.eml"
        if "appointment" in kinds:
            lines = [f"Calendar export, week of {day.strftime('%d %B %Y')}"]
            fill = [_fill(rng.choice(CALENDAR_FILLER), **pick()) for _ in range(rng.randint(4, 7))]
            for e in events:
                if e.kind != "appointment":
                    continue
                slot = day + timedelta(days=rng.randint(1, 12))
                time_ = f"{rng.randint(8, 17):02d}:{rng.choice(('00', '15', '30', '45'))}"
                label, clinic = e.extra["label"], e.extra["clinic"]
                fill.append(f"{slot.strftime('%a %d %b')} {time_} — {e.person}: {label}, {clinic}")
                e.extra["answer"] = f"{slot.strftime('%d %B %Y')} at {time_}"
            rng.shuffle(fill)
            return "\n".join(lines + fill), f"calendar/{day.strftime('%Y-%m')}.ics"
        if "lead" in kinds or (not kinds and rng.random() < 0.5):
            lines = [f"Meeting notes — {day.strftime('%d %B %Y')}", "Attendees: " + ", ".join(
                rng.sample(w.people, 5)
            )]  # fmt: skip
            items = [_fill(rng.choice(MEETING_LINES), **pick()) for _ in range(rng.randint(5, 8))]
            for e in events:
                if e.kind == "lead":
                    items.append(_fill(rng.choice(LEAD_NOTES), p=e.person, j=e.value))
            rng.shuffle(items)
            lines += [f"- {item}" for item in items]
            return "\n".join(lines), f"docs/meeting-notes-{session + 1}.md"
        lines = [f"The {rng.choice(w.cities)} Weekly — {day.strftime('%d %B %Y')}"]
        lines += [_fill(rng.choice(NEWSLETTER_LINES), **pick()) for _ in range(rng.randint(8, 12))]
        return "\n\n".join(lines), f"docs/newsletter-{session + 1}.md"

    def write_session(self, session: int, day: datetime) -> None:
        rng, w = self.rng, self.world
        events = [e for e in w.events if e.session == session]
        in_document = [
            e
            for e in events
            if e.kind in ("appointment", "trip") or (e.kind == "lead" and rng.random() < 0.5)
        ]
        in_chat = [e for e in events if e not in in_document]
        target = rng.randint(*MESSAGES_PER_SESSION)
        present = rng.sample(w.speakers, rng.randint(2, len(w.speakers)))
        # Plan the chat: statements at random places among small talk and requests.
        plan: list[tuple[str, Any]] = [("event", e) for e in in_chat]
        for e in in_chat:
            if rng.random() < 0.5:
                plan.append(("distractor", e))
        plan += [("musing", e) for when, e in w.musings if when == session]
        # Documents: a booking e-mail per trip, one calendar export for the
        # appointments, one set of meeting notes for the leads; sometimes one more
        # (notes or a newsletter) that carries nothing asked about.
        groups: list[list[Event]] = [[e] for e in in_document if e.kind == "trip"]
        for kind in ("appointment", "lead"):
            group = [e for e in in_document if e.kind == kind]
            if group:
                groups.append(group)
        if rng.random() < 0.4:
            groups.append([])
        plan += [("document", group) for group in groups]
        while len(plan) < target * 0.7:
            plan.append(("request", None) if rng.random() < 0.2 else ("filler", None))
        rng.shuffle(plan)
        moment = day
        for what, event in plan:
            moment += timedelta(minutes=rng.randint(1, 9))
            if what == "document":
                text, source = self._document(session, moment, event)
                message_id = self._add(session, "tool", text, moment, source=source)
                for e in event:
                    e.message_id, e.date = message_id, moment.date().isoformat()
                continue
            if what == "event":
                others = [p for p in present if p not in (event.person, event.value)] or present
                speaker = rng.choice(others)
                if event.kind in KINDS and event.person in w.speakers and rng.random() < 0.7:
                    speaker = event.person  # people mostly speak about themselves
                text = self._statement(event, speaker)
                message_id = self._add(session, "user", text, moment, speaker)
                event.message_id, event.date = message_id, moment.date().isoformat()
                if rng.random() < 0.7:
                    moment += timedelta(minutes=1)
                    echo = rng.choice(ECHOES.get(event.kind, ACKS))
                    self._add(
                        session, "assistant", _fill(echo, v=event.value, j=event.value), moment
                    )
                continue
            speaker = rng.choice(present)
            if what == "musing":
                if event.person in present and rng.random() < 0.7:
                    speaker = event.person
                text = self._musing(event, speaker)
            elif what == "distractor":
                text = self._distractor(event) or self._filler()
            elif what == "request":
                ask, answer = rng.choice(REQUESTS)
                values = {
                    "p": rng.choice(w.people),
                    "c": rng.choice(w.cities),
                    "o": rng.choice(w.orgs),
                    "j": rng.choice(w.projects),
                }
                self._add(session, "user", _fill(ask, **values), moment, speaker)
                moment += timedelta(minutes=1)
                reply = _fill(answer, **values)
                if rng.random() < 0.6:
                    reply = rng.choice(ADDRESS).format(speaker) + reply
                self._add(session, "assistant", reply, moment)
                continue
            else:
                text = " ".join(self._filler() for _ in range(rng.choice((1, 1, 2, 2, 3))))
            self._add(session, "user", text, moment, speaker)
            if rng.random() < 0.3:
                moment += timedelta(minutes=1)
                self._add(session, "assistant", rng.choice(ACKS), moment)

    def write(self) -> None:
        day = self.start
        for session in range(SESSIONS):
            day += timedelta(days=self.rng.randint(14, 30))
            moment = day.replace(hour=self.rng.randint(8, 20), minute=self.rng.randint(0, 59))
            self.session_dates.append(moment)
            self.write_session(session, moment)
        for e in self.world.events:
            if e.message_id is None:
                raise AssertionError(f"event not written: {e}")


# -- facts and questions ----------------------------------------------------------------


def make_facts(rng: random.Random, world: World, messages: list[dict[str, Any]]) -> list[dict]:
    roles = {m["id"]: m["role"] for m in messages}
    facts: list[dict[str, Any]] = []
    for e in world.events:
        if e.kind in ("appointment", "trip") or rng.random() > FACT_SHARE:
            continue
        if e.kind == "lead":
            fact = {"subject": e.person, "predicate": "leads", "object": e.value}
        else:
            kind = KINDS[e.kind]
            value = f"{e.extra['s']} named {e.value}" if e.kind == "pet" else e.value
            fact = {"subject": e.person, "predicate": kind.predicate, "object": value}
            if kind.object_kind == "value":
                fact["object_kind"] = "value"
        fact["source_role"] = roles[e.message_id]
        fact["message_id"] = e.message_id
        facts.append(fact)
    return facts


@dataclass
class QuestionMaker:
    rng: random.Random
    world: World
    conversation: str
    questions: list[dict[str, Any]] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)

    def add(self, text: str, answer: str, evidence: list[str], category: str) -> bool:
        if text in self.asked:
            return False
        self.asked.add(text)
        self.questions.append(
            {
                "id": f"{self.conversation}-q{len(self.questions) + 1}",
                "question": text,
                "answer": answer,
                "evidence": evidence,
                "category": category,
            }
        )
        return True

    def current(self, kind: str, person: str) -> Event | None:
        events = self.world.of(kind, person)
        return max(events, key=lambda e: e.step) if events else None

    def single_hop(self, count: int) -> None:
        rng, w = self.rng, self.world
        pool = [
            e
            for e in w.events
            if e.kind not in ("city", "employer", "car") or len(w.of(e.kind, e.person)) == 1
        ]
        rng.shuffle(pool)
        made = 0
        for e in pool:
            if made >= count:
                break
            if e.kind == "lead":
                if len([x for x in w.of("lead") if x.value == e.value]) > 1:
                    continue
                text = rng.choice(LEAD_QUESTIONS).format(j=e.value)
                answer = e.person
            elif e.kind == "appointment":
                text = f"When is {e.person} {_appointment_phrase(e)}?"
                answer = e.extra["answer"]
            elif e.kind == "trip":
                text = f"Where is {e.person} flying to next?"
                answer = e.extra["answer"]
            else:
                if len(w.of(e.kind, e.person)) > 1:
                    continue
                text = rng.choice(KINDS[e.kind].questions).format(p=e.person)
                answer = e.value
            made += self.add(text, answer, [e.message_id], "single-hop")

    def multi_hop(self, count: int) -> None:
        rng, w = self.rng, self.world
        links: list[tuple[str, str, Event]] = []  # (phrase, person, link event)
        for project in w.projects:
            leads = [e for e in w.of("lead") if e.value == project]
            if len(leads) == 1:
                phrase = rng.choice(LEAD_PHRASES).format(j=project)
                links.append((phrase, leads[0].person, leads[0]))
        for kind in ("partner", "manager"):
            for e in w.of(kind):
                links.append((RELATION_PHRASES[kind].format(p=e.person), e.value, e))
        rng.shuffle(links)
        made = 0
        for phrase, person, link in links * 2:
            if made >= count:
                break
            targets = [k for k in HOP_TARGETS if self.current(k, person)]
            if not targets:
                continue
            target = self.current(rng.choice(targets), person)
            assert target is not None
            text = rng.choice(KINDS[target.kind].questions).format(p=phrase)
            made += self.add(
                _cap(text), target.value, [link.message_id, target.message_id], "multi-hop"
            )

    def temporal(self, count: int) -> None:
        rng, w = self.rng, self.world
        changes = [e for e in w.events if e.step == 1]
        rng.shuffle(changes)
        made = 0
        for e in changes * 3:
            if made >= count:
                break
            if e.kind == "lead":
                first = next(x for x in w.of("lead") if x.value == e.value and x.step == 0)
                shape = rng.choice(("before", "current"))
                if shape == "before":
                    text = rng.choice(LEAD_BEFORE).format(j=e.value, p2=e.person)
                    made += self.add(
                        text, first.person, [first.message_id, e.message_id], "temporal"
                    )
                else:
                    text = rng.choice(LEAD_QUESTIONS).format(j=e.value)
                    made += self.add(text, e.person, [e.message_id], "temporal")
                continue
            kind = KINDS[e.kind]
            first = next(x for x in w.of(e.kind, e.person) if x.step == 0)
            shapes = ["before", "current"] + (["when"] if kind.when else [])
            shape = rng.choice(shapes)
            if shape == "before":
                text = rng.choice(kind.before).format(p=e.person, v2=e.value)
                made += self.add(text, first.value, [first.message_id, e.message_id], "temporal")
            elif shape == "current":
                text = rng.choice(kind.questions).format(p=e.person)
                made += self.add(text, e.value, [e.message_id], "temporal")
            else:
                text = rng.choice(kind.when).format(p=e.person, v=e.value)
                made += self.add(text, e.date or "", [e.message_id], "temporal")

    def adversarial(self, count: int) -> None:
        rng, w = self.rng, self.world
        made = 0
        tries = 0
        strangers = [n for n in FIRST_NAMES if n not in w.people]
        while made < count and tries < 200:
            tries += 1
            kind = rng.choice(("pet", "allergy", "instrument", "sport", "language", "car"))
            if rng.random() < 0.25:
                person = rng.choice(strangers)  # never mentioned at all
            else:
                lacking = [p for p in w.people if not w.of(kind, p)]
                if not lacking:
                    continue
                person = rng.choice(lacking)
            text = rng.choice(KINDS[kind].questions).format(p=person)
            made += self.add(text, "", [], "adversarial")


def _appointment_phrase(event: Event) -> str:
    for label, _, phrase in APPOINTMENTS:
        if label == event.extra["label"]:
            return phrase
    raise KeyError(event.extra["label"])


# -- the dataset ------------------------------------------------------------------------


def make_conversation(seed: int, index: int, with_facts: bool) -> dict[str, Any]:
    rng = random.Random(f"{seed}:{index}")
    world = make_world(rng)
    start = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=7 * index)
    writer = Writer(rng, world, start)
    writer.write()
    cid = f"conv-{index + 1:02d}"
    maker = QuestionMaker(rng, world, cid)
    maker.single_hop(QUESTIONS["single-hop"])
    maker.multi_hop(QUESTIONS["multi-hop"])
    maker.temporal(QUESTIONS["temporal"])
    maker.adversarial(QUESTIONS["adversarial"])
    conversation: dict[str, Any] = {"id": cid, "messages": writer.messages}
    if with_facts:
        conversation["facts"] = make_facts(rng, world, writer.messages)
    conversation["questions"] = maker.questions
    return conversation


def make_dataset(seed: int, conversations: int = CONVERSATIONS) -> dict[str, Any]:
    return {
        "name": f"taisce-dev (seed {seed})",
        "conversations": [make_conversation(seed, i, i % 2 == 1) for i in range(conversations)],
    }


def small_slice(dataset: dict[str, Any], questions: int = 15) -> dict[str, Any]:
    """Two conversations (the first without facts, the second with), each with its first
    `questions` questions taken evenly across categories."""
    picked = []
    for conversation in dataset["conversations"][:2]:
        by_category: dict[str, list[dict[str, Any]]] = {}
        for q in conversation["questions"]:
            by_category.setdefault(q["category"], []).append(q)
        chosen: list[dict[str, Any]] = []
        while len(chosen) < questions and any(by_category.values()):
            for qs in by_category.values():
                if qs and len(chosen) < questions:
                    chosen.append(qs.pop(0))
        picked.append({**conversation, "questions": chosen})
    return {
        "name": dataset["name"].replace("taisce-dev", "taisce-dev small"),
        "conversations": picked,
    }


def dump(dataset: dict[str, Any]) -> str:
    """JSON with one message, fact or question per line: small, and readable in a diff."""
    out = [
        "{",
        f' "name": {json.dumps(dataset["name"], ensure_ascii=False)},',
        ' "conversations": [',
    ]
    for c, conversation in enumerate(dataset["conversations"]):
        out.append(f'  {{"id": {json.dumps(conversation["id"])},')
        keys = [k for k in ("messages", "facts", "questions") if k in conversation]
        for k, key in enumerate(keys):
            rows = conversation[key]
            out.append(f'   "{key}": [')
            for r, row in enumerate(rows):
                comma = "," if r < len(rows) - 1 else ""
                out.append("    " + json.dumps(row, ensure_ascii=False) + comma)
            out.append("   ]" + ("," if k < len(keys) - 1 else ""))
        out.append("  }" + ("," if c < len(dataset["conversations"]) - 1 else ""))
    out += [" ]", "}"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.make_quality_dataset",
        description="Write the development dataset of the retrieval-quality benchmark.",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("bench/data/dev.json"))
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--small", type=Path, help="also write the test slice to this file")
    args = parser.parse_args(argv)
    dataset = make_dataset(args.seed, args.conversations)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = dump(dataset)
    json.loads(text)  # the writer above must produce valid JSON
    args.out.write_text(text, encoding="utf-8")
    messages = sum(len(c["messages"]) for c in dataset["conversations"])
    questions = [q for c in dataset["conversations"] for q in c["questions"]]
    counts: dict[str, int] = {}
    for q in questions:
        counts[q["category"]] = counts.get(q["category"], 0) + 1
    print(
        f"{args.out}: {len(dataset['conversations'])} conversations, {messages} messages, "
        f"{len(questions)} questions {counts}, {len(text.encode()) / 1e6:.2f} MB",
        file=sys.stderr,
    )
    if args.small:
        args.small.parent.mkdir(parents=True, exist_ok=True)
        args.small.write_text(dump(small_slice(dataset)), encoding="utf-8")
        print(f"{args.small}: the test slice", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
